//go:build unix && !portable

package workspace

import (
	"io/fs"
	"syscall"
)

// fileID is the device and inode number of a file.
type fileID struct{ dev, ino uint64 }

// idOf is the identity of the file fi describes; the zero fileID when its stat has
// none (a FileInfo not made by the os package).
func idOf(fi fs.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} //nolint:unconvert // Dev is int32 on darwin, uint64 on linux
}

func (a fileID) same(b fileID) bool { return a != fileID{} && a == b }

func (a fileID) inode() (uint64, bool) { return a.ino, a != fileID{} }
