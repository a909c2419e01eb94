//go:build unix

package serve

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// Every command explains itself: `mcpdiff help CMD`, `mcpdiff CMD --help` and
// `mcpdiff CMD -h` print its usage, what it does and one line per flag, on stdout,
// with exit status 0.
func TestEveryCommandExplainsItself(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, code := cli(t, dir, "help")
	if code != 0 || !strings.Contains(out, "commands:") {
		t.Fatalf("mcpdiff help: exit %d\n%s", code, out)
	}
	flags := map[string][]string{
		"status":  {"--conv ID", "--file PATH", "--status S", "--json", "--health", "--workspace DIR"},
		"show":    {"--workspace DIR"},
		"accept":  {"--conv ID", "--file PATH", "--lines", "--force", "--json"},
		"reject":  {"--conv ID", "--with-later", "--force", "--lines"},
		"cleanup": {"--older-than AGE", "--yes"},
		"restore": {"--file PATH", "--yes"},
		"adopt":   {"--yes"},
		"serve":   {"--root", "--toolsets", "--http", "--nvim", "--max-file-size", "--fsync", "--http-header-timeout", "--http-idle-timeout", "--http-max-conns"},
		"hooks":   {"install", "uninstall", "--agent", "--scope"},
		"hook":    {"--agent NAME", "--event EVENT"},
		"version": {},
		"help":    {"COMMAND"},
		"nvim":    {},
	}
	for name, want := range flags {
		if !strings.Contains(out, "  "+name+" ") {
			t.Errorf("mcpdiff help does not list %s:\n%s", name, out)
		}
		for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}} {
			got, errOut, code := cliSplit(t, dir, args...)
			if code != 0 || errOut != "" || !strings.HasPrefix(got, "usage: mcpdiff "+name) {
				t.Fatalf("mcpdiff %s: exit %d, stderr %q\n%s", strings.Join(args, " "), code, errOut, got)
			}
			for _, w := range want {
				if !strings.Contains(got, w) {
					t.Errorf("mcpdiff %s does not explain %s:\n%s", strings.Join(args, " "), w, got)
				}
			}
		}
	}
	// Bad usage: exit 2, what was wrong, the usage and where the help is.
	for _, args := range [][]string{{"status", "--bogus"}, {"show"}, {"reject"}, {"hooks", "frob"}, {"help", "frob"}, {"frob"},
		{"serve", "--http", "0.0.0.0:8123"}, {"serve", "--http", "8123"}} {
		_, errOut, code := cliSplit(t, dir, args...)
		if code != 2 || !strings.Contains(errOut, "mcpdiff") || strings.Count(strings.TrimSpace(errOut), "\n") > 5 {
			t.Errorf("mcpdiff %s: exit %d, want 2 with a short message:\n%s", strings.Join(args, " "), code, errOut)
		}
	}
}

// status fits its rows in 100 columns for ordinary paths: short ids, the change
// counts, the tool, a shortened conversation id that the CLI takes, and the
// conversation's title cut to what is left; a filter that matches nothing says what
// it filtered.
func TestStatusRowsAreShortAndComplete(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("src/main.go", "package main\n\nfunc main() {}\n")
	conv := convOf(t, s.ok("edit_file", map[string]any{"path": "src/main.go", "old_string": "func main() {}", "new_string": "func main() {\n\tprintln(1)\n}"}))
	s.ok("create_file", map[string]any{"path": "README.md", "content": "# hi\n", "mcp_conversation_id": conv})
	out, _, code := cliSplit(t, s.dir, "status")
	if code != 0 {
		t.Fatalf("status: exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "EDIT") {
		t.Fatalf("status:\n%s", out)
	}
	for _, col := range []string{"TIME", "STATUS", "OP", "TOOL", "+/−", "CONVERSATION", "PATH"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("status has no %s column:\n%s", col, out)
		}
	}
	entries := s.entries()
	row := lines[1]
	short := strings.Fields(row)[len(strings.Fields(row))-2]
	for _, want := range []string{entries[0]["edit_id"].(string)[:8] + "  ", "edit_file", "+3 −1", "src/main.go"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	if strings.Contains(row, entries[0]["edit_id"].(string)) || !strings.HasPrefix(conv, short) || len(short) >= len(conv) {
		t.Errorf("row %q: ids should be shortened (edit %s, conversation %s as %q)", row, entries[0]["edit_id"], conv, short)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("a row of %d columns: %q", n, l)
		}
	}
	// The short conversation id works wherever an id does.
	if got, _, code := cliSplit(t, s.dir, "status", "--conv", short, "--json"); code != 0 || !strings.Contains(got, conv) {
		t.Fatalf("status --conv %s: exit %d\n%s", short, code, got)
	}
	if got, _, code := cliSplit(t, s.dir, "show", short); code != 0 || strings.Count(got, "\nedit ") != 1 ||
		!strings.Contains(got, "(conversation "+conv+", call 2, create_file, ") {
		t.Fatalf("show %s: exit %d\n%s", short, code, got)
	}
	// Filters that match nothing say so.
	got, _, _ := cliSplit(t, s.dir, "status", "--file", "src/main.go", "--status", "rejected")
	if strings.TrimSpace(got) != "no rejected edits of src/main.go" {
		t.Errorf("status of nothing: %q", got)
	}
}

// Conversation ids are abbreviated like edit ids: a prefix that starts one names it,
// one that starts several is refused listing them, one that starts none is refused
// in the same words for every command.
func TestConversationPrefixes(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "a\n")
	s.Write("b.txt", "b\n")
	c1 := convOf(t, s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": "A"}))
	c2 := convOf(t, s.ok("edit_file", map[string]any{"path": "b.txt", "old_string": "b", "new_string": "B"}))
	common := 0
	for common < len(c1) && c1[common] == c2[common] {
		common++
	}
	_, errOut, code := cliSplit(t, s.dir, "reject", "--conv", c1[:common])
	if code != 1 || !strings.Contains(errOut, c1) || !strings.Contains(errOut, c2) || !strings.Contains(errOut, "more characters") {
		t.Fatalf("an ambiguous prefix: exit %d, want 1 naming both conversations:\n%s", code, errOut)
	}
	if _, errOut, code := cliSplit(t, s.dir, "reject", "--conv", c1[:common+1]); code != 0 {
		t.Fatalf("reject --conv %s: exit %d\n%s", c1[:common+1], code, errOut)
	}
	s.expect("a.txt", "a\n")
	s.expect("b.txt", "B\n")
	var unknown []string
	for _, args := range [][]string{{"show", "conv_nope"}, {"accept", "conv_nope"}, {"reject", "--conv", "conv_nope"}, {"status", "--conv", "conv_nope"}} {
		_, errOut, code := cliSplit(t, s.dir, args...)
		if code != 1 {
			t.Fatalf("mcpdiff %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		unknown = append(unknown, errOut)
	}
	for _, u := range unknown[1:] {
		if u != unknown[0] {
			t.Errorf("an unknown id is said in different words:\n%q\n%q", unknown[0], u)
		}
	}
	var list []map[string]any
	out, _, _ := cliSplit(t, s.dir, "status", "--json")
	json.Unmarshal([]byte(out), &list)
	if len(list) != 2 {
		t.Fatalf("status --json: %s", out)
	}
}

// show numbers each change of an edit in its hunk's @@ line, [1], [2]…, as
// `reject ID:N` counts them, and marks the rejected ones; the diff still applies.
func TestShowNumbersTheChanges(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", numberedLines(30, nil))
	s.ok("write_file", map[string]any{"path": "a.txt", "content": numberedLines(30, map[int]string{3: "three\n", 5: "five\n", 25: "twenty-five\n"})})
	id := s.entries()[0]["edit_id"].(string)
	show, _, _ := cliSplit(t, s.dir, "show", id[:8])
	if !strings.Contains(show, "@@ [1] [2]\n") && !strings.Contains(show, " @@ [1] [2]\n") {
		t.Fatalf("show: the first hunk holds changes 1 and 2:\n%s", show)
	}
	if !strings.Contains(show, " @@ [3]\n") {
		t.Fatalf("show: the second hunk holds change 3:\n%s", show)
	}
	if _, errOut, code := cliSplit(t, s.dir, "reject", id[:8]+":2"); code != 0 {
		t.Fatalf("reject %s:2: %s", id[:8], errOut)
	}
	s.expect("a.txt", numberedLines(30, map[int]string{3: "three\n", 25: "twenty-five\n"}))
	show, _, _ = cliSplit(t, s.dir, "show", id[:8])
	for _, want := range []string{"changes: [1] pending, [2] rejected, [3] pending", " @@ [1] [2] rejected\n", " @@ [3]\n", "partly rejected"} {
		if !strings.Contains(show, want) {
			t.Errorf("show after rejecting change 2 lacks %q:\n%s", want, show)
		}
	}
}
