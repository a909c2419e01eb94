//go:build unix && (!linux || portable)

package workspace

import "io/fs"

// readUmask has no way to read the umask here without setting it (umask_unix.go).
func readUmask() (fs.FileMode, bool) { return 0, false }
