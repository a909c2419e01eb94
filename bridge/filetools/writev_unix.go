//go:build (linux || darwin) && !portable

package filetools

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// writeParts writes the parts of one message. To a file (a pipe or socket, stdout)
// that is one system call, writev, so that the reader wakes once for the whole
// message and a big text is not copied into it first.
func writeParts(out io.Writer, parts [][]byte) error {
	if f, ok := out.(*os.File); ok {
		if rc, err := f.SyscallConn(); err == nil {
			return writev(rc, parts)
		}
	}
	_, err := (*net.Buffers)(&parts).WriteTo(out)
	return err
}

func writev(rc syscall.RawConn, parts [][]byte) error {
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for len(parts) > 0 {
			n, err := unix.Writev(int(fd), parts)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				return false // a non-blocking fd that is full: wait until it takes more
			case err != nil:
				werr = err
				return true
			}
			for len(parts) > 0 && n >= len(parts[0]) { // a signal can cut a write short
				n -= len(parts[0])
				parts = parts[1:]
			}
			if len(parts) > 0 {
				parts[0] = parts[0][n:]
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}
