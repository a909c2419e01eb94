//go:build unix

package serve

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// hostileNames are file names a cloned repository can hold: terminal escape sequences
// (a window title, a cleared screen, rows moved up and erased, the clipboard written
// through OSC 52), a newline that would forge a row, and a command substitution.
var hostileNames = []string{
	"title\x1b]0;owned\x07.txt",
	"clear\x1b[2J\x1b[1A\x1b[K.txt",
	"clip\x1b]52;c;cHduZWQ=\x07.txt",
	"two\nrows  pending  edit  conv_x  forged.txt",
	"notes $(touch PWNED).txt",
	"bell\a.txt",
}

// controlBytes returns the control characters of s other than newline and tab.
func controlBytes(s string) string {
	var found []string
	for _, c := range []byte(s) {
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			found = append(found, string(rune(c)))
		}
	}
	return strings.Join(found, "")
}

// Names are data: status, show and the warnings of a file changed outside mcpdiff
// print every name with its control characters escaped, one row per entry.
func TestHostileNamesAreEscaped(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, name := range hostileNames {
		s.ok("create_file", map[string]any{"path": name, "content": "one\n"})
	}
	entries := s.entries()
	if len(entries) != len(hostileNames) {
		t.Fatalf("%d entries, want %d", len(entries), len(hostileNames))
	}
	// A change made outside mcpdiff, so that status warns about the names too.
	for _, name := range hostileNames {
		if err := os.WriteFile(s.Path(name), []byte("changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out, errOut, code := cliSplit(t, s.dir, "status")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	if c := controlBytes(out + errOut); c != "" {
		t.Fatalf("status printed control characters %q:\n%s\n%s", c, out, errOut)
	}
	if rows := strings.Count(strings.TrimSpace(out), "\n") + 1; rows != len(hostileNames)+1 {
		t.Fatalf("status printed %d rows for %d entries and a header:\n%s", rows, len(hostileNames), out)
	}
	for _, want := range []string{`title\x1b]0;owned\a.txt`, `two\nrows`, "notes $(touch PWNED).txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("status does not show the name %q escaped:\n%s", want, out)
		}
	}
	if warnings := strings.Count(strings.TrimSpace(errOut), "\n") + 1; warnings != len(hostileNames) {
		t.Errorf("status printed %d warning lines for %d changed files:\n%s", warnings, len(hostileNames), errOut)
	}

	for _, e := range entries {
		out, errOut, code := cliSplit(t, s.dir, "show", e["edit_id"].(string))
		if code != 0 {
			t.Fatalf("show: exit %d\n%s", code, errOut)
		}
		if c := controlBytes(out + errOut); c != "" {
			t.Fatalf("show printed control characters %q:\n%s", c, out)
		}
	}
	// A refusal names the file as it is: escaped, not with its newline made a space.
	for _, name := range hostileNames {
		_, errOut, code := cliSplit(t, s.dir, "reject", "--file", name)
		if code != 1 || controlBytes(errOut) != "" || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("reject --file %q: exit %d, stderr %q", name, code, errOut)
		}
	}
	if _, errOut, _ := cliSplit(t, s.dir, "reject", "--file", hostileNames[3]); !strings.Contains(errOut, `two\nrows  pending`) {
		t.Errorf("the refusal does not show the name as it is: %q", errOut)
	}
	if _, err := os.Stat(s.Path("PWNED")); err == nil {
		t.Fatal("a name ran a command")
	}
}

// The fields of a planted log are data too: an edit id, operation, status or tool
// name holding escape sequences or a newline is printed escaped by show, on the
// foreign store and once it is adopted, and by the decisions taken on it.
func TestPlantedFieldsAreEscaped(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.Write("a.txt", "one\ntwo\n")
	r.entry("conv_x", map[string]any{
		"edit_id": "abcd1234\x1b]0;owned\x07\x1b[2J\nforged", "operation": "edit\x1b[2J", "status": "pending",
		"tool_name": "Edit\x1b[1A", "file_path": r.Path("a.txt"), "checkpoint": "one\n",
		"hash_before": sha("one\n"), "hash_after": sha("one\ntwo\n"), "diff": udiff.Unified("a.txt", "a.txt", []byte("one\n"), []byte("one\ntwo\n"), 3),
	})
	r.entry("conv_y", map[string]any{
		"edit_id": "efgh5678-0000-4000-8000-000000000000", "operation": "edit", "status": "weird\x1b]52;c;cHduZWQ=\x07",
		"file_path": r.Path("b.txt"), "checkpoint": "", "hash_before": sha(""), "hash_after": sha(""), "diff": "",
	})
	r.Write("b.txt", "")
	check := func(what, out, errOut string) {
		t.Helper()
		if c := controlBytes(out + errOut); c != "" || strings.Contains(out, "\nforged") {
			t.Fatalf("%s printed control characters %q:\n%s\n%s", what, c, out, errOut)
		}
	}
	for _, conv := range []string{"conv_x", "conv_y"} {
		out, errOut, _ := r.run("show", conv)
		if !strings.Contains(out, `abcd1234\x1b]0;owned\a\x1b[2J\nforged`) && conv == "conv_x" {
			t.Fatalf("show does not name the edit escaped:\n%s", out)
		}
		check("show "+conv+" of a foreign store", out, errOut)
	}
	r.adopt()
	for _, conv := range []string{"conv_x", "conv_y"} {
		out, errOut, _ := r.run("show", conv)
		check("show "+conv, out, errOut)
	}
	out, errOut, code := r.run("reject", "--conv", "conv_x")
	if code != 0 {
		t.Fatalf("reject --conv: exit %d\n%s%s", code, out, errOut)
	}
	check("reject --conv", out, errOut)
	if got := testenv.ReadFile(t, r.Path("a.txt")); got != "one\n" {
		t.Fatalf("a.txt after the reject: %q", got)
	}
	out, errOut, _ = r.run("accept", "--conv", "conv_x")
	check("accept --conv", out, errOut)
}
