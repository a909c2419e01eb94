// Package termsafe makes names safe to print: a file name is data, and a repository
// can hold names with terminal escape sequences (a new title, a cleared screen, rows
// erased, the clipboard written through OSC 52) or newlines (a forged row).
package termsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character written as an escape (`\n`, `\t`,
// `\x1b`, `\u202e`): C0 and C1 controls, DEL, the Unicode line and paragraph
// separators, and the bidirectional overrides that reorder what a terminal shows.
// Printable text, including non-ASCII letters and invalid UTF-8, is left as it is,
// but for a lone byte 0x80-0x9f, which a terminal in an 8-bit charset (Latin-1) reads
// as a C1 control (0x9b CSI, 0x85 a newline).
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if c := s[i]; c < 0xa0 {
				b.WriteString(`\x` + strconv.FormatUint(uint64(c), 16))
			} else {
				b.WriteByte(c)
			}
		} else if unsafe(r) {
			b.WriteString(escapeRune(r))
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// loneC1 says whether s holds a byte 0x80-0x9f outside a valid UTF-8 sequence.
func loneC1(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 && s[i] < 0xa0 {
			return true
		}
		i += size
	}
	return false
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			if c >= 0x80 {
				return strings.IndexFunc(s, unsafe) >= 0 || loneC1(s)
			}
			return true
		}
	}
	return false
}

func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

func escapeRune(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e'
	return q[1 : len(q)-1]
}
