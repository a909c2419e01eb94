package benchtab

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StatusKB is a field of /proc/PID/status that Linux gives in kB (VmRSS, VmHWM).
func StatusKB(pid int, field string) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// TreeRSSKB is the resident memory, in kB, of pid and its descendants, and of pid alone.
func TreeRSSKB(pid int) (total, own int, err error) {
	if own, err = StatusKB(pid, "VmRSS"); err != nil {
		return 0, 0, err
	}
	total = own
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			if child, err := strconv.Atoi(f); err == nil {
				if sub, _, err := TreeRSSKB(child); err == nil {
					total += sub
				}
			}
		}
	}
	return total, own, nil
}
