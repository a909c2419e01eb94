// Package jsonscan reads and writes JSON in one pass, without reflection, for the two
// places where mcpdiff handles megabytes of it: the history's log lines (`mcpdiff
// status` reads thousands at a time) and Claude Code's openDiff messages (whole files
// in a string). It reads strictly — whatever encoding/json would reject, or would
// change (invalid UTF-8), makes a reader return false — so callers can fall back to
// encoding/json and always get its result. Strings read are slices of the input.
package jsonscan

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Scanner reads JSON values from a string, one after the other.
type Scanner struct {
	s string
	i int
}

// New returns a Scanner over s.
func New(s string) *Scanner { return &Scanner{s: s} }

// End reports whether only whitespace is left.
func (sc *Scanner) End() bool {
	sc.space()
	return sc.i == len(sc.s)
}

// Object reads an object, calling field for each key; field must read the key's value
// (with String, Int, Null or Skip) and return false to stop with a failure.
func (sc *Scanner) Object(field func(key string) bool) bool {
	if sc.next() != '{' {
		return false
	}
	if sc.peek() == '}' {
		sc.i++
		return true
	}
	for {
		key, ok := sc.String()
		if !ok || sc.next() != ':' || !field(key) {
			return false
		}
		switch sc.next() {
		case ',':
		case '}':
			return true
		default:
			return false
		}
	}
}

// Null reads a null if one is next.
func (sc *Scanner) Null() bool { return sc.literal("null") }

// StringRaw reads a string and also returns its JSON text (quotes and escapes), which
// can be written back as it is.
func (sc *Scanner) StringRaw() (value, raw string, ok bool) {
	sc.space()
	start := sc.i
	value, ok = sc.String()
	return value, sc.s[start:sc.i], ok
}

// String reads a string.
func (sc *Scanner) String() (string, bool) {
	if sc.next() != '"' {
		return "", false
	}
	start := sc.i
	// Fast path: the closing quote found with IndexByte (vectorised), and the run
	// before it checked to be plain printable ASCII eight bytes at a time.
	if end := strings.IndexByte(sc.s[start:], '"'); end >= 0 && PlainASCII(sc.s[start:start+end]) {
		sc.i = start + end + 1
		return sc.s[start : start+end], true
	}
	ascii := true
	for sc.i < len(sc.s) {
		for sc.i < len(sc.s) && !special[sc.s[sc.i]] {
			sc.i++
		}
		if sc.i == len(sc.s) {
			break
		}
		switch c := sc.s[sc.i]; {
		case c == '"':
			s := sc.s[start:sc.i]
			sc.i++
			return s, ascii || utf8.ValidString(s)
		case c == '\\':
			return sc.escaped(start)
		case c < 0x20:
			return "", false
		default: // >= 0x80
			ascii = false
		}
		sc.i++
	}
	return "", false
}

// escaped finishes a string that holds escapes, copying the runs between them. The
// string's end is found first, so its bytes are allocated once: an openDiff's file
// is a megabyte string with an escape on every line.
func (sc *Scanner) escaped(start int) (string, bool) {
	end := sc.closingQuote(sc.i)
	if end < 0 {
		return "", false
	}
	out := make([]byte, 0, end-start) // escapes only shorten it
	out = append(out, sc.s[start:sc.i]...)
	ascii := PlainASCII(sc.s[start:sc.i])
	for sc.i < len(sc.s) {
		run := sc.i
		for sc.i+8 <= len(sc.s) && !hasSpecial(word(sc.s, sc.i)) {
			sc.i += 8
		}
		for sc.i < len(sc.s) && !special[sc.s[sc.i]] {
			sc.i++
		}
		out = append(out, sc.s[run:sc.i]...)
		if sc.i == len(sc.s) {
			break
		}
		c := sc.s[sc.i]
		switch {
		case c == '"':
			sc.i++
			// out is not used again: it becomes the string without a copy.
			return unsafe.String(unsafe.SliceData(out), len(out)), ascii || utf8.Valid(out)
		case c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
			out = append(out, c)
			sc.i++
			continue
		}
		// A backslash.
		if sc.i+1 >= len(sc.s) {
			return "", false
		}
		esc := sc.s[sc.i+1]
		sc.i += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			r, ok := sc.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if sc.i+1 >= len(sc.s) || sc.s[sc.i] != '\\' || sc.s[sc.i+1] != 'u' {
					return "", false
				}
				sc.i += 2
				r2, ok := sc.hex4()
				if !ok {
					return "", false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", false
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

// closingQuote is the index of the first quote from i on that no backslash escapes,
// or -1.
func (sc *Scanner) closingQuote(i int) int {
	for {
		j := strings.IndexByte(sc.s[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		n := 0
		for k := q - 1; k >= 0 && sc.s[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

func (sc *Scanner) hex4() (rune, bool) {
	if sc.i+4 > len(sc.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(sc.s[sc.i:sc.i+4], 16, 16)
	sc.i += 4
	return rune(n), err == nil
}

// Bool reads true or false.
func (sc *Scanner) Bool() (value, ok bool) {
	sc.space()
	if sc.literal("true") {
		return true, true
	}
	return false, sc.literal("false")
}

// Int reads an integer; a fraction or an exponent is a failure.
func (sc *Scanner) Int() (int64, bool) {
	sc.space()
	start := sc.i
	if sc.i < len(sc.s) && sc.s[sc.i] == '-' {
		sc.i++
	}
	for sc.i < len(sc.s) && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		sc.i++
	}
	n, err := strconv.ParseInt(sc.s[start:sc.i], 10, 64)
	return n, err == nil && validNumber(sc.s[start:sc.i])
}

// Uint reads an integer without a sign ("-0" is a failure, as encoding/json has it
// for an unsigned field); a fraction or an exponent is a failure.
func (sc *Scanner) Uint() (uint64, bool) {
	sc.space()
	start := sc.i
	for sc.i < len(sc.s) && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		sc.i++
	}
	n, err := strconv.ParseUint(sc.s[start:sc.i], 10, 64)
	return n, err == nil && validNumber(sc.s[start:sc.i])
}

// Skip reads any value and returns its text.
func (sc *Scanner) Skip() (string, bool) {
	c := sc.peek()
	start := sc.i
	var ok bool
	switch {
	case c == '"':
		_, ok = sc.String()
	case c == '{':
		ok = sc.Object(func(string) bool { _, ok := sc.Skip(); return ok })
	case c == '[':
		ok = sc.Array(func() bool { _, ok := sc.Skip(); return ok })
	case c == 't':
		ok = sc.literal("true")
	case c == 'f':
		ok = sc.literal("false")
	case c == 'n':
		ok = sc.Null()
	case c == '-' || (c >= '0' && c <= '9'):
		for sc.i < len(sc.s) && strings.IndexByte("+-.eE0123456789", sc.s[sc.i]) >= 0 {
			sc.i++
		}
		ok = validNumber(sc.s[start:sc.i])
	}
	return sc.s[start:sc.i], ok
}

// Array reads an array, calling elem for each element; elem must read the element
// (with String, Int, Null or Skip) and return false to stop with a failure.
func (sc *Scanner) Array(elem func() bool) bool {
	if sc.next() != '[' {
		return false
	}
	if sc.peek() == ']' {
		sc.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch sc.next() {
		case ',':
		case ']':
			return true
		default:
			return false
		}
	}
}

// validNumber checks JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

func (sc *Scanner) literal(word string) bool {
	if sc.peek() == word[0] && strings.HasPrefix(sc.s[sc.i:], word) {
		sc.i += len(word)
		return true
	}
	return false
}

func (sc *Scanner) space() {
	for sc.i < len(sc.s) && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t' || sc.s[sc.i] == '\r' || sc.s[sc.i] == '\n') {
		sc.i++
	}
}

func (sc *Scanner) peek() byte {
	sc.space()
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

func (sc *Scanner) next() byte {
	c := sc.peek()
	if sc.i < len(sc.s) {
		sc.i++
	}
	return c
}

// special marks the bytes a string scan must stop at: its end, an escape, a control
// character (an error) and non-ASCII (then checked as UTF-8).
var special = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// PlainASCII reports whether s holds no byte that needs care in a JSON string: only
// 0x20..0x7f, and neither a quote nor a backslash.
func PlainASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if hasSpecial(word(s, i)) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if special[s[i]] {
			return false
		}
	}
	return true
}

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as with
// encoding/json. Plain bytes are skipped eight at a time and copied in runs, so a file
// of ordinary text is escaped at several hundred megabytes a second or more.
func AppendString(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s)+len(s)/16+2)
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends s as AppendString does, without the quotes: the inside of a
// JSON string, for a string written in pieces.
func AppendEscaped(dst []byte, s string) []byte {
	start, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) && !hasSpecial(word(s, i)) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if !special[c] {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			start = i
			continue
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// word loads the eight bytes of s at i as a little-endian number.
func word(s string, i int) uint64 {
	w := s[i : i+8] // one bounds check; the eight loads then combine into one
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// hasSpecial reports whether one of the eight bytes in x is special: below 0x20,
// 0x80 or above, a quote or a backslash (it may say so wrongly only when a byte is
// 0x80 or above, which is special anyway).
func hasSpecial(x uint64) bool {
	const lo, hi, ones = 0x2020202020202020, 0x8080808080808080, 0x0101010101010101
	const backslash, quote = 0x5c5c5c5c5c5c5c5c, 0x2222222222222222
	y, z := x^backslash, x^quote
	return ((x-lo)&^x|x|(y-ones)&^y|(z-ones)&^z)&hi != 0
}

const hexDigits = "0123456789abcdef"
