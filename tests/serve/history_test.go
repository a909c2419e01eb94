package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Every changing tool records an entry; the conversation id is handed out once and
// reused; a failed call records nothing.
func TestEveryChangeIsRecorded(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "one\ntwo\nthree\n")
	first := s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})
	conv := convOf(t, first)
	if !strings.HasPrefix(conv, "conv_") {
		t.Fatalf("conversation id %q", conv)
	}
	with := func(args map[string]any) map[string]any { args["mcp_conversation_id"] = conv; return args }
	read := s.ok("read_text_file", map[string]any{"path": "a.txt"})
	anchor := strings.SplitN(strings.Split(read, "\n")[0], "|", 2)[0]
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"edit_text_file", with(map[string]any{"path": "a.txt", "operations": []any{map[string]any{"op": "replace", "anchor": anchor, "content": "ONE"}}})},
		{"create_file", with(map[string]any{"path": "b.txt", "content": "b\n"})},
		{"write_file", with(map[string]any{"path": "b.txt", "content": "bb\n"})},
		{"edit_file_diff", with(map[string]any{"path": "b.txt", "diff": "@@ -1 +1 @@\n-bb\n+bbb\n"})},
		{"write_files", with(map[string]any{"path": []any{"c.txt", "d.txt"}, "content": "c\n", "line_count": 1})},
		{"insert_contents", with(map[string]any{"path": "c.txt", "line": 0, "content": "end"})},
		{"apply_diffs", with(map[string]any{"path": "c.txt", "search_content": "c", "replace_content": "C", "start_line": 1})},
		{"search_and_replace", with(map[string]any{"path": "c.txt", "search": "end", "replace": "END"})},
		{"move_file", with(map[string]any{"source": "d.txt", "destination": "e.txt"})},
		{"delete_file", with(map[string]any{"path": "e.txt"})},
	}
	for _, st := range steps {
		out := s.ok(st.tool, st.args)
		if strings.Contains(out, "mcp_conversation_id: ") {
			t.Fatalf("%s handed out a new conversation although one was passed: %q", st.tool, out)
		}
	}
	s.fails("edit_file", with(map[string]any{"path": "a.txt", "old_string": "nope", "new_string": "x"}))

	entries := s.entries()
	if len(entries) != 12 { // write_files recorded two
		t.Fatalf("%d entries, want 12", len(entries))
	}
	wantTools := []string{"edit_file", "edit_text_file", "create_file", "write_file", "edit_file_diff", "write_files", "write_files", "insert_contents", "apply_diffs", "search_and_replace", "move_file", "delete_file"}
	wantOps := []string{"edit", "edit", "create", "replace", "edit", "create", "create", "edit", "edit", "edit", "move", "delete"}
	for i, e := range entries {
		if e["tool_name"] != wantTools[i] || e["operation"] != wantOps[i] || e["conversation_id"] != conv || e["status"] != "pending" {
			t.Errorf("entry %d: %v %v %v %v", i, e["tool_name"], e["operation"], e["conversation_id"], e["status"])
		}
		for _, field := range []string{"edit_id", "tool_call_index", "timestamp", "file_path", "source_path", "diff_file", "checkpoint_file", "hash_before", "hash_after"} {
			if _, ok := e[field]; !ok {
				t.Errorf("entry %d has no %s", i, field)
			}
		}
		if !filepath.IsAbs(e["file_path"].(string)) {
			t.Errorf("file_path %v is not absolute", e["file_path"])
		}
	}
	if entries[5]["tool_call_index"] != entries[6]["tool_call_index"] {
		t.Error("the two files of one write_files call got different tool_call_index")
	}
	if idx := entries[11]["tool_call_index"].(float64); idx != 10 {
		t.Errorf("last tool_call_index = %v, want 10", idx)
	}
	if src, _ := entries[10]["source_path"].(string); src != s.Path("d.txt") {
		t.Errorf("move source_path = %v", entries[10]["source_path"])
	}
	// The diff of each content change applies back: spot-check one.
	diff, err := os.ReadFile(filepath.Join(s.dir, ".mcp", "edit_history", filepath.FromSlash(entries[0]["diff_file"].(string))))
	if err != nil || !strings.Contains(string(diff), "-two\n+TWO\n") {
		t.Fatalf("diff file: %q %v", diff, err)
	}
}

// Rejecting an edit through the CLI after the server made later ones keeps those.
func TestRejectThroughCLIKeepsLaterEdits(t *testing.T) {
	t.Parallel()
	s := start(t)
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, "line "+strings.Repeat("x", i%5)+string(rune('a'+i%26)))
	}
	s.Write("a.txt", strings.Join(lines, "\n")+"\n")
	conv := convOf(t, s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": lines[24], "new_string": "EDIT ONE"}))
	s.ok("insert_contents", map[string]any{"path": "a.txt", "line": 3, "content": "INSERTED\nTWO LINES", "mcp_conversation_id": conv})
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": lines[9], "new_string": "EDIT THREE", "mcp_conversation_id": conv})
	first := s.entries()[0]["edit_id"].(string)

	out, code := cli(t, s.dir, "reject", first[:8])
	if code != 0 {
		t.Fatalf("reject: %d %s", code, out)
	}
	want := append([]string{}, lines[:2]...)
	want = append(want, "INSERTED", "TWO LINES")
	want = append(want, lines[2:9]...)
	want = append(want, "EDIT THREE")
	want = append(want, lines[10:]...)
	s.expect("a.txt", strings.Join(want, "\n")+"\n")

	// And the server keeps working on top of the rebuilt file.
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "EDIT THREE", "new_string": "EDIT FOUR", "mcp_conversation_id": conv})
	out, code = cli(t, s.dir, "accept", first[:8], "--json")
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["ok"] != true {
		t.Fatalf("accept back: %d %s", code, out)
	}
	if !strings.Contains(s.Read("a.txt"), "EDIT ONE") || !strings.Contains(s.Read("a.txt"), "EDIT FOUR") {
		t.Fatalf("after accepting again: %q", s.Read("a.txt"))
	}
}

// A decision's report names each file it wrote as rebuilt, and one it took away (a
// rejected create, the source of a move put back) as removed.
func TestDecisionSaysWhichFilesItRemoved(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "a\n")
	conv := convOf(t, s.ok("create_file", map[string]any{"path": "new.txt", "content": "new\n"}))
	s.ok("move_file", map[string]any{"source": "a.txt", "destination": "b.txt", "mcp_conversation_id": conv})
	out, code := cli(t, s.dir, "reject", "--conv", conv)
	if code != 0 || !strings.Contains(out, "\nremoved new.txt\n") || !strings.Contains(out, "\nremoved b.txt\n") || !strings.Contains(out, "\nrebuilt a.txt\n") {
		t.Fatalf("reject --conv: exit %d\n%s", code, out)
	}
	// A file with no pending edit: nothing to do, said of that file.
	if out, code := cli(t, s.dir, "reject", "--file", "new.txt"); code != 0 || out != "nothing to do: new.txt has no pending edits\n" {
		t.Fatalf("reject --file of a decided file: exit %d %q", code, out)
	}
	out, code = cli(t, s.dir, "accept", "--conv", conv)
	if code != 0 || !strings.Contains(out, "\nrebuilt new.txt\n") || !strings.Contains(out, "\nremoved a.txt\n") || !strings.Contains(out, "\nrebuilt b.txt\n") {
		t.Fatalf("accept --conv: exit %d\n%s", code, out)
	}
}

// .mcp removed while the server runs: its next edit goes into a new store, the
// user's, and not into the folder that is gone.
func TestStoreRemovedWhileServing(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "1\n2\n")
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "1", "new_string": "one"})
	// The server may be refilling the store's spare files: rm -rf again until it
	// has, as a user would.
	testenv.Eventually(t, ".mcp to be removed", func() bool { return os.RemoveAll(s.Path(".mcp")) == nil })
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "2", "new_string": "two"})
	entries := s.entries()
	if len(entries) != 1 || entries[0]["status"] != "pending" {
		t.Fatalf("after .mcp was removed, the new store holds %v; want the one edit made since", entries)
	}
	if out, code := cli(t, s.dir, "status"); code != 0 || strings.Contains(out, "not yours") {
		t.Fatalf("status of the new store: exit %d\n%s", code, out)
	}
}
