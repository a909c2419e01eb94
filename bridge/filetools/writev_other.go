//go:build portable || !(linux || darwin)

package filetools

import (
	"io"
	"net"
)

// writeParts writes the parts of one message, one write per part where the system
// has no writev (net.Buffers gathers them only for sockets).
func writeParts(out io.Writer, parts [][]byte) error {
	_, err := (*net.Buffers)(&parts).WriteTo(out)
	return err
}
