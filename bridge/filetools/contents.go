package filetools

import (
	"io/fs"
	"sync"
)

// An agent edits a big file again and again: each edit read back the bytes the one
// before had just written, 11 MB in 0.8 ms, or 4.5 ms when the memory to read into
// had to come from the kernel. The server keeps the content it last wrote to the
// few biggest files, with the stat the file got: while the file still has that
// identity (inode, size, modification time; what Tx.Verify trusts too), reading it
// takes the kept bytes. Whoever writes the file in place changes its modification
// time, and a rename changes its inode, so a file changed since is read again.
//
// Kept bytes are shared by every call that reads them: nothing may change a file's
// content in place (no tool does: each computes new bytes).

// Which files are kept: from keepFrom bytes, at most keepBytes in all.
const (
	keepFrom  = 1 << 20
	keepBytes = 24 << 20
)

// written is the content kept per file (absolute path).
type written struct {
	mu    sync.Mutex
	files map[string]keptFile
	order []string // oldest first
	bytes int
}

type keptFile struct {
	info    fs.FileInfo
	content []byte
}

// keep remembers content as the file at path, whose stat after the write is info.
func (w *written) keep(path string, info fs.FileInfo, content []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(path)
	if len(content) < keepFrom || len(content) > keepBytes || info == nil || info.Size() != int64(len(content)) {
		return
	}
	if w.files == nil {
		w.files = map[string]keptFile{}
	}
	for w.bytes+len(content) > keepBytes {
		w.forgetLocked(w.order[0])
	}
	w.files[path] = keptFile{info, content}
	w.order = append(w.order, path)
	w.bytes += len(content)
}

// has reports whether content of path is kept.
func (w *written) has(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.files[path]
	return ok
}

// content returns the kept content of path if the file is still the one written,
// as info (a stat of it now) tells.
func (w *written) content(path string, info fs.FileInfo) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k, ok := w.files[path]
	if !ok {
		return nil, false
	}
	if !sameIdentity(info, k.info) {
		w.forgetLocked(path)
		return nil, false
	}
	return k.content, true
}

func (w *written) forgetLocked(path string) {
	k, ok := w.files[path]
	if !ok {
		return
	}
	delete(w.files, path)
	w.bytes -= len(k.content)
	for i, p := range w.order {
		if p == path {
			w.order = append(w.order[:i], w.order[i+1:]...)
			break
		}
	}
}
