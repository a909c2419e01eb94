//go:build !unix

package workspace

import "io/fs"

// Umask is 0 where files have no mode creation mask (Windows).
func Umask() fs.FileMode { return 0 }
