package filetools

import (
	"fmt"
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

// The memory of a big file's earlier content is reused for a later edit_file's new
// content only when nothing refers to it any more: a read of the file in between
// (whose anchors point into the content it saw) keeps it from being reused, and
// edits that go on from that read's anchors still find their lines.
func TestReusedMemoryLeavesReadsIntact(t *testing.T) {
	root := testenv.TempDir(t)
	path := filepath.Join(root, "big.txt")
	var b strings.Builder
	for i := range keepFrom/20 + 1 {
		fmt.Fprintf(&b, "line %07d of a big file\n", i)
	}
	content := b.String()
	writeFile(t, path, content, 0o644)
	c := serve(t, Config{Roots: []string{root}})
	replace := func(old, new string) {
		t.Helper()
		c.ok("edit_file", map[string]any{"path": path, "old_string": old, "new_string": new})
		content = strings.Replace(content, old, new, 1)
		expectFile(t, path, content, 0o644)
	}
	// Lines go: the bytes after them move, so a read pointing into reused memory
	// would see other lines there, and the lines the read saw move up.
	replace("line 0000001 of a big file\n", "") // edit_file after edit_file: memory reused
	replace("line 0000002 of a big file\n", "")
	read := anchors(t, c.ok("read_text_file", map[string]any{"path": path, "start_line": 10, "end_line": 12}))
	const tenth = "line 0000011 of a big file"  // line 10, once two lines before it went
	replace("line 0000003 of a big file\n", "") // the read's content must not be reused
	replace("line 0000004 of a big file\n", "")
	replace("line 0000005 of a big file\n", "")
	c.ok("edit_text_file", map[string]any{"path": path, "operations": []any{
		map[string]any{"op": "replace", "anchor": read[tenth], "content": "TEN"}}})
	content = strings.Replace(content, tenth+"\n", "TEN\n", 1)
	expectFile(t, path, content, 0o644)
	replace("line 0000006 of a big file\n", "")
}

// The memory of the content an edit replaced becomes the spare for the file's next
// edit also when that content was read from the file (the first edit of a big file):
// otherwise the second edit takes fresh memory and, for a moment, the process holds
// three copies of the file. Memory the kept content lives in never becomes a spare.
func TestTheReplacedContentBecomesTheSpare(t *testing.T) {
	path := filepath.Join(testenv.TempDir(t), "big.txt")
	content := []byte(strings.Repeat("x", keepFrom))
	writeFile(t, path, string(content), 0o644)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		replaced  []byte
		private   bool
		wantSpare bool
	}{
		{"read from the file by a private call", make([]byte, keepFrom), true, true},
		{"seen by a read that may keep it", make([]byte, keepFrom), false, false},
		{"the kept content's own memory", content[1:], true, false},
	} {
		var w written
		w.keep(path, info, true, content, tc.replaced, tc.private)
		kept, spare, ok := w.content(path, info, true)
		if !ok || &kept[0] != &content[0] {
			t.Fatalf("%s: the written content is not kept", tc.name)
		}
		if got := spare != nil && &spare[0] == &tc.replaced[0]; got != tc.wantSpare {
			t.Errorf("%s: the replaced content is the spare: %v, want %v", tc.name, got, tc.wantSpare)
		}
	}
}
