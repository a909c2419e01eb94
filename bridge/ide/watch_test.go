package ide

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// A write of the accepted text caught half-way is not taken for the write: the reload
// would show the truncated file and put every window's cursor on line 1. Each look()
// is one poll.
func TestWriteSeenWaitsForTheWholeWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	written := func(w *writeSeen) bool {
		_, written := w.look(false)
		return written
	}
	write("hello world\nsecond line\n")
	w := newWriteSeen(path, "hello edited\nsecond line\n")
	if written(&w) {
		t.Fatal("written before the file changed")
	}
	write("") // truncated: the client's write has begun
	if written(&w) {
		t.Fatal("a truncated file taken for the write")
	}
	write("hello edited\nsecond line\n")
	if holds, written := w.look(false); !holds || !written {
		t.Fatal("the accepted text is in the file, and the write was not seen")
	}

	// The client wrote something else (say, formatted): seen once it stays so a poll,
	// and only once.
	write("hello world\nsecond line\n")
	w = newWriteSeen(path, "hello edited\nsecond line\n")
	write("hello edited\nsecond line, formatted\n")
	if written(&w) {
		t.Fatal("another text taken for the write on the poll that first saw it")
	}
	if holds, written := w.look(false); holds || !written {
		t.Fatal("another text, unchanged for a poll, not taken for the write (or taken for the accepted text)")
	}
	if written(&w) {
		t.Fatal("one write of another text reported twice")
	}
}

// The one wait for the write also has the editor reload the file's buffers: after
// the view is closed, whether the write came before the close_tab or after it.
func TestTheWriteReloadsTheBuffersAfterTheViewCloses(t *testing.T) {
	rec, s, c := recording(t, nil)
	for _, writeFirst := range []bool{false, true} {
		path := writeFile(t, "a.txt", "a\n")
		wait := c.openShown(s, path, "b\n", tabA)
		s.Answer(tabA, true, "b\n")
		wantTexts(t, c.texts(wait()), "FILE_SAVED", "b\n")
		if writeFirst {
			testenv.WriteFile(t, path, "b\n")
			rec.waitCall(t) // the write was seen: its reload is decided by now
			select {
			case p := <-s.editor.reload:
				t.Fatalf("reloaded %s while its view was open", p)
			default:
			}
		}
		wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": tabA})()), "TAB_CLOSED")
		if !writeFirst {
			testenv.WriteFile(t, path, "b\n")
			rec.waitCall(t)
		}
		if got := testenv.Receive(t, s.editor.reload, "the reload"); got != path {
			t.Errorf("reloaded %q, want %q", got, path)
		}
	}
}
