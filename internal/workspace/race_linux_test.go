package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A8: a folder on the path is swapped for a symlink to outside and back with
// renameat2(RENAME_EXCHANGE), so at every instant sub is one or the other, while the
// writer works through it. The checks of each operation pass while sub is a folder;
// the swap can land between check and use, and os.Root must still keep every
// byte inside.
func TestA8RaceFolderSwappedForSymlink(t *testing.T) {
	f, sub := raceFixture(t)
	if err := os.Rename(filepath.Join(f.root, "real"), sub); err != nil {
		t.Fatal(err)
	}
	swap := filepath.Join(f.root, "swap")
	symlink(t, f.outside, swap)
	exchange := func() error { return unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE) }
	if err := exchange(); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE) unsupported here: %v", err)
	}
	race(t, f, exchange)
}
