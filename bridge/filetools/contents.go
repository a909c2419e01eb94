package filetools

import (
	"io/fs"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// An agent edits a big file again and again: each edit read back the bytes the one
// before had just written, 11 MB in 0.8 ms, or 4.5 ms when the memory to read into
// had to come from the kernel. The server keeps the content it last wrote to the
// few biggest files, with the stat the file got: while the file still has that
// identity (workspace.Same: inode, size, modification and change time, mode; what
// Tx.Verify trusts too), reading it takes the kept bytes. Whoever writes the file
// in place changes its modification time, and a rename changes its inode, so a file
// changed since is read again. Only a settled identity is kept (workspace.Settled):
// the server gives what it writes a modification time of the fine clock, which a
// write in place, stamped by the coarse one, cannot repeat.
//
// Kept bytes are shared by every call that reads them: nothing may change a file's
// content in place (no tool does: each computes new bytes). But memory nothing
// refers to any more is reused: the new content of an 11 MB file was 11 MB of fresh
// memory per edit, which on this machine came from the kernel at up to 24 ms. A
// content that only private reads (edit_file's) ever saw becomes, once replaced by
// a private edit's content, the spare its next edit builds the new content in.

// Which files are kept: from keepFrom bytes, at most keepBytes in all (spares
// included).
const (
	keepFrom  = 1 << 20
	keepBytes = 48 << 20
)

// written is the content kept per file (absolute path).
type written struct {
	mu    sync.Mutex
	files map[string]*keptFile
	order []string // oldest first
	bytes int
}

type keptFile struct {
	info    fs.FileInfo
	content []byte
	shared  bool   // content went to a call that may still refer to it
	spare   []byte // memory of an earlier content nothing refers to
}

func (k *keptFile) size() int { return cap(k.content) + cap(k.spare) }

// keep remembers content as the file at path, whose stat after the write is info
// (kept only when settled); replaced is the content the write replaced. private says that only private reads
// saw replaced (read from the file by this call, or kept here and never shared), and
// that nothing but this keeps content: its memory becomes the spare.
func (w *written) keep(path string, info fs.FileInfo, settled bool, content, replaced []byte, private bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old, had := w.files[path]
	w.forgetLocked(path)
	if len(content) < keepFrom || len(content) > keepBytes/2 || info == nil || !settled || info.Size() != int64(len(content)) {
		return
	}
	if w.files == nil {
		w.files = map[string]*keptFile{}
	}
	k := &keptFile{info: info, content: content, shared: !private}
	if private && !(had && old.shared) && !sameMemory(replaced, content) {
		k.spare = replaced
	}
	for w.bytes+k.size() > keepBytes {
		w.forgetLocked(w.order[0])
	}
	w.files[path] = k
	w.order = append(w.order, path)
	w.bytes += k.size()
}

// has reports whether content of path is kept.
func (w *written) has(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.files[path]
	return ok
}

// content returns the kept content of path if the file is still the one written,
// as info (a stat of it now) tells. A private read (one that keeps no reference to
// it once its call is over) also takes the spare, to build its new content in.
func (w *written) content(path string, info fs.FileInfo, private bool) (content, spare []byte, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k, ok := w.files[path]
	if !ok {
		return nil, nil, false
	}
	if !workspace.Same(k.info, info) {
		w.forgetLocked(path)
		return nil, nil, false
	}
	if !private {
		k.shared = true
		return k.content, nil, true
	}
	spare, k.spare = k.spare, nil
	w.bytes -= cap(spare)
	return k.content, spare, true
}

func (w *written) forgetLocked(path string) {
	k, ok := w.files[path]
	if !ok {
		return
	}
	delete(w.files, path)
	w.bytes -= k.size()
	for i, p := range w.order {
		if p == path {
			w.order = append(w.order[:i], w.order[i+1:]...)
			break
		}
	}
}

// sameMemory reports whether a and b are slices of one array (a slice made by
// reslicing keeps its array's end): the spare must never be the kept content.
func sameMemory(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][cap(a)-1] == &b[:cap(b)][cap(b)-1]
}
