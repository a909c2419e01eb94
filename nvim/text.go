package nvim

import (
	"iter"
	"strings"

	"github.com/neovim/go-client/msgpack"
)

const utf8BOM = "\uFEFF"

// textFormat is what a buffer's lines do not carry of a text: its line ending, a
// UTF-8 BOM and whether it ends with a newline. A proposal the user edited is turned
// back into text with the proposal's own format, so accepting it never adds a final
// newline or converts CRLF by accident ("newline drift").
type textFormat struct {
	crlf         bool // every line ends with \r\n
	bom          bool
	finalNewline bool
}

// splitText cuts a text into buffer lines (without their line endings or the BOM)
// and reports its format. Lines of an LF text keep any lone \r, as Neovim shows them.
func splitText(text string) (bufferLines, textFormat) {
	var f textFormat
	if strings.HasPrefix(text, utf8BOM) {
		f.bom = true
		text = text[len(utf8BOM):]
	}
	newlines := strings.Count(text, "\n")
	f.crlf = newlines > 0 && strings.Count(text, "\r\n") == newlines
	sep := f.newline()
	if strings.HasSuffix(text, "\n") {
		f.finalNewline = true
		text = text[:len(text)-len(sep)]
	} else if text == "" {
		return bufferLines{}, f
	}
	// The final newline is cut off: one line more than the separators left.
	n := newlines
	if !f.finalNewline {
		n++
	}
	return bufferLines{body: text, sep: sep, n: n}, f
}

// bufferLines is a text as a buffer's lines, without a copy: the lines are found in
// the text (its BOM and final line ending cut off) as they are used. A 10,000-line
// proposal is sent to Neovim straight from the text the client sent, not through a
// slice of 10,000 lines.
type bufferLines struct {
	body string
	sep  string // between lines
	n    int
}

// all yields the lines in order.
func (l bufferLines) all() iter.Seq[string] {
	return func(yield func(string) bool) {
		rest := l.body
		for range l.n {
			line, after, _ := strings.Cut(rest, l.sep)
			if !yield(line) {
				return
			}
			rest = after
		}
	}
}

// MarshalMsgPack encodes the lines as the array of strings nvim_buf_set_lines takes.
func (l bufferLines) MarshalMsgPack(e *msgpack.Encoder) error {
	if err := e.PackArrayLen(int64(l.n)); err != nil {
		return err
	}
	for line := range l.all() {
		if err := e.PackString(line); err != nil {
			return err
		}
	}
	return nil
}

func (f textFormat) newline() string {
	if f.crlf {
		return "\r\n"
	}
	return "\n"
}

// joinLines is the inverse of splitText: joinLines(splitText(s)) == s for every s.
// No lines at all is the empty text (with the BOM, if any).
func (f textFormat) joinLines(lines [][]byte) string {
	if len(lines) == 0 {
		if f.bom {
			return utf8BOM
		}
		return ""
	}
	sep := []byte(f.newline())
	size := len(lines) * len(sep)
	for _, l := range lines {
		size += len(l)
	}
	var b strings.Builder
	b.Grow(size + len(utf8BOM))
	if f.bom {
		b.WriteString(utf8BOM)
	}
	for i, l := range lines {
		if i > 0 {
			b.Write(sep)
		}
		b.Write(l)
	}
	if f.finalNewline {
		b.Write(sep)
	}
	return b.String()
}

// diffText is the text the Lua side diffs a buffer's lines as (diff.hunks.text): every
// line ends with "\n", so that line endings and a missing final newline, which lines
// do not carry, are never a difference.
func diffText(lines bufferLines) string {
	var b strings.Builder
	b.Grow(len(lines.body) + 1)
	for line := range lines.all() {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
