//go:build unix

package lockfile

import (
	"errors"
	"fmt"
	"syscall"
)

// CheckLivePID refuses a pid the CLI would consider dead: it deletes lock files whose
// pid is not a running process and never connects to them.
func CheckLivePID(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("ide: Options.PID is %d; it must be the editor's (live) process id", pid)
	}
	err := syscall.Kill(pid, 0)
	if err == nil || errors.Is(err, syscall.EPERM) { // EPERM: alive, owned by someone else
		return nil
	}
	return fmt.Errorf("ide: Options.PID %d is not a running process (%v); Claude Code would delete the lock file", pid, err)
}

// ProcessAlive reports whether pid is a running process, as the CLI decides whether
// a lock file is stale.
func ProcessAlive(pid int) bool { return pid > 0 && CheckLivePID(pid) == nil }
