//go:build unix

package userkey

import "syscall"

// openNoFollow opens the key file without blocking on a FIFO planted in its place, and
// without following a symlink.
const openNoFollow = syscall.O_NONBLOCK | syscall.O_NOFOLLOW | syscall.O_NOCTTY
