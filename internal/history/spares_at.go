//go:build (linux || darwin) && !portable

package history

import "golang.org/x/sys/unix"

// makeSpareAt creates an empty file or folder name in the folder open as dirfd,
// without resolving the folder's path again (os.Root would, component by component).
func makeSpareAt(dirfd int, name string, isDir bool) error {
	if isDir {
		return unix.Mkdirat(dirfd, name, 0o700)
	}
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}
