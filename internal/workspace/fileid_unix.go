//go:build unix && !portable

package workspace

import (
	"io/fs"
	"syscall"
)

// FileID is the device and inode number of the file fi describes, where the system
// has them (ok false elsewhere, and in builds with the tag portable, which run the
// code paths of systems without them).
func FileID(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true //nolint:unconvert // Dev is int32 on darwin, uint64 on linux
}
