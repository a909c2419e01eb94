//go:build !linux

package benchtab

import "errors"

var errNoProc = errors.New("memory figures are read from /proc, which only Linux has")

// StatusKB is a field of Linux's /proc/PID/status; elsewhere an error.
func StatusKB(int, string) (int, error) { return 0, errNoProc }

// TreeRSSKB is the resident memory of pid and its descendants; Linux only.
func TreeRSSKB(int) (total, own int, err error) { return 0, 0, errNoProc }
