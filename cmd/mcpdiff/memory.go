package main

import (
	"runtime/debug"
	"sync"
)

// A tool call on a big file allocates a few times the file's size (its bytes, the
// new content, the tagged lines of a read), all garbage once it is answered. With
// Go's default policy the collector runs when the heap has doubled and hands what
// it freed back to the kernel soon after, so the next call on that file finds its
// memory unmapped: faulting 11 MB back in took 17 ms here (a virtual machine), more
// than the edit itself. mcpdiff serve instead collects only when the heap reaches a
// limit, and keeps what it freed below it, ready for the next call. The limit also
// bounds the peak: 32 MiB, or room for three times the largest file read so far
// (the kept bytes of its last write, its new content and a read's lines) besides
// the 8 MiB the runtime holds outside the heap, whichever is larger, so that a big
// file's call is not slowed by a collector running all along.
const baseHeapLimit = 32 << 20

// heapLimit is the process's heap limit, raised as bigger files come.
type heapLimit struct {
	mu    sync.Mutex
	limit int64
}

// keepHeapWarm sets the collection policy above, for the rest of the process.
func keepHeapWarm() *heapLimit {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(baseHeapLimit)
	return &heapLimit{limit: baseHeapLimit}
}

// fileRead raises the limit to fit a file of size bytes.
func (h *heapLimit) fileRead(size int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if want := 8<<20 + 3*size; want > h.limit {
		h.limit = want
		debug.SetMemoryLimit(want)
	}
}
