//go:build portable || !unix

package workspace

import "io/fs"

// FileID is the device and inode number of the file fi describes. This build does not
// use them (Windows' os.FileInfo has neither; the tag portable runs those code paths
// on Linux too): callers fall back to comparing contents, or to os.SameFile.
func FileID(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
