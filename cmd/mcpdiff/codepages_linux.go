//go:build linux && !portable

package main

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dropCodePages unmaps the pages of this binary's code and read-only data that the
// process has touched so far (madvise MADV_DONTNEED on its private, read-only
// mappings of /proc/self/exe). They stay in the page cache, shared by every
// process that runs the binary, and each comes back on its next use: the resident
// set then counts the code the bridge runs between diffs, about a quarter of the
// 10 MB that start-up and a diff map (the kernel maps 64 KB around each page
// touched).
func dropCodePages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[5] != exe || strings.Contains(f[1], "w") {
			continue
		}
		start, end, ok := strings.Cut(f[0], "-")
		lo, err1 := strconv.ParseUint(start, 16, 64)
		hi, err2 := strconv.ParseUint(end, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED)
	}
}
