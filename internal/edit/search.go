package edit

// search_and_replace, the last tool of the batch toolkit (see batch.go).
//
// Matching works on the LF view of the lines searched (each line's text, joined by
// "\n"), so a search written with "\n" matches in a CRLF file. Only the lines a match
// touches are rewritten; every other line keeps its bytes, CRLF included.

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// SearchReplace is one search_and_replace call.
type SearchReplace struct {
	Search  string
	Replace string
	// UseRegex makes Search an RE2 regular expression (with ^ and $ matching at line
	// starts and ends) and lets Replace refer to groups:
	// $1, ${1}, ${name}; $$ is a literal "$". "$1" is group 1 even when letters follow
	// ("$1_old"). Without UseRegex both are plain text and "$" is just "$".
	UseRegex   bool
	IgnoreCase bool
	// StartLine and EndLine (1-based, inclusive; 0 = the first / the last line) restrict
	// the matches to those lines. A match cannot cross the line after EndLine.
	StartLine, EndLine int
}

// SearchResult is a successful search_and_replace.
type SearchResult struct {
	Content []byte // the new file
	Count   int    // occurrences replaced
	Message string // the toolkit's text
}

// SearchAndReplace replaces every match of p.Search in the file (or in p's lines).
// Zero matches is an error, never a "0 replacements" success.
func SearchAndReplace(name string, content []byte, p SearchReplace) (*SearchResult, error) {
	if err := CheckText(content); err != nil {
		return nil, err
	}
	if p.Search == "" {
		return nil, errorf("search is empty; give the text (or, with use_regex, the pattern) to replace")
	}
	re, err := p.compile()
	if err != nil {
		return nil, err
	}
	doc := parseDocument(content)
	if len(doc.lines) == 0 {
		return nil, errorf("%s is empty, so there is nothing to replace; use insert_contents "+
			"or write_files to give it content", name)
	}
	from, to, err := p.lineRange(len(doc.lines))
	if err != nil {
		return nil, err
	}
	v := newLFView(doc, from, to)
	matches := re.FindAllSubmatchIndex(v.text, -1)
	if len(matches) == 0 {
		return nil, p.noMatch(name, doc, from, to)
	}
	var splices []splice
	for _, g := range v.group(matches) {
		splices = append(splices, v.rewrite(g, re, p))
	}
	lines, _ := doc.apply(splices)
	return &SearchResult{
		Content: doc.join(lines),
		Count:   len(matches),
		Message: p.message(name, len(matches), from, to),
	}, nil
}

// compile turns the search into a regular expression; plain text is quoted.
func (p SearchReplace) compile() (*regexp.Regexp, error) {
	pattern := p.Search
	if !p.UseRegex {
		pattern = regexp.QuoteMeta(pattern)
	}
	// ^ and $ match at every line's start and end, as a model searching a file
	// means them (a pattern can still say (?-m) to anchor at the range's ends).
	pattern = "(?m)" + pattern
	if p.IgnoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, errorf("Invalid regular expression %s: %v. The syntax is RE2 "+
			"(https://github.com/google/re2/wiki/Syntax); or pass use_regex=false to search for "+
			"plain text", quote(p.Search), err)
	}
	return re, nil
}

// lineRange checks StartLine/EndLine against a file of n lines and returns the 0-based
// lines [from, to) to search.
func (p SearchReplace) lineRange(n int) (from, to int, err error) {
	for _, line := range []int{p.StartLine, p.EndLine} {
		if line < 0 {
			return 0, 0, errorf("Line number %d is not valid: lines start at 1", line)
		}
		if line > n {
			return 0, 0, errorf("Line number %d exceeds file length (%s)", line, plural(n, "line"))
		}
	}
	from, to = max(p.StartLine, 1)-1, n
	if p.EndLine > 0 {
		to = p.EndLine
	}
	if from >= to {
		return 0, 0, errorf("start_line %d is after end_line %d", p.StartLine, p.EndLine)
	}
	return from, to, nil
}

func (p SearchReplace) restricted() bool { return p.StartLine > 0 || p.EndLine > 0 }

// message is the toolkit's success text with its variants.
func (p SearchReplace) message(name string, count, from, to int) string {
	msg := fmt.Sprintf("Successfully replaced %d occurrence(s) in %s", count, name)
	if p.UseRegex {
		msg += " using regex pattern"
	}
	if p.IgnoreCase {
		msg += " (case-insensitive)"
	}
	if p.restricted() {
		msg += fmt.Sprintf(" (lines %d-%d)", from+1, to)
	}
	return msg
}

// noMatch explains zero matches, and says when the search would match outside the
// lines or with ignore_case.
func (p SearchReplace) noMatch(name string, doc *document, from, to int) error {
	what := "text"
	if p.UseRegex {
		what = "pattern"
	}
	where := name
	if p.restricted() {
		where += fmt.Sprintf(" (lines %d-%d)", from+1, to)
	}
	msg := fmt.Sprintf("No matches found for %s %s in %s", what, quote(p.Search), where)
	whole := newLFView(doc, 0, len(doc.lines)).text
	folded := p
	folded.IgnoreCase = true
	if n := p.countIn(whole); p.restricted() && n > 0 {
		msg += fmt.Sprintf("; the whole file has %s, so check start_line/end_line", plural(n, "match"))
	} else if !p.IgnoreCase && folded.countIn(whole) > 0 {
		msg += "; it matches when case is ignored: pass ignore_case=true if that is meant"
	}
	return errorf("%s. Nothing was changed.", msg)
}

// countIn counts p's matches in text.
func (p SearchReplace) countIn(text []byte) int {
	re, err := p.compile()
	if err != nil {
		return 0
	}
	return len(re.FindAllIndex(text, -1))
}

// lfView is lines [from, to) of a document as one LF text: each line's text followed by
// "\n" if it has a terminator, except that the last line's terminator is left out when
// lines follow the range, so a match cannot reach past it.
type lfView struct {
	doc      *document
	from, to int
	text     []byte
	starts   []int // offset in text of each line
}

func newLFView(doc *document, from, to int) *lfView {
	v := &lfView{doc: doc, from: from, to: to, starts: make([]int, 0, to-from)}
	var b []byte
	for i := from; i < to; i++ {
		v.starts = append(v.starts, len(b))
		line := doc.lines[i]
		b = append(b, lineText(line)...)
		if v.endsWithNewline(i) {
			b = append(b, '\n')
		}
	}
	v.text = b
	return v
}

// endsWithNewline reports whether line i (of the document) ends with "\n" in the view.
func (v *lfView) endsWithNewline(i int) bool {
	if terminator(v.doc.lines[i]) == "" {
		return false
	}
	return i < v.to-1 || v.to == len(v.doc.lines)
}

// lineAt is the document line whose view text holds offset pos (pos == len(text)
// belongs to the last line).
func (v *lfView) lineAt(pos int) int {
	return v.from + sort.Search(len(v.starts), func(i int) bool { return v.starts[i] > pos }) - 1
}

// lineEnd is the view offset just after line i's text (and newline).
func (v *lfView) lineEnd(i int) int {
	if i+1 < v.to {
		return v.starts[i+1-v.from]
	}
	return len(v.text)
}

// matchGroup is a run of document lines [first, last] and the matches in them.
type matchGroup struct {
	first, last int
	matches     [][]int
}

// group gathers matches by the lines they touch: from the line a match starts on to
// the line holding the byte after it (so a match that ends with a newline also
// rewrites the line it joins). Matches that share a line share a group.
func (v *lfView) group(matches [][]int) []matchGroup {
	var groups []matchGroup
	for _, m := range matches {
		first, last := v.lineAt(m[0]), v.lineAt(m[1])
		if n := len(groups); n > 0 && first <= groups[n-1].last {
			g := &groups[n-1]
			g.last = max(g.last, last)
			g.matches = append(g.matches, m)
			continue
		}
		groups = append(groups, matchGroup{first: first, last: last, matches: [][]int{m}})
	}
	return groups
}

// rewrite replaces a group's matches and turns the result back into file lines. When
// the group keeps its number of lines, each line keeps its own terminator; otherwise
// new line breaks get the file's dominant line ending. A last line whose terminator
// the view left out gets it back.
func (v *lfView) rewrite(g matchGroup, re *regexp.Regexp, p SearchReplace) splice {
	start, end := v.starts[g.first-v.from], v.lineEnd(g.last)
	template := []byte(regexTemplate(p.Replace))
	var out []byte
	at := start
	for _, m := range g.matches {
		out = append(out, v.text[at:m[0]]...)
		if p.UseRegex {
			out = re.Expand(out, template, v.text, m)
		} else {
			out = append(out, p.Replace...)
		}
		at = m[1]
	}
	out = append(out, v.text[at:end]...)

	pieces := splitLines(string(out))
	openEnd := !v.endsWithNewline(g.last) // the last line's terminator is not in the view
	if openEnd && (len(pieces) == 0 || strings.HasSuffix(pieces[len(pieces)-1], "\n")) {
		pieces = append(pieces, "")
	}
	sameCount := len(pieces) == g.last-g.first+1
	lines := make([]string, 0, len(pieces))
	for i, piece := range pieces {
		text, eol := strings.TrimSuffix(piece, "\n"), ""
		switch original := terminator(v.doc.lines[min(g.first+i, g.last)]); {
		case strings.HasSuffix(piece, "\n") && sameCount && original != "":
			eol = original
		case strings.HasSuffix(piece, "\n"):
			eol = v.doc.eol
		case openEnd: // the last piece
			eol = terminator(v.doc.lines[g.last])
		}
		if text != "" || eol != "" {
			lines = append(lines, text+eol)
		}
	}
	return splice{start: g.first, end: g.last + 1, lines: lines}
}

// regexTemplate makes "$1" mean group 1 even when a letter, digit or "_" follows (Go
// would read "$1x" as a group named "1x"), by writing it as "${1}".
func regexTemplate(replace string) string {
	if !strings.Contains(replace, "$") {
		return replace
	}
	var b strings.Builder
	for i := 0; i < len(replace); i++ {
		c := replace[i]
		if c != '$' || i+1 == len(replace) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(replace) && replace[j] >= '0' && replace[j] <= '9' {
			j++
		}
		switch {
		case j > i+1:
			b.WriteString("${" + replace[i+1:j] + "}")
			i = j - 1
		case replace[i+1] == '$':
			b.WriteString("$$")
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
