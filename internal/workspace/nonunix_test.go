//go:build !unix

package workspace

import (
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv/timeouts"
)

func mkfifo(string) error { return errors.New("no FIFOs on this system") }

// deadline bounds a wait on an event that must happen promptly; it is a guard
// against a hang, never a timing assertion.
func deadline(t *testing.T) <-chan time.Time {
	t.Helper()
	return time.After(timeouts.Scaled(10 * time.Second))
}

// currentUmask is 0 where files have no umask.
func currentUmask() fs.FileMode { return 0 }
