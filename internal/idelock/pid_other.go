//go:build !unix

package idelock

import "fmt"

// CheckPID only checks the pid is plausible where signal 0 is not available.
func CheckPID(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("ide: Options.PID is %d; it must be the editor's (live) process id", pid)
	}
	return nil
}

// Alive reports whether pid is plausible (see CheckPID).
func Alive(pid int) bool { return CheckPID(pid) == nil }
