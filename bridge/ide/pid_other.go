//go:build !unix

package ide

import "fmt"

// checkLivePID only checks the pid is plausible where signal 0 is not available.
func checkLivePID(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("ide: Options.PID is %d; it must be the editor's (live) process id", pid)
	}
	return nil
}

// ProcessAlive reports whether pid is plausible (see checkLivePID).
func ProcessAlive(pid int) bool { return checkLivePID(pid) == nil }
