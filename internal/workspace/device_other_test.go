//go:build !linux

package workspace

import "errors"

// mkCharDevice is Linux-only here (mknod's argument types differ between systems);
// callers skip.
func mkCharDevice(string) error { return errors.New("device nodes are made only on Linux") }
