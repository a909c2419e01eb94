//go:build !unix

package lockfile

import "fmt"

// CheckLivePID only checks the pid is plausible where signal 0 is not available.
func CheckLivePID(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("ide: Options.PID is %d; it must be the editor's (live) process id", pid)
	}
	return nil
}

// ProcessAlive reports whether pid is plausible (see CheckLivePID).
func ProcessAlive(pid int) bool { return CheckLivePID(pid) == nil }
