package filetools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// anchors maps each line text a result showed to its "N:hh" anchor.
func anchors(t *testing.T, result string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(\d+:[0-9a-f]{2})\|(.*)$`).FindAllStringSubmatch(result, -1) {
		out[m[2]] = m[1]
	}
	return out
}

func tenLines() string {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	return b.String()
}

// The version of a file the model last read stays an anchor source after two edits
// added newer versions: its anchors are relocated where their line moved, and
// refused as stale where their line changed.
func TestReadAnchorsOutliveTwoEdits(t *testing.T) {
	root := testenv.TempDir(t)
	path := filepath.Join(root, "a.txt")
	writeFile(t, path, tenLines(), 0o644)
	c := serve(t, Config{Roots: []string{root}})
	read := anchors(t, c.ok("read_text_file", map[string]any{"path": "a.txt"}))
	op := func(kind, anchor, content string) map[string]any {
		return map[string]any{"op": kind, "anchor": anchor, "content": content}
	}
	first := anchors(t, c.ok("edit_text_file", map[string]any{"path": "a.txt", "mcp_conversation_id": "conv_views",
		"operations": []any{op("insert_before", read["line 01"], "new A")}}))
	c.ok("edit_text_file", map[string]any{"path": "a.txt", "mcp_conversation_id": "conv_views",
		"operations": []any{op("insert_before", first["line 01"], "new B"), op("replace", first["line 02"], "LINE 02")}})
	// Now: new A, new B, line 01, LINE 02, line 03, ... Line 8 is "line 06"; neither
	// edit result showed "line 08" as line 8, so only the read vouches for 8:hh.
	for _, shown := range []string{"line 06", "line 07"} {
		if edit.Tag(shown) == edit.Tag("line 08") {
			t.Fatalf("tags of %q and line 08 collide; pick other texts", shown)
		}
	}
	out := c.ok("edit_text_file", map[string]any{"path": "a.txt", "mcp_conversation_id": "conv_views",
		"operations": []any{op("replace", read["line 08"], "LINE 08")}})
	if !strings.Contains(out, "moved to line 10") {
		t.Errorf("the read's anchor was not relocated: %s", out)
	}
	want := "new A\nnew B\nline 01\nLINE 02\nline 03\nline 04\nline 05\nline 06\nline 07\nLINE 08\nline 09\nline 10\n"
	expectFile(t, path, want, 0o644)

	// A line the edits changed is stale, even though the read still vouches for it.
	if edit.Tag("new B") == edit.Tag("line 02") {
		t.Fatal("tags of new B and line 02 collide; pick other texts")
	}
	c.fails("edit_text_file", map[string]any{"path": "a.txt", "mcp_conversation_id": "conv_views",
		"operations": []any{op("replace", read["line 02"], "again")}}, "stale", `"line 02"`)
	expectFile(t, path, want, 0o644)
}

// end_line past the end of the file reads to the last line; start_line past it is
// still an error, and so is read_files' line_range past it (the toolkit's error).
func TestReadTextFileClampsEndLine(t *testing.T) {
	root := testenv.TempDir(t)
	writeFile(t, filepath.Join(root, "a.txt"), tenLines(), 0o644)
	writeFile(t, filepath.Join(root, "empty.txt"), "", 0o644)
	c := serve(t, Config{Roots: []string{root}})
	out := c.ok("read_text_file", map[string]any{"path": "a.txt", "start_line": 9, "end_line": 500})
	got := anchors(t, out)
	if len(got) != 2 || got["line 09"] == "" || got["line 10"] == "" || !strings.Contains(out, "file_hash: ") {
		t.Errorf("lines 9-500 of a 10-line file: %s", out)
	}
	if out := c.ok("read_text_file", map[string]any{"path": "empty.txt", "end_line": 3}); !strings.Contains(out, "file_hash: ") {
		t.Errorf("empty file: %s", out)
	}
	c.fails("read_text_file", map[string]any{"path": "a.txt", "start_line": 11, "end_line": 20}, "start_line 11 is past the end of the file (10 lines)")
	c.fails("read_files", map[string]any{"path": "a.txt", "line_range": "9-50"}, "Line number 50 exceeds file length (10 lines)")
}

// write_file with what the file already holds (here LF text over a CRLF file, which
// write_file turns into the same CRLF bytes) rewrites nothing and records nothing.
func TestWriteFileWithTheSameContentChangesNothing(t *testing.T) {
	root := testenv.TempDir(t)
	path := filepath.Join(root, "a.txt")
	writeFile(t, path, "one\r\ntwo\r\n", 0o640)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, Config{Roots: []string{root}})
	out := c.ok("write_file", map[string]any{"path": "a.txt", "content": "one\ntwo\n", "mcp_conversation_id": "conv_same"})
	if !strings.Contains(out, "unchanged") {
		t.Errorf("result: %s", out)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("the file was rewritten")
	}
	expectFile(t, path, "one\r\ntwo\r\n", 0o640)
	if got := testenv.Entries(t, root); len(got) != 0 {
		t.Fatalf("%d history entries for a write that changed nothing", len(got))
	}

	c.ok("write_file", map[string]any{"path": "a.txt", "content": "one\nthree\n", "mcp_conversation_id": "conv_same"})
	expectFile(t, path, "one\r\nthree\r\n", 0o640)
	if got := testenv.Entries(t, root); len(got) != 1 {
		t.Fatalf("%d history entries after a real write, want 1", len(got))
	}
}

// Arguments that do not fit the schema are refused with what is wrong, what the
// argument is for, and what to do; the handler never runs.
func TestArgumentErrorsSayWhatToFix(t *testing.T) {
	root := testenv.TempDir(t)
	writeFile(t, filepath.Join(root, "a.txt"), "one\n", 0o644)
	c := serve(t, Config{Roots: []string{root}})
	c.fails("edit_file", map[string]any{"file_path": "a.txt", "old_string": "one", "new_string": "two"},
		`missing required argument "path" for edit_file. path: The file to edit.`,
		`edit_file takes no argument "file_path" (check the spelling)`,
		"Call edit_file again with these arguments fixed (required: path, old_string, new_string;")
	c.fails("read_text_file", map[string]any{"path": "a.txt", "start_line": "1"},
		`argument "start_line" of read_text_file must be an integer (a JSON number, not a string), but a string ("1") was given.`,
		"start_line: First line to show",
		"Call read_text_file again")
	c.fails("edit_text_file", map[string]any{"path": "a.txt", "operations": []any{map[string]any{"op": "swap", "anchor": "1:aa"}}},
		`argument "operations" of edit_text_file is wrong at operations[0].op: it must be one of replace, replace_range,`,
		`but a string ("swap") was given`)
	c.fails("write_files", map[string]any{"path": []any{"a.txt", 7}, "content": "x", "line_count": 1},
		`argument "path" of write_files is wrong at path[1]: it must be a string, but a number (7) was given.`)
	expectFile(t, filepath.Join(root, "a.txt"), "one\n", 0o644)
}

// One call naming a file twice (directly, as ./name, or through a symlink) would
// compute both changes from the same original and lose one: it is refused.
func TestOneFileNamedTwiceIsRefused(t *testing.T) {
	root := testenv.TempDir(t)
	writeFile(t, filepath.Join(root, "a.txt"), "one\n", 0o644)
	if err := os.Symlink("a.txt", filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	c := serve(t, Config{Roots: []string{root}})
	for _, second := range []string{"a.txt", "./a.txt", "link.txt"} {
		c.fails("insert_contents", map[string]any{"path": []any{"a.txt", second}, "line": 0, "content": []any{"X", "Y"}},
			"are the same file")
		c.fails("write_files", map[string]any{"path": []any{"a.txt", second}, "content": []any{"X\n", "Y\n"}, "line_count": []any{1, 1}},
			"are the same file")
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "one\n" {
		t.Fatalf("a.txt = %q", got)
	}
}
