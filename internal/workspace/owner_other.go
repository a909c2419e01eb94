//go:build !unix

package workspace

import "io/fs"

// OwnedByMe reports whether the current user owns the file fi describes: always,
// where files have no owner uid (Windows: a folder's access list decides).
func OwnedByMe(fs.FileInfo) bool { return true }
