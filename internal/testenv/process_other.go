//go:build !unix

package testenv

import "os"

// ProcessAlive tells whether pid still runs.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid) // Windows: opens the process, which fails once it is gone
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
