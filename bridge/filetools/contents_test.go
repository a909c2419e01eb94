package filetools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The server edits a big file from the bytes it last wrote to it, but only while the
// file is still the one it wrote: a change made in place since (same size, even) is
// read, kept by the next edit, and recorded.
func TestAKeptBigFileChangedOutsideIsReadAgain(t *testing.T) {
	root := testenv.TempDir(t)
	path := filepath.Join(root, "big.txt")
	body := strings.Repeat("filler line of the big file\n", keepFrom/28+1)
	writeFile(t, path, "first\n"+body+"last\n", 0o644)
	c := serve(t, Config{Roots: []string{root}})
	c.ok("edit_file", map[string]any{"path": path, "old_string": "first\n", "new_string": "FIRST\n"})
	// Written in place, as an editor may: same size, same inode.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("LAST\n"), int64(len("FIRST\n")+len(body))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c.ok("edit_file", map[string]any{"path": path, "old_string": "FIRST\n", "new_string": "First\n"})
	expectFile(t, path, "First\n"+body+"LAST\n", 0o644)
	c.fails("edit_file", map[string]any{"path": path, "old_string": "last\n", "new_string": "x\n"}, "not found")
	list, err := testenv.OpenStore(t, root).List(history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, e := range list.Entries {
		tools = append(tools, e.ToolName)
	}
	if strings.Join(tools, " ") != "edit_file external edit_file" {
		t.Errorf("the history holds %v, want the outside change between the two edits", tools)
	}
}

// A read answered from the server's last read of the file is right only while the
// file is unchanged: one changed in place since (same size) is read again.
func TestARepeatedReadSeesAChangeMadeInPlace(t *testing.T) {
	root := testenv.TempDir(t)
	path := filepath.Join(root, "a.txt")
	writeFile(t, path, "one\ntwo\n", 0o644)
	c := serve(t, Config{Roots: []string{root}})
	first := c.ok("read_text_file", map[string]any{"path": path})
	if again := c.ok("read_text_file", map[string]any{"path": path}); again != first {
		t.Fatalf("a second read of an unchanged file differs:\n%s\n%s", first, again)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("TWO"), 4); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := c.ok("read_text_file", map[string]any{"path": path})
	if !strings.Contains(got, "|TWO\n") || !strings.Contains(got, "file_hash: "+testenv.SHA256("one\nTWO\n")) {
		t.Fatalf("the read after the change shows:\n%s", got)
	}
}
