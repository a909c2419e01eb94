//go:build unix

package serve

import (
	"os"
	"strings"
	"testing"
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
