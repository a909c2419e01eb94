//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package workspace

import (
	"io/fs"
	"time"
)

// changeTime is the file's inode change time (ctime): this system's stat does not
// give it, so only the modification time tells.
func changeTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }
