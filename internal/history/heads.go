package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// head is the last recorded state of one path. A file whose bytes differ from its
// head was changed outside mcpdiff.
type head struct {
	Path   string `json:"path"`
	Seq    int64  `json:"seq"`
	Exists bool   `json:"exists"`
	Hash   string `json:"hash,omitempty"`
	Forget bool   `json:"forget,omitempty"` // the path is no longer tracked (cleanup, rollback)
	// The file's identity right after mcpdiff wrote it (big files only): while it
	// still has this identity, its hash is Hash and need not be computed again.
	Ino   uint64 `json:"ino,omitempty"`
	Size  int64  `json:"size,omitempty"`
	Mtime int64  `json:"mtime,omitempty"`
}

// identity is what a head remembers of a file's stat.
// Without inode numbers (ok false) no head knows a file: its hash is computed.
func identity(fi fs.FileInfo) (ino uint64, size, mtime int64, ok bool) {
	st := workspace.StampOf(fi)
	ino, ok = st.Inode()
	if !ok {
		return 0, 0, 0, false
	}
	return ino, st.Size, st.ModNano, true
}

// knows reports whether fi is the file as it was when the head was written.
func (hd *head) knows(fi fs.FileInfo) bool {
	ino, size, mtime, ok := identity(fi)
	return ok && hd.Exists && hd.Ino != 0 && hd.Ino == ino && hd.Size == size && hd.Mtime == mtime
}

// heads is the store's index of heads: the append-only heads.log, of which this
// process keeps the lines it has read in memory. Every record appends one line
// instead of rewriting a file per path, and reading a head costs a stat of the log
// plus whatever other processes appended since. Used with the store's lock held.
type heads struct {
	mu     sync.Mutex
	synced bool // caught up during the current hold of the store's lock
	files  storeFiles
	offset int64           // bytes of the log parsed so far
	file   workspace.Stamp // the log file read, to notice it was replaced (cleanup)
	byPath map[string]head
	// localize reads a recorded path as the current workspace's (Store.localize).
	localize func(string) string
}

const headsLog = "heads.log"

func newHeads(files storeFiles) *heads {
	return &heads{files: files, byPath: map[string]head{}}
}

// get returns the head of path, or nil if it was never recorded.
func (h *heads) get(path string) (*head, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.catchUp(); err != nil {
		return nil, err
	}
	if hd, ok := h.byPath[path]; ok {
		return &hd, nil
	}
	return nil, nil
}

// put appends heads to the log.
func (h *heads) put(hs ...head) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.catchUp(); err != nil {
		return err
	}
	f, err := h.files.openFile(headsLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	n, err := f.Write(headLines(hs))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	h.offset += int64(n)
	for _, hd := range hs {
		h.apply(hd)
	}
	return nil
}

func (h *heads) apply(hd head) {
	if hd.Forget {
		delete(h.byPath, hd.Path)
	} else {
		h.byPath[hd.Path] = hd
	}
}

// release forgets that the index is current: other processes may append once the
// store's lock is released.
func (h *heads) release() {
	h.mu.Lock()
	h.synced = false
	h.mu.Unlock()
}

// catchUp parses what other processes appended since the last read, or the whole
// log if it was replaced. A torn last line (a writer killed mid-append) is cut off.
// Once per hold of the store's lock is enough: nobody else writes meanwhile.
func (h *heads) catchUp() error {
	if h.synced {
		return nil
	}
	if err := h.readNew(); err != nil {
		return err
	}
	h.synced = true
	return nil
}

func (h *heads) readNew() error {
	fi, err := h.files.root.Stat(headsLog)
	if errors.Is(err, fs.ErrNotExist) {
		h.offset, h.file, h.byPath = 0, workspace.Stamp{}, map[string]head{}
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return h.files.special(headsLog, fi.Mode())
	}
	stamp := workspace.StampOf(fi)
	if !stamp.SameObject(h.file) || fi.Size() < h.offset {
		h.offset, h.byPath = 0, map[string]head{}
	}
	h.file = stamp
	if fi.Size() == h.offset {
		return nil
	}
	f, err := h.files.openFile(headsLog, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	data := make([]byte, fi.Size()-h.offset)
	if _, err := f.ReadAt(data, h.offset); err != nil && err != io.EOF {
		return err
	}
	complete := bytes.LastIndexByte(data, '\n') + 1
	for line := range strings.SplitSeq(string(data[:complete]), "\n") {
		var hd head
		if len(line) > 0 && decodeHead(line, &hd) == nil && hd.Path != "" {
			hd.Path, hd.Hash = h.localize(strings.Clone(hd.Path)), strings.Clone(hd.Hash) // not the whole log
			h.apply(hd)
		}
	}
	h.offset += int64(complete)
	if complete < len(data) {
		return f.Truncate(h.offset) // we hold the lock: the tail is a dead writer's
	}
	return nil
}

// invalidate forgets that the index is current: a decision rewrote heads.log.
func (h *heads) invalidate() {
	h.mu.Lock()
	h.synced = false
	h.mu.Unlock()
}

// without returns the log's current content rewritten without the heads of paths,
// and its content now (nil if there is none).
func (h *heads) without(paths map[string]bool) (newLog []byte, old *[]byte, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.catchUp(); err != nil {
		return nil, nil, err
	}
	if b, err := h.files.readFile(headsLog); err == nil {
		old = &b
	}
	var buf bytes.Buffer
	for p, hd := range h.byPath {
		if paths[p] {
			continue
		}
		line, _ := json.Marshal(hd)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), old, nil
}

// lines renders heads as log lines.
func headLines(hs []head) []byte {
	var buf bytes.Buffer
	for _, hd := range hs {
		line, _ := json.Marshal(hd)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// Holds reports whether path's (absolute) last recorded state is exactly content.
// An after-event that brings no snapshot of the bytes before (Cursor's
// afterFileEdit, which follows its postToolUse of the same edit) has nothing new to
// record when the history already says the file holds what it holds now.
func (s *Store) Holds(ctx context.Context, path string, content []byte) (bool, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	h, err := s.heads.get(path)
	if err != nil || h == nil || !h.Exists {
		return false, err
	}
	return h.Hash == hashBytes(content), nil
}
