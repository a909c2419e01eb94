package udiff

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a diff made by Unified (or git/diff -u). Header counts must match
// the hunk bodies. Several files may follow each other; lines outside the files'
// "---"/"+++" headers and hunks ("diff --git", "index", ...) are skipped. A text with
// nothing but whitespace holds no files.
func Parse(text string) ([]*FileDiff, error) {
	p := &parser{lines: splitLines(text)}
	var files []*FileDiff
	for p.i < len(p.lines) {
		switch {
		case p.atFileHeader():
			f, err := p.strictFile()
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		case strings.HasPrefix(p.lines[p.i], "@@"):
			return nil, p.errorf("hunk header before any \"--- a/name\" / \"+++ b/name\" file header")
		default:
			p.i++
		}
	}
	if len(files) == 0 && strings.TrimSpace(text) != "" {
		return nil, errors.New("no file header found: a diff starts with \"--- a/name\" then \"+++ b/name\"")
	}
	return files, nil
}

// ParseLenient reads one file's diff written by a model: "---"/"+++" headers are
// optional, hunk counts are recomputed from the body, "@@ @@" without numbers is
// accepted (position then found by content).
//
// Also tolerated: text before the first hunk (such as "```diff"), a closing "```",
// CRLF line ends in the diff text, and an empty line in a hunk, read as an empty
// context line whose leading space was dropped (empty lines that end a hunk are
// ignored). A hunk without numbers gets OldStart 1: ApplyNearest then takes its first
// match after the previous hunk.
func ParseLenient(text string) (*FileDiff, error) {
	p := &parser{lines: trimClosingFence(splitLines(text))}
	f := &FileDiff{}
	for p.i < len(p.lines) && !strings.HasPrefix(p.lines[p.i], "@@") {
		if p.atFileHeader() {
			f.OldName = parseHeaderName(p.lines[p.i][4:], "a/")
			f.NewName = parseHeaderName(p.lines[p.i+1][4:], "b/")
			p.i++
		}
		p.i++
	}
	if p.i == len(p.lines) {
		return nil, errors.New("no hunk found: each hunk starts with a line like \"@@ -12,3 +12,4 @@\" " +
			"(or \"@@ @@\" without line numbers), followed by its lines prefixed with ' ', '-' or '+'")
	}
	delta := 0 // lines added minus lines removed by the hunks so far
	for p.i < len(p.lines) {
		h, err := p.lenientHunk(len(f.Hunks)+1, delta)
		if err != nil {
			return nil, err
		}
		f.Hunks = append(f.Hunks, h)
		delta += h.NewLines - h.OldLines
	}
	return f, nil
}

type parser struct {
	lines []string
	i     int // index of the current line
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d of the diff: %s", p.i+1, fmt.Sprintf(format, args...))
}

// atFileHeader reports whether the current line starts a "--- " / "+++ " pair.
func (p *parser) atFileHeader() bool {
	return p.i+1 < len(p.lines) && strings.HasPrefix(p.lines[p.i], "--- ") && strings.HasPrefix(p.lines[p.i+1], "+++ ")
}

func (p *parser) atMarker() bool {
	return p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "\\")
}

func (p *parser) strictFile() (*FileDiff, error) {
	f := &FileDiff{
		OldName: parseHeaderName(p.lines[p.i][4:], "a/"),
		NewName: parseHeaderName(p.lines[p.i+1][4:], "b/"),
	}
	p.i += 2
	for p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "@@") {
		h, err := p.strictHunk(len(f.Hunks) + 1)
		if err != nil {
			return nil, fmt.Errorf("file %q: %w", f.NewName, err)
		}
		f.Hunks = append(f.Hunks, h)
	}
	if len(f.Hunks) == 0 {
		return nil, p.errorf("file %q has no hunk after its \"---\"/\"+++\" header", f.NewName)
	}
	if p.i < len(p.lines) && strings.ContainsAny(p.lines[p.i][:1], " +-") && !p.atFileHeader() {
		return nil, p.errorf("file %q: hunk %d has more lines than its header counts", f.NewName, len(f.Hunks))
	}
	return f, nil
}

func (p *parser) strictHunk(n int) (Hunk, error) {
	header := p.lines[p.i]
	old, new, closed, err := parseHunkHeader(header)
	if err == nil && (!closed || !old.hasStart || !new.hasStart) {
		err = errors.New("want \"@@ -start,count +start,count @@\"")
	}
	for _, s := range []span{old, new} {
		if err == nil && s.count > 0 && s.start == 0 {
			err = errors.New("a side with lines must start at line 1 or later")
		}
	}
	if err != nil {
		return Hunk{}, p.errorf("hunk %d: bad header %q: %v", n, strings.TrimRight(header, "\r\n"), err)
	}
	h := Hunk{OldStart: old.start, OldLines: old.count, NewStart: new.start, NewLines: new.count}
	p.i++
	oldLeft, newLeft := h.OldLines, h.NewLines
	for oldLeft > 0 || newLeft > 0 || p.atMarker() {
		if p.i == len(p.lines) {
			return h, fmt.Errorf("hunk %d: the diff ends before the header's counts -%d,%d +%d,%d are reached",
				n, h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		}
		line := p.lines[p.i]
		kind := LineKind(line[0])
		switch kind {
		case Context:
			oldLeft, newLeft = oldLeft-1, newLeft-1
		case Delete:
			oldLeft--
		case Insert:
			newLeft--
		case '\\':
			if err := markNoNewline(h.Lines); err != nil {
				return h, p.errorf("hunk %d: %v", n, err)
			}
			p.i++
			continue
		default:
			return h, p.errorf("hunk %d: %q does not start with ' ', '-', '+' or '\\' but the header's counts are not reached",
				n, strings.TrimRight(line, "\r\n"))
		}
		if oldLeft < 0 || newLeft < 0 {
			return h, p.errorf("hunk %d: more lines than the header's counts -%d,%d +%d,%d",
				n, h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		}
		h.Lines = append(h.Lines, Line{kind, bodyText(line)})
		p.i++
	}
	return h, nil
}

// lenientHunk reads a hunk and computes its header from its body. delta is the net
// number of lines added by the earlier hunks, used for NewStart when the header has
// no numbers.
func (p *parser) lenientHunk(n, delta int) (Hunk, error) {
	header := p.lines[p.i]
	old, new, _, err := parseHunkHeader(header)
	if err != nil {
		return Hunk{}, p.errorf("hunk %d: cannot read the header %q (%v); write it as \"@@ -12,3 +12,4 @@\" or \"@@ @@\"",
			n, strings.TrimRight(header, "\r\n"), err)
	}
	p.i++
	var h Hunk
	bare := 0 // empty lines without prefix at the end of h.Lines
	for ; p.i < len(p.lines) && !strings.HasPrefix(p.lines[p.i], "@@"); p.i++ {
		line := p.lines[p.i]
		switch kind := LineKind(line[0]); {
		case line == "\n" || line == "\r\n":
			h.Lines = append(h.Lines, Line{Context, line})
			bare++
			continue
		case p.atFileHeader():
			return h, p.errorf("hunk %d: a second file header: this diff must change only one file", n)
		case kind == Context || kind == Delete || kind == Insert:
			h.Lines = append(h.Lines, Line{kind, bodyText(line)})
		case kind == '\\':
			if err := markNoNewline(h.Lines); err != nil {
				return h, p.errorf("hunk %d: %v", n, err)
			}
		default:
			return h, p.errorf("hunk %d: %q has no ' ', '-' or '+' in front; every line of a hunk needs one "+
				"(an unchanged line keeps a leading space)", n, strings.TrimRight(line, "\r\n"))
		}
		bare = 0
	}
	h.Lines = h.Lines[:len(h.Lines)-bare]
	if len(h.Lines) == 0 {
		return h, fmt.Errorf("hunk %d has no lines", n)
	}
	for _, l := range h.Lines {
		if l.Kind != Insert {
			h.OldLines++
		}
		if l.Kind != Delete {
			h.NewLines++
		}
	}
	switch {
	case old.hasStart:
		h.OldStart = max(old.start, min(h.OldLines, 1))
	case h.OldLines == 0:
		return h, fmt.Errorf("hunk %d only adds lines and has no line numbers, so its place is unknown: "+
			"include a few unchanged lines around the addition (prefixed with a space)", n)
	default:
		h.OldStart = 1
	}
	if new.hasStart {
		h.NewStart = max(new.start, min(h.NewLines, 1))
	} else {
		h.NewStart = headerStart(oldStart0(h)+delta, h.NewLines)
	}
	return h, nil
}

// bodyText is the text of a hunk line without its first column. A line that ends the
// diff text without a newline gets one: only a "\ No newline" marker removes it.
func bodyText(line string) string {
	if !strings.HasSuffix(line, "\n") {
		return line[1:] + "\n"
	}
	return line[1:]
}

// markNoNewline handles "\ No newline at end of file": the line before has none.
func markNoNewline(lines []Line) error {
	if len(lines) == 0 || !strings.HasSuffix(lines[len(lines)-1].Text, "\n") {
		return errors.New("\"\\ No newline at end of file\" must follow a '-', '+' or ' ' line")
	}
	last := &lines[len(lines)-1]
	if last.Text == "\n" { // "" is no line at all: the file would lose it
		return errors.New("\"\\ No newline at end of file\" follows an empty line, which then would not exist; remove the marker")
	}
	last.Text = strings.TrimSuffix(last.Text, "\n")
	return nil
}

// span is one side of a hunk header: "-start,count" or "+start,count".
type span struct {
	start, count int
	hasStart     bool
}

// parseHunkHeader reads "@@ -a,b +c,d @@ section". Either range may be missing (the
// span then has hasStart false), and a count defaults to 1; closed reports whether
// the second "@@" is there.
func parseHunkHeader(line string) (old, new span, closed bool, err error) {
	inner := strings.TrimPrefix(strings.TrimRight(line, "\r\n"), "@@")
	inner, _, closed = strings.Cut(inner, "@@")
	for _, field := range strings.Fields(inner) {
		var side *span
		switch field[0] {
		case '-':
			side = &old
		case '+':
			side = &new
		default:
			return old, new, closed, fmt.Errorf("unexpected %q", field)
		}
		if *side, err = parseSpan(field[1:]); err != nil {
			return old, new, closed, err
		}
	}
	return old, new, closed, nil
}

func parseSpan(s string) (span, error) {
	startText, countText, hasCount := strings.Cut(s, ",")
	sp := span{count: 1, hasStart: true}
	var err error
	if sp.start, err = strconv.Atoi(startText); err != nil || sp.start < 0 {
		return sp, fmt.Errorf("%q is not a line number", startText)
	}
	if hasCount {
		if sp.count, err = strconv.Atoi(countText); err != nil || sp.count < 0 {
			return sp, fmt.Errorf("%q is not a line count", countText)
		}
	}
	return sp, nil
}

// trimClosingFence drops trailing blank lines and a closing "```" of a Markdown fence.
func trimClosingFence(lines []string) []string {
	for len(lines) > 0 {
		last := strings.TrimSpace(lines[len(lines)-1])
		if last != "" && last != "```" {
			break
		}
		lines = lines[:len(lines)-1]
	}
	return lines
}
