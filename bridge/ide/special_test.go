//go:build unix

package ide

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// A FIFO, or a link to a device, where openDiff expects the old file is refused at
// once: read, the FIFO would block the bridge until a writer came, and /dev/zero
// would fill its memory.
func TestOpenDiffRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo, device := filepath.Join(dir, "fifo.txt"), filepath.Join(dir, "zero.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", device); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	for _, path := range []string{fifo, device} {
		m := c.callTool("openDiff", diffArgs(path, "x", tabA))()
		wantError(t, m, -32000, "")
		if !strings.Contains(m.Error.Data.(string), "not a regular file") || !strings.Contains(m.Error.Data.(string), path) {
			t.Errorf("%s: error %+v does not say the path is not a regular file", path, *m.Error)
		}
	}
	if calls := s.editor.callLog(); len(calls) != 0 {
		t.Errorf("editor calls: %v", calls)
	}
}

// A FIFO swapped in where a diff accepted with empty text is awaited has the size of
// that text (0), yet the watch does not open it: the open would block until a writer
// came.
func TestWriteSeenDoesNotOpenAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWriteSeen(path, "")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	looked := make(chan bool)
	go func() {
		holds, _ := w.look(true)
		looked <- holds
	}()
	if holds := testenv.Receive(t, looked, "a look at the FIFO"); holds {
		t.Error("a FIFO taken for the accepted empty text")
	}
}
