package serve

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestToolsListedPerToolset(t *testing.T) {
	t.Parallel()
	all := []string{"apply_diffs", "create_file", "delete_file", "edit_file", "edit_file_diff", "edit_text_file",
		"insert_contents", "list_files", "move_file", "read_files", "read_text_file", "search_and_replace",
		"set_workspace", "write_file", "write_files"}
	for _, tc := range []struct {
		toolsets string
		want     []string
	}{
		{"all", all},
		{"hashline", []string{"edit_text_file", "read_text_file"}},
		{"edit,hashline", []string{"create_file", "delete_file", "edit_file", "edit_file_diff", "edit_text_file", "move_file", "read_text_file", "write_file"}},
	} {
		t.Run(tc.toolsets, func(t *testing.T) {
			s := start(t, "--toolsets", tc.toolsets)
			res, err := s.c.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				if tool.Annotations.ReadOnlyHint == nil || tool.Annotations.DestructiveHint == nil || tool.Description == "" {
					t.Errorf("%s lacks annotations or a description", tool.Name)
				}
			}
			sort.Strings(names)
			if strings.Join(names, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("tools %v, want %v", names, tc.want)
			}
		})
	}
	out, code := cli(t, t.TempDir(), "serve", "--toolsets", "nope")
	if code != 2 || !strings.Contains(out, "unknown toolset") {
		t.Fatalf("bad toolset: exit %d %q", code, out)
	}
}

func TestReadTextFileTagsEveryLine(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "function hello() {\r\n  return \"world\";  \r\n}")
	out := s.ok("read_text_file", map[string]any{"path": "a.txt"})
	lines := strings.Split(out, "\n")
	if len(lines) != 4 {
		t.Fatalf("want 3 tagged lines and file_hash, got %q", out)
	}
	re := regexp.MustCompile(`^(\d+):([0-9a-f]{2})\|(.*)$`)
	for i, want := range []string{"function hello() {", "  return \"world\";  ", "}"} {
		m := re.FindStringSubmatch(lines[i])
		if m == nil || m[1] != fmt.Sprint(i+1) || m[3] != want {
			t.Fatalf("line %d = %q, want %d:hh|%s", i+1, lines[i], i+1, want)
		}
	}
	if !regexp.MustCompile(`^file_hash: [0-9a-f]{64}$`).MatchString(lines[3]) {
		t.Fatalf("last line %q", lines[3])
	}
	part := s.ok("read_text_file", map[string]any{"path": "a.txt", "start_line": 2, "end_line": 2})
	if !strings.HasPrefix(part, "2:") || strings.Count(part, "\n") != 1 {
		t.Fatalf("range read %q", part)
	}
}

func TestEditTextFileByAnchors(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "one\r\ntwo\r\nthree\r\nfour\r\n")
	read := s.ok("read_text_file", map[string]any{"path": "a.txt"})
	tag := func(n int) string { return strings.SplitN(strings.Split(read, "\n")[n-1], "|", 2)[0] }
	hash := strings.TrimPrefix(strings.Split(read, "\n")[4], "file_hash: ")
	s.ok("edit_text_file", map[string]any{"path": "a.txt", "file_hash": hash, "operations": []any{
		map[string]any{"op": "replace", "anchor": tag(2), "content": "TWO"},
		map[string]any{"op": "insert_after", "anchor": tag(4), "content": "five\nsix"},
		map[string]any{"op": "delete", "anchor": tag(1)},
	}})
	s.expect("a.txt", "TWO\r\nthree\r\nfour\r\nfive\r\nsix\r\n")

	// Stale: the file changed since that read, and the old hash is refused.
	out := s.fails("edit_text_file", map[string]any{"path": "a.txt", "file_hash": hash, "operations": []any{
		map[string]any{"op": "replace", "anchor": tag(3), "content": "x"},
	}}, "file_hash")
	if !regexp.MustCompile(`\d+:[0-9a-f]{2}\|`).MatchString(out) {
		t.Fatalf("stale error shows no current tagged lines: %q", out)
	}
	s.expect("a.txt", "TWO\r\nthree\r\nfour\r\nfive\r\nsix\r\n")
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("app.py", "def process(x): return x\ndef process(x): return x * 2\nTODO TODO\n")
	s.fails("edit_file", map[string]any{"path": "app.py", "old_string": "nothing here", "new_string": "x"}, "not found")
	s.fails("edit_file", map[string]any{"path": "app.py", "old_string": "def process(x): return x", "new_string": "y"}, "appears 2 times")
	dry := s.ok("edit_file", map[string]any{"path": "app.py", "old_string": "TODO", "new_string": "DONE", "replace_all": true, "dry_run": true})
	if !strings.Contains(dry, "-TODO TODO") || !strings.Contains(dry, "+DONE DONE") {
		t.Fatalf("dry run shows no diff: %q", dry)
	}
	s.expect("app.py", "def process(x): return x\ndef process(x): return x * 2\nTODO TODO\n")
	out := s.ok("edit_file", map[string]any{"path": "app.py", "old_string": "TODO", "new_string": "DONE", "replace_all": true})
	if !strings.HasPrefix(out, "Successfully replaced 2 occurrence(s) in app.py") {
		t.Fatalf("result %q", out)
	}
	s.expect("app.py", "def process(x): return x\ndef process(x): return x * 2\nDONE DONE\n")
}

func TestByteFidelity(t *testing.T) {
	t.Parallel()
	s := start(t)
	cases := map[string]string{
		"crlf.txt":     "a\r\nb\r\nc\r\n",
		"bom.txt":      "\xef\xbb\xbfa\nb\nc\n",
		"nofinal.txt":  "a\nb\nc",
		"mixed.txt":    "a\r\nb\nc\r\n",
		"latin1.txt":   "caf\xe9\nb\nc\n",
		"trailing.txt": "a  \nb\t\nc\n",
	}
	for name, content := range cases {
		s.Write(name, content)
		if err := os.Chmod(s.Path(name), 0o640); err != nil {
			t.Fatal(err)
		}
		s.ok("edit_file", map[string]any{"path": name, "old_string": "b", "new_string": "B\nB2"})
		want := strings.Replace(content, "b", "B\nB2", 1)
		if strings.Count(content, "\r\n") > strings.Count(content, "\n")/2 { // new line breaks follow the dominant ending
			want = strings.Replace(content, "b", "B\r\nB2", 1)
		}
		got := s.Read(name)
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
		if fi, _ := os.Stat(s.Path(name)); fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, want 0640", name, fi.Mode().Perm())
		}
	}
}

func TestCreateWriteMoveDelete(t *testing.T) {
	t.Parallel()
	s := start(t)
	first := s.ok("create_file", map[string]any{"path": "sub/dir/new.txt", "content": "hello\n"})
	conv := convOf(t, first)
	s.expect("sub/dir/new.txt", "hello\n")
	s.fails("create_file", map[string]any{"path": "sub/dir/new.txt", "content": "again", "mcp_conversation_id": conv}, "already exists")

	s.Write("crlf.txt", "\xef\xbb\xbfold\r\nlines\r\n")
	s.ok("write_file", map[string]any{"path": "crlf.txt", "content": "new\ncontent\n", "mcp_conversation_id": conv})
	s.expect("crlf.txt", "\xef\xbb\xbfnew\r\ncontent\r\n")

	s.Write("taken.txt", "mine\n")
	s.fails("move_file", map[string]any{"source": "sub/dir/new.txt", "destination": "taken.txt", "mcp_conversation_id": conv}, "already exists")
	s.expect("taken.txt", "mine\n")
	s.ok("move_file", map[string]any{"source": "sub/dir/new.txt", "destination": "moved/here.txt", "mcp_conversation_id": conv})
	s.missing("sub/dir/new.txt")
	s.expect("moved/here.txt", "hello\n")

	s.ok("delete_file", map[string]any{"path": "moved/here.txt", "mcp_conversation_id": conv})
	s.missing("moved/here.txt")
	s.fails("delete_file", map[string]any{"path": "moved/here.txt", "mcp_conversation_id": conv}, "not found")
	s.fails("delete_file", map[string]any{"path": ".", "mcp_conversation_id": conv})
	s.fails("move_file", map[string]any{"source": ".", "destination": "elsewhere", "mcp_conversation_id": conv})
}

func TestEditFileDiff(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "one\r\ntwo\r\nthree\r\nfour\r\n")
	diff := "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
	s.ok("edit_file_diff", map[string]any{"path": "a.txt", "diff": diff})
	s.expect("a.txt", "one\r\nTWO\r\nthree\r\nfour\r\n")
	bad := "@@ -1,2 +1,2 @@\n one\n-nope\n+x\n"
	s.fails("edit_file_diff", map[string]any{"path": "a.txt", "diff": bad}, "Hunk 1", `"nope"`)
	s.expect("a.txt", "one\r\nTWO\r\nthree\r\nfour\r\n")
}

func TestBatchTools(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("src/main.js", "a\nb\nc\nd\ne\n")
	s.ok("set_workspace", map[string]any{"path": "src"})
	s.fails("set_workspace", map[string]any{"path": "/"}, "outside")

	if out := s.ok("read_files", map[string]any{"path": "main.js", "line_range": "2-3"}); out != "2 | b\n3 | c" {
		t.Fatalf("read_files range: %q", out)
	}
	s.fails("read_files", map[string]any{"path": "main.js", "line_range": "1-50"}, "Line number 50 exceeds file length (5 lines)")

	out := s.ok("write_files", map[string]any{"path": []any{"x.txt", "y.txt"}, "content": []any{"1\n2", "3\n"}, "line_count": []any{2, 1}})
	if !strings.HasPrefix(out, "Successfully wrote 2 files (3 total lines):\n  - x.txt (2 lines)\n  - y.txt (1 lines)") {
		t.Fatalf("write_files: %q", out)
	}
	s.expect("src/x.txt", "1\n2")
	s.fails("write_files", map[string]any{"path": "z.txt", "content": "a\nb\nc", "line_count": 2}, "line_count mismatch")
	s.missing("src/z.txt")

	if out := s.ok("read_files", map[string]any{"path": []any{"x.txt", "y.txt"}}); out != "Successfully read 2 file(s):\n\n=== x.txt (2 lines) ===\n1 | 1\n2 | 2\n\n=== y.txt (1 lines) ===\n1 | 3" {
		t.Fatalf("read_files many: %q", out)
	}

	out = s.ok("insert_contents", map[string]any{"path": "main.js", "line": 2, "content": "inserted"})
	if !strings.HasPrefix(out, "Successfully inserted 1 line(s) at position 2 in main.js. File now has 6 lines.") {
		t.Fatalf("insert: %q", out)
	}
	s.ok("insert_contents", map[string]any{"path": "main.js", "line": 0, "content": "end"})
	s.ok("insert_contents", map[string]any{"path": "main.js", "line": -1, "content": "before last"})
	s.expect("src/main.js", "a\ninserted\nb\nc\nd\ne\nbefore last\nend\n")

	out = s.ok("apply_diffs", map[string]any{"path": "main.js", "search_content": []any{"b\nc", "e"}, "replace_content": []any{"B\nC\nC2", "E"}, "start_line": []any{3, 6}})
	if !strings.HasPrefix(out, "Batch diff operation (atomic) completed: 2/2 diffs applied successfully to main.js. File now has 9 lines.") {
		t.Fatalf("apply_diffs: %q", out)
	}
	s.expect("src/main.js", "a\ninserted\nB\nC\nC2\nd\nE\nbefore last\nend\n")
	s.fails("apply_diffs", map[string]any{"path": "main.js", "search_content": []any{"a", "missing"}, "replace_content": []any{"A", "x"}, "start_line": []any{1, 2}})
	s.expect("src/main.js", "a\ninserted\nB\nC\nC2\nd\nE\nbefore last\nend\n")

	out = s.ok("search_and_replace", map[string]any{"path": "main.js", "search": `^(\w)$`, "replace": "<$1>", "use_regex": true, "start_line": 1, "end_line": 6})
	if !strings.HasPrefix(out, "Successfully replaced 4 occurrence(s) in main.js") {
		t.Fatalf("search_and_replace: %q", out)
	}
	s.fails("search_and_replace", map[string]any{"path": "main.js", "search": "zzz", "replace": "y"})
	s.fails("search_and_replace", map[string]any{"path": "main.js", "search": "(", "replace": "y", "use_regex": true}, "regular expression")

	list := s.ok("list_files", map[string]any{"path": ".", "recursive": true})
	if list != "file: main.js\nfile: x.txt\nfile: y.txt" {
		t.Fatalf("list_files: %q", list)
	}
	s.ok("set_workspace", map[string]any{"path": s.dir})
	if list := s.ok("list_files", map[string]any{"path": "."}); strings.Contains(list, ".mcp") {
		t.Fatalf("list_files shows the history store: %q", list)
	}
}
