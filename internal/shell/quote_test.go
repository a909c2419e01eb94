package shell

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// Every word comes back from the shell as itself, and nothing in the quoted form
// acts on a terminal.
func TestQuoteRoundTripsThroughTheShell(t *testing.T) {
	words := []string{
		"a.txt", "notes $(touch PWNED).txt", "it's", "two  spaces", "", "*.go", "a;b", "`id`",
		"back\\slash", "new\nline", "tab\there", "esc\x1b]0;title\x07", "del\x7f", "c1\u009b2J",
		"ünïcödé ✓", "bad\xffutf8", "-rf", "~/x", "a\"b", "!bang", "#hash", "{a,b}",
	}
	shells := []string{"bash"}
	if _, err := exec.LookPath("sh"); err == nil {
		shells = append(shells, "sh")
	}
	for _, sh := range shells {
		if _, err := exec.LookPath(sh); err != nil {
			t.Skipf("%s not found", sh)
		}
		for _, w := range words {
			q := Quote(w)
			if sh == "sh" && strings.HasPrefix(q, "$'") {
				continue // $'…' is bash, zsh and ksh (and POSIX 2024), not dash
			}
			for _, r := range q {
				if isControl(r) || r == utf8.RuneError {
					t.Errorf("Quote(%q) = %q writes a control character raw", w, q)
				}
			}
			out, err := exec.Command(sh, "-c", "printf '%s' "+q).Output()
			if err != nil {
				t.Fatalf("%s -c printf %s: %v", sh, q, err)
			}
			if string(out) != w {
				t.Errorf("%s reads %s as %q, want %q", sh, q, out, w)
			}
		}
	}
}

func TestCommandQuotesEachWordAlone(t *testing.T) {
	got := Command("mcpdiff", "restore", "--file", "notes $(touch PWNED).txt")
	want := `mcpdiff restore --file 'notes $(touch PWNED).txt'`
	if got != want {
		t.Fatalf("Command = %s, want %s", got, want)
	}
}
