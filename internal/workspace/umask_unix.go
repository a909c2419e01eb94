//go:build unix

package workspace

import (
	"io/fs"
	"sync"
	"syscall"
)

var umaskOnce = sync.OnceValue(func() fs.FileMode {
	if m, ok := readUmask(); ok {
		return m
	}
	m := syscall.Umask(0o022) // read by setting it, once, and put back at once
	syscall.Umask(m)
	return fs.FileMode(m)
})

// Umask is the process's file mode creation mask, read once.
func Umask() fs.FileMode { return umaskOnce() }
