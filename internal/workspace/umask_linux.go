//go:build linux && !portable

package workspace

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// readUmask reads the process's umask where Linux shows it, without changing it.
func readUmask() (fs.FileMode, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(m), true
			}
		}
	}
	return 0, false
}
