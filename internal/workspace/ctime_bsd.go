//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package workspace

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is the file's inode change time (ctime), when the stat has it.
func changeTime(info fs.FileInfo) (time.Time, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctimespec.Unix()), true
}
