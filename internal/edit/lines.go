// Package edit is the text-edit engine behind the file tools: pure functions that take
// a file's bytes and return new bytes. Everything outside an edit stays byte-identical:
// each line keeps its own terminator (LF or CRLF), a UTF-8 BOM stays, a missing final
// newline stays missing. New lines take the file's dominant line ending.
//
// One file per tool family: hashline.go (read_text_file, edit_text_file), replace.go
// (edit_file), batch.go (the batch toolkit), patch.go (edit_file_diff), write.go
// (write_file/create_file). This file holds the line model they share.
//
// # The line model
//
// A file is an optional UTF-8 BOM followed by lines. A line ends after "\n" (so its
// terminator is "\n" or "\r\n"); the last line may have no terminator. This is
// udiff.SplitLines' rule, so line numbers agree across the packages. A lone "\r" is
// not a line break. An empty file has no lines.
//
// Lines an edit writes get the file's dominant line ending: CRLF when more terminated
// lines end in "\r\n" than in a bare "\n", LF otherwise (and LF for a file with no
// terminated line). A file that lacked a final newline still lacks one after a line
// edit: lines appended after its last line make that line terminated and leave the new
// last line without a terminator, and deleting the last line leaves the line before it
// unterminated. The one exception is an empty last line, which keeps its terminator
// (an empty unterminated line would be no line at all). A file with a final newline
// (or an empty file) keeps one.
//
// Text the model sends for line operations is split into lines like this: a "\r"
// before "\n" is dropped, the text is split at "\n", and one trailing "\n" ends the last
// line rather than starting an empty one. So "a\nb" and "a\nb\n" are two lines, and ""
// is one empty line.
package edit

import (
	"bytes"
	"fmt"
	"strings"
)

// Error is an edit that cannot be done. Its message says what was wrong and what to
// do next; it is shown to the model as is.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// errorf builds an *Error; every refusal in this package goes through it.
func errorf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// binarySniffLen is how much of a file CheckText looks at, as git does.
const binarySniffLen = 8000

// CheckText refuses content that is not text: a NUL byte in the first 8000 bytes
// (git's rule), which also catches UTF-16. Invalid UTF-8 is allowed: its bytes are
// kept exactly.
func CheckText(content []byte) error {
	if i := binaryAt(content); i >= 0 {
		return errorf("this looks like a binary file (NUL byte at offset %d); the text tools "+
			"only edit text files, so nothing was changed", i)
	}
	return nil
}

// IsBinary reports whether content is not text, by CheckText's rule.
func IsBinary(content []byte) bool { return binaryAt(content) >= 0 }

func binaryAt(content []byte) int {
	return bytes.IndexByte(content[:min(len(content), binarySniffLen)], 0)
}

// LineTexts returns the file's lines without terminators and without the BOM: the
// text the model is shown. An edit handler keeps these per file as the views that
// EditTagged checks anchors against.
func LineTexts(content []byte) []string {
	return lineTexts(string(content))
}

// lineTexts splits s as LineTexts does, the terminators cut off in place.
func lineTexts(s string) []string {
	lines := splitLines(strings.TrimPrefix(s, utf8BOM))
	for i, line := range lines {
		lines[i] = lineText(line)
	}
	return lines
}

const utf8BOM = "\xef\xbb\xbf"

// document is a text file split for editing.
type document struct {
	bom   string   // utf8BOM if the file starts with one, else ""
	lines []string // each with its own terminator; the last may have none
	eol   string   // the terminator new lines get: the file's dominant one
}

func parseDocument(content []byte) *document {
	s := string(content)
	d := &document{}
	if strings.HasPrefix(s, utf8BOM) {
		d.bom, s = utf8BOM, s[len(utf8BOM):]
	}
	d.lines = splitLines(s)
	d.eol = dominantEOL(d.lines)
	return d
}

// splitLines splits s after each "\n", like udiff.SplitLines: joining the result
// gives s back, and an empty s has no lines.
func splitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// terminator is the line ending of line: "\r\n", "\n" or "".
func terminator(line string) string {
	switch {
	case strings.HasSuffix(line, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(line, "\n"):
		return "\n"
	}
	return ""
}

// lineText is line without its terminator.
func lineText(line string) string {
	return line[:len(line)-len(terminator(line))]
}

// dominantEOL is "\r\n" when more lines end in CRLF than in a bare LF, else "\n".
func dominantEOL(lines []string) string {
	crlf, lf := 0, 0
	for _, line := range lines {
		switch terminator(line) {
		case "\r\n":
			crlf++
		case "\n":
			lf++
		}
	}
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}

// dominantEOLOf is dominantEOL for raw bytes, without splitting them into lines.
func dominantEOLOf(content []byte) string {
	crlf := bytes.Count(content, []byte("\r\n"))
	lf := bytes.Count(content, []byte("\n")) - crlf
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}

func (d *document) texts() []string {
	texts := make([]string, len(d.lines))
	for i, line := range d.lines {
		texts[i] = lineText(line)
	}
	return texts
}

// lacksFinalNewline reports whether the last line has no terminator.
func (d *document) lacksFinalNewline() bool {
	return len(d.lines) > 0 && terminator(d.lines[len(d.lines)-1]) == ""
}

// terminated turns line texts into lines ending in the document's EOL.
func (d *document) terminated(texts []string) []string {
	lines := make([]string, len(texts))
	for i, text := range texts {
		lines[i] = text + d.eol
	}
	return lines
}

// splice replaces lines[start:end] of a document with lines (each terminated).
type splice struct {
	start, end int
	lines      []string
}

// span is a run of lines in the edited file (0-based, end exclusive): where a
// splice's new lines ended up.
type span struct{ start, end int }

// apply performs splices, which must be sorted by start and must not overlap, and
// returns the new lines and where each splice's lines are in them. Line edits pass the
// result through finish.
func (d *document) apply(splices []splice) ([]string, []span) {
	out := make([]string, 0, len(d.lines))
	spans := make([]span, len(splices))
	next := 0
	for i, sp := range splices {
		out = append(out, d.lines[next:sp.start]...)
		spans[i].start = len(out)
		out = append(out, sp.lines...)
		spans[i].end = len(out)
		next = sp.end
	}
	out = append(out, d.lines[next:]...)
	return out, spans
}

// finish keeps the file's final-newline state after lines were spliced in: every line
// but the last is terminated, and the last one is terminated unless the original file
// lacked a final newline. An empty last line keeps its terminator, since without one
// it would be no line at all.
func (d *document) finish(lines []string) []string {
	for i := 0; i < len(lines)-1; i++ {
		if terminator(lines[i]) == "" {
			lines[i] += d.eol
		}
	}
	if n := len(lines); n > 0 && d.lacksFinalNewline() && lineText(lines[n-1]) != "" {
		lines[n-1] = lineText(lines[n-1])
	}
	return lines
}

// spliceLines performs a line edit's splices (see apply and finish) and returns the
// file's new bytes and its number of lines.
func (d *document) spliceLines(splices []splice) ([]byte, int) {
	lines, _ := d.apply(splices)
	lines = d.finish(lines)
	return d.join(lines), len(lines)
}

// join renders lines (with the document's BOM) as file bytes.
func (d *document) join(lines []string) []byte {
	size := len(d.bom)
	for _, line := range lines {
		size += len(line)
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(d.bom)
	for _, line := range lines {
		b.WriteString(line)
	}
	return b.Bytes()
}

// toLF turns every "\r\n" in s into "\n".
func toLF(s string) string {
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// contentLines splits text the model sent into line texts: "a\nb" and "a\nb\n" are
// ["a" "b"], "" is [""]. A "\r" before "\n" is dropped.
func contentLines(content string) []string {
	content = strings.TrimSuffix(toLF(content), "\n")
	return strings.Split(content, "\n")
}

// plural renders "1 line" / "3 lines", "1 match" / "2 matches".
func plural(n int, word string) string {
	switch {
	case n == 1:
		return fmt.Sprintf("%d %s", n, word)
	case strings.HasSuffix(word, "ch"):
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// quote renders a line for a message, cut short when long.
func quote(text string) string {
	const maxQuote = 120
	if len(text) > maxQuote {
		return fmt.Sprintf("%q…", text[:maxQuote])
	}
	return fmt.Sprintf("%q", text)
}
