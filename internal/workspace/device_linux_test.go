package workspace

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// mkCharDevice makes a /dev/null-like device node (needs root; callers skip otherwise).
func mkCharDevice(path string) error {
	return unix.Mknod(path, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
}
