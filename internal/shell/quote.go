// Package shell writes the commands mcpdiff suggests so that they can be pasted into
// a POSIX shell as they are: every argument quoted where the shell would read it as
// anything but itself (a space, `$(…)`, a quote, a glob), and no control character
// written raw (it would act on the terminal that shows the suggestion).
package shell

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Command joins a command's words, each quoted as Quote does.
func Command(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = Quote(w)
	}
	return strings.Join(quoted, " ")
}

// Quote returns s as one shell word: unchanged when it holds only characters no
// shell treats specially, in single quotes otherwise, and as $'…' with escapes when
// it holds control characters or invalid UTF-8 (inside single quotes they would
// reach the terminal raw, and a newline would split the suggestion).
func Quote(s string) string {
	if s != "" && strings.Trim(s, plain) == "" {
		return s
	}
	if !needsEscapes(s) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

// plain are the characters that never need quoting.
const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%"

func needsEscapes(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if isControl(r) {
			return true
		}
	}
	return false
}

// isControl reports the C0 and C1 control characters and DEL: the ones a terminal
// acts on.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)
}
