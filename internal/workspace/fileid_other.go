//go:build portable || !unix

package workspace

import (
	"io/fs"
	"os"
)

// fileID is how this build tells files apart: Windows' os.FileInfo has no device and
// inode numbers, only os.SameFile knows (the tag portable runs these code paths on
// Linux too).
type fileID struct{ info fs.FileInfo }

func idOf(fi fs.FileInfo) fileID { return fileID{info: fi} }

func (a fileID) same(b fileID) bool { return os.SameFile(a.info, b.info) }

// inode is never known here: callers fall back to comparing contents.
func (fileID) inode() (uint64, bool) { return 0, false }
