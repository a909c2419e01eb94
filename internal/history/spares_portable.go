//go:build portable || !(linux || darwin)

package history

import (
	"errors"
	"os"
)

// Without a rename that refuses to replace its target, a spare could be renamed over
// a file another process just created, so this build keeps none: the store creates
// each file and folder itself (O_EXCL, os.Root), as it does when the pool is empty.
// A hard link plus unlink would not do: two processes could link one spare to two
// names, which would then share their content.
const sparesSupported = false

var errNoSpares = errors.New("this build keeps no spare files")

func renameNoReplace(*os.File, string, *os.File, string) error { return errNoSpares }

func makeSpare(*os.File, string, bool) error { return errNoSpares }
