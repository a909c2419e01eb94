//go:build unix

package testenv

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// ProcessAlive tells whether pid still runs (a zombie counts as gone).
func ProcessAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat))
	return len(fields) < 3 || fields[2] != "Z"
}
