//go:build unix

package workspace

import (
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// mkCharDevice makes a /dev/null-like device node (needs root; callers skip otherwise).
func mkCharDevice(path string) error {
	return unix.Mknod(path, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
}

// deadline bounds a wait on an event that must happen promptly; it is a guard
// against a hang, never a timing assertion.
func deadline(t *testing.T) <-chan time.Time {
	t.Helper()
	return time.After(10 * time.Second)
}
