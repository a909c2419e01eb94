package history

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeEntry parses one log line. Log lines are flat JSON objects of strings,
// numbers and nulls, and `mcpdiff status` reads thousands of them, so this reads them
// directly (about ten times faster than encoding/json); anything it does not expect
// (nested values, odd escapes, bad syntax) goes to encoding/json instead, so the
// result is always what encoding/json would give.
//
// line is a slice of the whole log read as one string: the strings of the entry are
// slices of it too, so decoding allocates almost nothing.
func decodeEntry(line string, e *Entry) error {
	if fastEntry(line, e) {
		return nil
	}
	*e = Entry{}
	return json.Unmarshal([]byte(line), e)
}

func fastEntry(line string, e *Entry) bool {
	d := decoder{b: line}
	if !d.byte('{') {
		return false
	}
	if d.peek() == '}' {
		d.i++
		return d.end()
	}
	for {
		key, ok := d.str()
		if !ok || !d.byte(':') {
			return false
		}
		if !d.field(key, e) {
			return false
		}
		switch d.next() {
		case ',':
			continue
		case '}':
			return d.end()
		default:
			return false
		}
	}
}

// field reads the value of key into e.
func (d *decoder) field(key string, e *Entry) bool {
	switch key {
	case "edit_id":
		return d.into(&e.EditID)
	case "conversation_id":
		return d.into(&e.ConversationID)
	case "timestamp":
		return d.into(&e.Timestamp)
	case "file_path":
		return d.into(&e.FilePath)
	case "tool_name":
		return d.into(&e.ToolName)
	case "source":
		return d.into(&e.Source)
	case "operation":
		var s string
		ok := d.into(&s)
		e.Operation = Operation(s)
		return ok
	case "status":
		var s string
		ok := d.into(&s)
		e.Status = Status(s)
		return ok
	case "source_path":
		return d.optional(&e.SourcePath)
	case "diff_file":
		return d.optional(&e.DiffFile)
	case "checkpoint_file":
		return d.optional(&e.CheckpointFile)
	case "hash_before":
		return d.optional(&e.HashBefore)
	case "hash_after":
		return d.optional(&e.HashAfter)
	case "tool_call_index":
		n, ok := d.int()
		e.ToolCallIndex = int(n)
		return ok
	case "seq":
		n, ok := d.int()
		e.Seq = n
		return ok
	}
	for _, known := range entryKeys {
		if strings.EqualFold(key, known) {
			return false // encoding/json matches keys regardless of case
		}
	}
	return d.skip()
}

var entryKeys = []string{"edit_id", "conversation_id", "tool_call_index", "seq", "timestamp", "operation",
	"file_path", "source_path", "tool_name", "status", "diff_file", "checkpoint_file", "hash_before", "hash_after", "source"}

// special marks the bytes a string scan must stop at: its end, an escape, a control
// character (an error) and non-ASCII (then checked as UTF-8).
var special = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

type decoder struct {
	b string
	i int
}

func (d *decoder) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\r' || d.b[d.i] == '\n') {
		d.i++
	}
}

func (d *decoder) peek() byte {
	d.space()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *decoder) next() byte {
	c := d.peek()
	d.i++
	return c
}

func (d *decoder) byte(c byte) bool { return d.next() == c }

func (d *decoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

// into reads a string value (null leaves s empty, as encoding/json does).
func (d *decoder) into(s *string) bool {
	if d.null() {
		return true
	}
	v, ok := d.str()
	*s = v
	return ok
}

// optional reads a string or null.
func (d *decoder) optional(p **string) bool {
	if d.null() {
		*p = nil
		return true
	}
	v, ok := d.str()
	*p = &v
	return ok
}

func (d *decoder) null() bool {
	if d.peek() == 'n' && d.i+4 <= len(d.b) && d.b[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// str reads a JSON string; escapes other than the common ones send the line to
// encoding/json.
func (d *decoder) str() (string, bool) {
	if d.next() != '"' {
		return "", false
	}
	start := d.i
	// Fast path: the closing quote found with IndexByte (vectorised), and the run
	// before it checked to be plain printable ASCII eight bytes at a time.
	if end := strings.IndexByte(d.b[start:], '"'); end >= 0 && plainASCII(d.b[start:start+end]) {
		d.i = start + end + 1
		return d.b[start : start+end], true
	}
	ascii := true
	for d.i < len(d.b) {
		for d.i < len(d.b) && !special[d.b[d.i]] {
			d.i++
		}
		if d.i == len(d.b) {
			break
		}
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, ascii || utf8.ValidString(s)
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		default: // >= 0x80
			ascii = false
		}
		d.i++
	}
	return "", false
}

// plainASCII reports whether s holds no special byte: only 0x20..0x7f, and neither
// a quote nor a backslash.
func plainASCII(s string) bool {
	const lo, hi, ones = 0x2020202020202020, 0x8080808080808080, 0x0101010101010101
	const backslash, quote = 0x5c5c5c5c5c5c5c5c, 0x2222222222222222
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		below := (x - lo) & ^x & hi // some byte < 0x20
		y, z := x^backslash, x^quote
		slash := (y - ones) & ^y & hi // some byte == '\\'
		quotes := (z - ones) & ^z & hi
		if below|x&hi|slash|quotes != 0 {
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

// escaped finishes a string that holds escapes.
func (d *decoder) escaped(start int) (string, bool) {
	out := append([]byte(nil), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out), utf8.Valid(out)
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return "", false
		}
		esc := d.b[d.i+1]
		d.i += 2
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
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if d.i+1 >= len(d.b) || d.b[d.i] != '\\' || d.b[d.i+1] != 'u' {
					return "", false
				}
				d.i += 2
				r2, ok := d.hex4()
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

func (d *decoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(d.b[d.i:d.i+4], 16, 16)
	d.i += 4
	return rune(n), err == nil
}

// int reads an integer; fractions and exponents go to encoding/json.
func (d *decoder) int() (int64, bool) {
	d.space()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n, err := strconv.ParseInt(d.b[start:d.i], 10, 64)
	return n, err == nil
}

// skip passes over the value of a field Entry does not have: strings, numbers,
// true/false/null. Objects and arrays go to encoding/json.
func (d *decoder) skip() bool {
	switch c := d.peek(); {
	case c == '"':
		_, ok := d.str()
		return ok
	case c == 'n':
		return d.null()
	case c == 't' || c == 'f':
		word := "true"
		if c == 'f' {
			word = "false"
		}
		if d.i+len(word) <= len(d.b) && d.b[d.i:d.i+len(word)] == word {
			d.i += len(word)
			return true
		}
		return false
	case c == '-' || (c >= '0' && c <= '9'):
		var f float64
		start := d.i
		for d.i < len(d.b) && (d.b[d.i] == '-' || d.b[d.i] == '+' || d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E' || (d.b[d.i] >= '0' && d.b[d.i] <= '9')) {
			d.i++
		}
		return json.Unmarshal([]byte(d.b[start:d.i]), &f) == nil
	}
	return false
}
