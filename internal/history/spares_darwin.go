//go:build darwin && !portable

package history

import (
	"os"

	"golang.org/x/sys/unix"
)

const sparesSupported = true

// renameNoReplace renames from (in fromDir) to to (in toDir), failing when to exists.
func renameNoReplace(fromDir *os.File, from string, toDir *os.File, to string) error {
	return unix.RenameatxNp(int(fromDir.Fd()), from, int(toDir.Fd()), to, unix.RENAME_EXCL)
}

// makeSpare creates an empty file or folder name in dir, which must not exist.
func makeSpare(dir *os.File, name string, isDir bool) error {
	return makeSpareAt(int(dir.Fd()), name, isDir)
}
