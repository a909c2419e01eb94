package history

import (
	"fmt"
	"os"
	"testing"
)

// The tests sign their stores with a key of their own, never the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpdiff-history-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
