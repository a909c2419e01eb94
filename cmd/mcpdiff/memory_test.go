package main

import (
	"runtime/debug"
	"testing"
)

// The heap limit fits the largest file read, and never drops back.
func TestHeapLimitFitsTheLargestFile(t *testing.T) {
	gc := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(1<<63 - 1) })
	h := keepHeapWarm()
	if got := debug.SetMemoryLimit(-1); got != baseHeapLimit {
		t.Fatalf("limit %d, want %d", got, baseHeapLimit)
	}
	h.fileRead(1 << 20) // fits the base limit
	h.fileRead(20 << 20)
	h.fileRead(2 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(8<<20+3*(20<<20)); got != want {
		t.Fatalf("limit %d after a 20 MB file, want %d", got, want)
	}
}
