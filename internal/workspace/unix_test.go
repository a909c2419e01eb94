//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv/timeouts"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// deadline bounds a wait on an event that must happen promptly; it is a guard
// against a hang, never a timing assertion.
func deadline(t *testing.T) <-chan time.Time {
	t.Helper()
	return time.After(timeouts.Scaled(10 * time.Second))
}

// currentUmask reads the process umask (tests here do not run in parallel).
func currentUmask() fs.FileMode {
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	return fs.FileMode(mask)
}
