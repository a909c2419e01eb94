package termsafe

import (
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"src/main.go":                "src/main.go",
		"notes $(touch PWNED).txt":   "notes $(touch PWNED).txt", // quoting is the shell's business
		"a\nb.txt":                   `a\nb.txt`,
		"\x1b]0;owned\x07title":      `\x1b]0;owned\atitle`,
		"\x1b[2J\x1b[1A\x1b[Kerase":  `\x1b[2J\x1b[1A\x1b[Kerase`,
		"\x1b]52;c;cHduZWQ=\x07clip": `\x1b]52;c;cHduZWQ=\aclip`,
		"tab\there\r":                `tab\there\r`,
		"é ü 名前.txt":                 "é ü 名前.txt",
		"\u202egnp.exe":              `\u202egnp.exe`,
		"c1\u009bcsi":                `c1\u009bcsi`,
		"del\x7f":                    `del\x7f`,
		"bad\xffutf8":                "bad\xffutf8",
		"raw\x9b2Jcsi":               `raw\x9b2Jcsi`, // a lone byte a Latin-1 terminal reads as CSI
		"raw\x85nel":                 `raw\x85nel`,   // ... and as a newline (NEL)
		"line\u2028sep":              `line\u2028sep`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("a\x1b[2Jb\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		for i := 0; i < len(out); i++ {
			if c := out[i]; c < 0x20 || c == 0x7f {
				t.Fatalf("Escape(%q) = %q holds control byte %#x", s, out, c)
			}
		}
		for i, r := range out {
			if r == utf8.RuneError && out[i] >= 0x80 && out[i] < 0xa0 {
				t.Fatalf("Escape(%q) = %q holds the raw C1 byte %#x", s, out, out[i])
			}
			if unsafe(r) {
				t.Fatalf("Escape(%q) = %q holds %U", s, out, r)
			}
		}
	})
}
