//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// OwnedByMe reports whether the current user owns the file fi describes.
func OwnedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == syscall.Getuid()
}
