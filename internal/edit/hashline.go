package edit

// Hash-anchored reads and edits (read_text_file, edit_text_file).
//
// The two-hex-digit tag of a line is only a checksum for the model's convenience:
// 1 changed line in 256 keeps its tag. Anchors are therefore checked against the full
// text of the line the model was shown (the views), and a line is only relocated when
// that full text occurs exactly once in the current file.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpdiff/mcpdiff/internal/jsonscan"
)

// tagStrings holds the 256 possible tags, so Tag does not allocate.
var tagStrings = func() (tags [256]string) {
	for i := range tags {
		tags[i] = fmt.Sprintf("%02x", i)
	}
	return tags
}()

// Tag is the two lowercase hex digits of the lowest byte of FNV-1a (32-bit) over the
// line with trailing whitespace (including "\r") removed. Whitespace is Unicode white
// space (unicode.IsSpace), so a CRLF file gets the same tags as its LF twin.
func Tag(line string) string { return tagStrings[tagByte(line)] }

func tagByte(line string) byte {
	hash := uint32(fnvOffset)
	for i := range taggedLen(line) {
		hash = (hash ^ uint32(line[i])) * fnvPrime
	}
	return byte(hash)
}

// FNV-1a's (32-bit) constants.
const fnvOffset, fnvPrime = 2166136261, 16777619

// taggedLen is the length of line that its tag hashes: trailing white space is cut
// (strings.TrimRightFunc(line, unicode.IsSpace), ASCII first).
func taggedLen(line string) int {
	end := len(line)
	for end > 0 {
		if c := line[end-1]; c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') {
				break
			}
			end--
			continue
		}
		r, size := utf8.DecodeLastRuneInString(line[:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= size
	}
	return end
}

// tagBytes are the tags of texts. FNV-1a takes a byte at a time, each step waiting
// for the multiplication before it; four lines hashed side by side keep the core's
// multipliers busy (a 10,000-line file is half a megabyte).
func tagBytes(texts []string) []byte {
	tags := make([]byte, len(texts))
	i := 0
	for ; i+4 <= len(texts); i += 4 {
		tags[i], tags[i+1], tags[i+2], tags[i+3] = tagFour(texts[i], texts[i+1], texts[i+2], texts[i+3])
	}
	for ; i < len(texts); i++ {
		tags[i] = tagByte(texts[i])
	}
	return tags
}

// tagFour is tagByte of four lines at once: their common length together, then
// the rest of each.
func tagFour(a, b, c, d string) (byte, byte, byte, byte) {
	ra, rb, rc, rd := a[:taggedLen(a)], b[:taggedLen(b)], c[:taggedLen(c)], d[:taggedLen(d)]
	n := min(len(ra), len(rb), len(rc), len(rd))
	a, b, c, d = ra, rb, rc, rd
	ha, hb, hc, hd := uint32(fnvOffset), uint32(fnvOffset), uint32(fnvOffset), uint32(fnvOffset)
	a, b, c, d = a[:n], b[:n], c[:n], d[:n] // no bounds checks in the loop
	for i := 0; i < n; i++ {
		ha = (ha ^ uint32(a[i])) * fnvPrime
		hb = (hb ^ uint32(b[i])) * fnvPrime
		hc = (hc ^ uint32(c[i])) * fnvPrime
		hd = (hd ^ uint32(d[i])) * fnvPrime
	}
	return fnvOn(ha, ra[n:]), fnvOn(hb, rb[n:]), fnvOn(hc, rc[n:]), fnvOn(hd, rd[n:])
}

// fnvOn is FNV-1a's lowest byte, from state hash on over s.
func fnvOn(hash uint32, s string) byte {
	for i := 0; i < len(s); i++ {
		hash = (hash ^ uint32(s[i])) * fnvPrime
	}
	return byte(hash)
}

// FileHash is the lowercase hex SHA-256 of the whole file.
func FileHash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// emptyFileNote is what ReadTagged shows for a file without lines, where there is
// nothing to anchor an edit to.
const emptyFileNote = "(empty file: no lines to anchor to; use write_file to give it content)"

// Reading is a tagged read (read_text_file) of a text file: the lines chosen with
// Select (1-based, inclusive; 0 means from the first / to the last) as "N:hh|text"
// lines, then "file_hash: <sha256>". The text is the line without its terminator (and
// without the BOM on line 1). An empty file shows one note line, emptyFileNote,
// before the file_hash line. A start or end outside the file is an error that gives
// the file's line count. Its size is known before it is made (Len), and it is made
// as a string or straight as JSON (AppendJSON).
type Reading struct {
	Texts    []string // every line, as LineTexts gives them: what anchors refer to
	hash     chan string
	fileHash string
	from, to int // the lines shown, 1-based, inclusive
}

// parallelHashFrom is the size from which NewReading hashes on another goroutine:
// below it, handing the work to another core (whose thread may sleep) takes longer
// than hashing.
const parallelHashFrom = 128 << 10

// NewReading checks that content is text and splits it into lines; the file's
// SHA-256 is computed meanwhile, on another core when there is one. The lines are
// slices of content, not of a copy: content must not change afterwards.
func NewReading(content []byte) (*Reading, error) {
	if err := CheckText(content); err != nil {
		return nil, err
	}
	r := &Reading{hash: make(chan string, 1)}
	if len(content) < parallelHashFrom {
		r.hash <- FileHash(content) // waking another core costs more
	} else {
		go func() { r.hash <- FileHash(content) }()
	}
	r.Texts = lineTexts(unsafe.String(unsafe.SliceData(content), len(content)))
	r.from, r.to = 1, len(r.Texts)
	return r, nil
}

// Again is a Reading of the same content for another read: the whole file, the
// hash already known. r and the new one may be used by different goroutines.
func (r *Reading) Again() *Reading {
	return &Reading{Texts: r.Texts, fileHash: r.FileHash(), from: 1, to: len(r.Texts)}
}

// Lines are the lines shown (1-based, inclusive).
func (r *Reading) Lines() (from, to int) { return r.from, r.to }

// Select chooses the lines shown.
func (r *Reading) Select(start, end int) error {
	from, to, err := readRange(len(r.Texts), start, end)
	if err != nil {
		return err
	}
	r.from, r.to = from, to
	return nil
}

// FileHash is the file's SHA-256, as the read ends with it.
func (r *Reading) FileHash() string {
	if r.hash != nil {
		r.fileHash, r.hash = <-r.hash, nil
	}
	return r.fileHash
}

// Len is the length of String, without making it.
func (r *Reading) Len() int {
	n := len("file_hash: ") + 64
	if len(r.Texts) == 0 {
		n += len(emptyFileNote) + 1
	}
	for i := r.from; i <= r.to; i++ {
		n += decimalLen(i) + len(":hh|\n") + len(r.Texts[i-1])
	}
	return n
}

// String is the text of the read.
func (r *Reading) String() string {
	var b strings.Builder
	b.Grow(r.Len())
	if len(r.Texts) == 0 {
		b.WriteString(emptyFileNote + "\n")
	}
	writeTagged(&b, r.Texts, r.from, r.to)
	b.WriteString("file_hash: " + r.FileHash())
	return b.String()
}

// AppendJSON appends String as the inside of a JSON string (escaped, without the
// quotes), in one pass over the lines: for a big file this is the whole answer's
// bulk, and escaping String afterwards would read and copy it all again.
func (r *Reading) AppendJSON(dst []byte) []byte {
	size := r.Len() // a pass over the lines: once
	dst = slices.Grow(dst, size+size/8)
	if len(r.Texts) == 0 {
		dst = jsonscan.AppendEscaped(dst, emptyFileNote)
		dst = append(dst, `\n`...)
	}
	tags := tagBytes(r.Texts[r.from-1 : max(r.to, r.from-1)])
	for n := r.from; n <= r.to; n++ {
		text := r.Texts[n-1]
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, ':')
		dst = append(dst, tagStrings[tags[n-r.from]]...)
		dst = append(dst, '|')
		dst = jsonscan.AppendEscaped(dst, text)
		dst = append(dst, `\n`...)
	}
	dst = append(dst, "file_hash: "...)
	return append(dst, r.FileHash()...)
}

// writeTagged writes lines from..to (1-based, inclusive) of texts as "N:hh|text\n".
func writeTagged(b *strings.Builder, texts []string, from, to int) {
	var num [20]byte
	for n := from; n <= to; n++ {
		text := texts[n-1]
		b.Write(strconv.AppendInt(num[:0], int64(n), 10))
		b.WriteByte(':')
		b.WriteString(Tag(text))
		b.WriteByte('|')
		b.WriteString(text)
		b.WriteByte('\n')
	}
}

func decimalLen(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// readRange checks a requested start..end (0 = open) against a file of n lines and
// returns the 1-based inclusive range to show (to < from for an empty file).
func readRange(n, start, end int) (from, to int, err error) {
	switch {
	case start < 0 || end < 0:
		return 0, 0, errorf("start_line and end_line are 1-based line numbers (0 or absent "+
			"means the first / last line); got start_line %d, end_line %d", start, end)
	case n == 0 && (start > 0 || end > 0):
		return 0, 0, errorf("the file is empty (0 lines), so it has no line %d; read it "+
			"without start_line/end_line", max(start, end))
	case start > n:
		return 0, 0, errorf("start_line %d is past the end of the file (%s)", start, plural(n, "line"))
	case end > n:
		return 0, 0, errorf("end_line %d is past the end of the file (%s); use end_line %d "+
			"or leave it out to read to the end", end, plural(n, "line"), n)
	case start > 0 && end > 0 && start > end:
		return 0, 0, errorf("start_line %d is after end_line %d", start, end)
	}
	from, to = max(start, 1), end
	if end == 0 {
		to = n
	}
	return from, to, nil
}

// Op is one edit_text_file operation.
//
// Anchors are "N:hh" as shown by read_text_file (surrounding spaces and anything from
// a "|" on, as copied from a read line, are ignored). content may hold several lines
// ("a\nb"); one trailing "\n" does not add an empty line, and "" is one empty line (use
// delete to remove lines). When every line of content starts with a "N:hh|" prefix
// copied from a read, those prefixes are stripped and the summary says so.
type Op struct {
	Op      string  `json:"op"` // replace, replace_range, insert_after, insert_before, delete, delete_range
	Anchor  string  `json:"anchor,omitempty"`
	Start   string  `json:"start,omitempty"`
	End     string  `json:"end,omitempty"`
	Content *string `json:"content,omitempty"`
}

// TaggedEdit is a successful edit_text_file.
type TaggedEdit struct {
	Content []byte   // the new file
	Summary string   // for the model: what changed, relocations, fresh tags around the changes, new file_hash
	Lines   []string // the new file's line texts: store them as the newest view
}

// EditTagged applies ops atomically. views are the versions of the file the model was
// shown (each the list of line texts without terminators, as LineTexts gives), newest
// first; they let an anchor be checked against the full line content it stood for, not
// just its 8-bit tag.
//
// All anchors refer to the file as the model last saw it. Each is resolved against the
// current content first; then all ops are applied together, or, on any problem, none:
//   - fileHash, when not empty, must be the current file's hash;
//   - an anchor N:hh stands for the text of line N in the newest view whose line N has
//     tag hh. It resolves to line N if that line still holds the text, else to the one
//     line that holds it (a relocation, reported in the summary); the text found on no
//     line or on several makes the anchor stale. With no such view, line N must
//     currently have tag hh;
//   - a range's ends resolved from one view with one shift must still enclose exactly
//     that view's lines;
//   - ops must not overlap; inserts at one point keep their given order.
//
// A refusal (*Error) lists every problem with the current tagged lines around it and
// the current file_hash.
func EditTagged(content []byte, fileHash string, ops []Op, views [][]string) (*TaggedEdit, error) {
	if err := CheckText(content); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, errorf("no operations given; pass operations like " +
			`[{"op": "replace", "anchor": "12:a3", "content": "new text"}]`)
	}
	doc := parseDocument(content)
	cur := doc.texts()
	parsed, err := parseOps(ops)
	if err != nil {
		return nil, err
	}
	if fileHash != "" && !sameHash(fileHash, FileHash(content)) {
		return nil, hashMismatch(cur, content, parsed)
	}
	r := &resolver{cur: cur, views: views}
	planned, problems := r.plan(parsed)
	if len(problems) > 0 {
		return nil, refusal(cur, content, problems)
	}
	sortForApply(planned)
	if err := checkOverlaps(planned); err != nil {
		return nil, err
	}
	return applyPlanned(doc, content, planned)
}

// sameHash compares a file_hash the model sent, leniently about copied decoration.
func sameHash(sent, actual string) bool {
	sent = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(sent), "file_hash:"))
	return strings.EqualFold(sent, actual)
}

// anchor is a parsed "N:hh".
type anchor struct {
	line int // 1-based, as the model saw it
	tag  string
}

func (a anchor) String() string { return strconv.Itoa(a.line) + ":" + a.tag }

// maxAnchorDigits bounds N so it cannot overflow an int.
const maxAnchorDigits = 9

// parseAnchor reads "N:hh". It is lenient about decoration copied from a read line
// (surrounding spaces, "|text" after the tag) and strict about N (decimal, 1 or more)
// and hh (two hex digits; upper case is taken as lower case).
func parseAnchor(s string) (anchor, error) {
	core := strings.TrimSpace(s)
	if i := strings.IndexByte(core, '|'); i >= 0 {
		core = strings.TrimSpace(core[:i])
	}
	num, tag, ok := strings.Cut(core, ":")
	bad := func(why string) (anchor, error) {
		return anchor{}, errorf("anchor %s is not valid: %s. An anchor is the line number, a colon "+
			"and the two hex digits shown by read_text_file, e.g. \"12:a3\"", quote(s), why)
	}
	if !ok {
		return bad("it has no colon")
	}
	if num == "" || len(num) > maxAnchorDigits || strings.Trim(num, "0123456789") != "" {
		return bad("the line number must be decimal digits")
	}
	line, _ := strconv.Atoi(num)
	if line < 1 {
		return bad("line numbers start at 1")
	}
	if len(tag) != 2 || strings.Trim(tag, "0123456789abcdefABCDEF") != "" {
		return bad("the tag must be two hex digits")
	}
	return anchor{line: line, tag: strings.ToLower(tag)}, nil
}

// Operation kinds.
const (
	opReplace      = "replace"
	opReplaceRange = "replace_range"
	opInsertAfter  = "insert_after"
	opInsertBefore = "insert_before"
	opDelete       = "delete"
	opDeleteRange  = "delete_range"
)

// parsedOp is an Op whose anchors and content have been read.
type parsedOp struct {
	index      int // 0-based position in the call
	kind       string
	start, end anchor   // for single-anchor ops both are the anchor
	texts      []string // new line texts (nil for deletes)
	stripped   bool     // N:hh| prefixes were removed from the content
}

// ranged reports whether the op takes start and end anchors.
func (p parsedOp) ranged() bool {
	return p.kind == opReplaceRange || p.kind == opDeleteRange
}

// short names the op and its anchors: "replace 12:ab", "delete_range 3:aa..5:bb".
func (p parsedOp) short() string {
	if p.ranged() {
		return p.kind + " " + p.start.String() + ".." + p.end.String()
	}
	return p.kind + " " + p.start.String()
}

// describe names the op for messages: "operation 2 (replace 12:ab)".
func (p parsedOp) describe() string {
	return fmt.Sprintf("operation %d (%s)", p.index+1, p.short())
}

// parseOps checks every op's fields and anchors; all syntax problems are reported
// together.
func parseOps(ops []Op) ([]parsedOp, error) {
	var parsed []parsedOp
	var problems []string
	for i, op := range ops {
		p, err := parseOp(i, op)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		parsed = append(parsed, p)
	}
	if len(problems) > 0 {
		return nil, errorf("edit_text_file refused; nothing was changed:\n- %s",
			strings.Join(problems, "\n- "))
	}
	return parsed, nil
}

func parseOp(i int, op Op) (parsedOp, error) {
	p := parsedOp{index: i, kind: op.Op}
	name := fmt.Sprintf("operation %d (%s)", i+1, op.Op)
	var err error
	switch op.Op {
	case opReplace, opInsertAfter, opInsertBefore, opDelete:
		if op.Anchor == "" {
			return p, errorf("%s needs an anchor, e.g. \"anchor\": \"12:a3\"", name)
		}
		if p.start, err = parseAnchor(op.Anchor); err != nil {
			return p, errorf("%s: %v", name, err)
		}
		p.end = p.start
	case opReplaceRange, opDeleteRange:
		if op.Start == "" || op.End == "" {
			return p, errorf("%s needs start and end anchors, e.g. \"start\": \"12:a3\", \"end\": \"15:0e\"", name)
		}
		if p.start, err = parseAnchor(op.Start); err != nil {
			return p, errorf("%s: start: %v", name, err)
		}
		if p.end, err = parseAnchor(op.End); err != nil {
			return p, errorf("%s: end: %v", name, err)
		}
		if p.start.line > p.end.line {
			return p, errorf("%s: start %s comes after end %s", name, p.start, p.end)
		}
	default:
		return p, errorf("operation %d: unknown op %s; use one of replace, replace_range, "+
			"insert_after, insert_before, delete, delete_range", i+1, quote(op.Op))
	}
	deletes := op.Op == opDelete || op.Op == opDeleteRange
	switch {
	case deletes && op.Content != nil && *op.Content != "":
		return p, errorf("%s takes no content; to change the lines use %s", name,
			strings.Replace(op.Op, "delete", "replace", 1))
	case !deletes && op.Content == nil:
		return p, errorf("%s needs content (\"\" for one empty line)", name)
	case !deletes:
		p.texts, p.stripped = stripReadPrefixes(contentLines(*op.Content))
	}
	return p, nil
}

// readPrefix is the "N:hh|" a model may copy from read_text_file output into content.
var readPrefix = regexp.MustCompile(`^[0-9]+:[0-9a-f]{2}\|`)

// stripReadPrefixes removes "N:hh|" prefixes when every line has one: then they were
// copied from a read, not meant as text.
func stripReadPrefixes(texts []string) ([]string, bool) {
	for _, text := range texts {
		if !readPrefix.MatchString(text) {
			return texts, false
		}
	}
	out := make([]string, len(texts))
	for i, text := range texts {
		out[i] = text[len(readPrefix.FindString(text)):]
	}
	return out, true
}

// resolved is an anchor found in the current file.
type resolved struct {
	line int // 1-based line in the current file
	view int // index of the view that gave the anchor's text, or -1 (tag check only)
}

// problem is one reason to refuse the call, with the current line it concerns (for
// the context shown with it).
type problem struct {
	msg  string
	line int // 1-based; may be past the end of the file
}

// resolver finds anchors in the current file.
type resolver struct {
	cur       []string
	views     [][]string
	positions map[string][]int // line text → 1-based lines holding it; built on first use
}

// plan resolves every op to the current lines it replaces or the point it inserts at.
func (r *resolver) plan(ops []parsedOp) ([]plannedOp, []problem) {
	var planned []plannedOp
	var problems []problem
	for _, op := range ops {
		p, prob := r.planOp(op)
		if prob != nil {
			problems = append(problems, *prob)
			continue
		}
		planned = append(planned, p)
	}
	return planned, problems
}

// plannedOp is an op in current-file coordinates: it replaces lines [from, to)
// (0-based) with its texts; from == to is an insert at that point.
type plannedOp struct {
	parsedOp
	from, to int
	moves    []string // "anchor 12:ab moved to line 14"
}

func (r *resolver) planOp(op parsedOp) (plannedOp, *problem) {
	start, end, prob := r.resolveOp(op)
	if prob != nil {
		prob.msg = op.describe() + ": " + prob.msg
		return plannedOp{}, prob
	}
	p := plannedOp{parsedOp: op}
	if start.line != op.start.line {
		p.moves = append(p.moves, fmt.Sprintf("anchor %s moved to line %d", op.start, start.line))
	}
	if op.ranged() && end.line != op.end.line {
		p.moves = append(p.moves, fmt.Sprintf("anchor %s moved to line %d", op.end, end.line))
	}
	switch op.kind {
	case opInsertAfter:
		p.from, p.to = start.line, start.line
	case opInsertBefore:
		p.from, p.to = start.line-1, start.line-1
	default:
		p.from, p.to = start.line-1, end.line
	}
	return p, nil
}

// resolveOp resolves an op's anchors (both the same one for single-anchor ops).
func (r *resolver) resolveOp(op parsedOp) (start, end resolved, prob *problem) {
	if start, prob = r.resolve(op.start); prob != nil || !op.ranged() {
		return start, start, prob
	}
	if end, prob = r.resolve(op.end); prob != nil {
		return start, end, prob
	}
	return start, end, r.checkRange(op, start, end)
}

// resolve finds the current line an anchor stands for (see EditTagged).
func (r *resolver) resolve(a anchor) (resolved, *problem) {
	viewIndex, expected, known := r.expectedText(a)
	if !known {
		return r.resolveByTag(a)
	}
	if a.line <= len(r.cur) && r.cur[a.line-1] == expected {
		return resolved{line: a.line, view: viewIndex}, nil
	}
	lines := r.linesHolding(expected)
	if len(lines) == 1 {
		return resolved{line: lines[0], view: viewIndex}, nil
	}
	now := fmt.Sprintf("the file now has only %s", plural(len(r.cur), "line"))
	if a.line <= len(r.cur) {
		now = fmt.Sprintf("it now holds %s", quote(r.cur[a.line-1]))
	}
	elsewhere := "that text is on no other line"
	if len(lines) > 1 {
		elsewhere = fmt.Sprintf("that text is now on %d lines (%s), so it cannot be relocated",
			len(lines), joinLineNumbers(lines))
	}
	return resolved{}, &problem{
		line: a.line,
		msg: fmt.Sprintf("anchor %s is stale: you were shown line %d as %s, but %s, and %s",
			a, a.line, quote(expected), now, elsewhere),
	}
}

// expectedText is the text of line a.line in the newest view where that line has tag
// a.tag.
func (r *resolver) expectedText(a anchor) (view int, text string, ok bool) {
	for i, view := range r.views {
		if a.line <= len(view) && Tag(view[a.line-1]) == a.tag {
			return i, view[a.line-1], true
		}
	}
	return -1, "", false
}

// resolveByTag accepts an anchor no view vouches for only when line N has tag hh.
func (r *resolver) resolveByTag(a anchor) (resolved, *problem) {
	if a.line > len(r.cur) {
		return resolved{}, &problem{line: a.line, msg: fmt.Sprintf(
			"anchor %s is stale: the file has only %s", a, plural(len(r.cur), "line"))}
	}
	text := r.cur[a.line-1]
	if tag := Tag(text); tag != a.tag {
		return resolved{}, &problem{line: a.line, msg: fmt.Sprintf(
			"anchor %s is stale: line %d now holds %s (tag %s)", a, a.line, quote(text), tag)}
	}
	return resolved{line: a.line, view: -1}, nil
}

// linesHolding lists the 1-based lines whose text is exactly text.
func (r *resolver) linesHolding(text string) []int {
	if r.positions == nil {
		r.positions = make(map[string][]int, len(r.cur))
		for i, line := range r.cur {
			r.positions[line] = append(r.positions[line], i+1)
		}
	}
	return r.positions[text]
}

// checkRange makes sure a range still covers the lines the model saw: its ends must
// be in order, and when both ends came from one view the lines between must be that
// view's lines, unchanged and just as many.
func (r *resolver) checkRange(op parsedOp, start, end resolved) *problem {
	if start.line > end.line {
		return &problem{line: start.line, msg: fmt.Sprintf(
			"start %s resolved to line %d, after end %s at line %d; re-read the lines and "+
				"give the range again", op.start, start.line, op.end, end.line)}
	}
	if start.view < 0 || start.view != end.view {
		return nil
	}
	shift := start.line - op.start.line
	if end.line-op.end.line != shift {
		return &problem{line: start.line, msg: fmt.Sprintf(
			"the lines between start and end changed since you were shown them (the range "+
				"held %s, now %s)", plural(op.end.line-op.start.line+1, "line"),
			plural(end.line-start.line+1, "line"))}
	}
	view := r.views[start.view]
	for n := op.start.line; n <= op.end.line; n++ {
		if was, now := view[n-1], r.cur[n+shift-1]; was != now {
			return &problem{line: n + shift, msg: fmt.Sprintf(
				"line %d inside the range changed since you were shown it: it was %s, now %s",
				n+shift, quote(was), quote(now))}
		}
	}
	return nil
}

// sortForApply puts planned ops in the order they are applied: by position, an insert
// before a replacement at the same point, otherwise in the given order.
func sortForApply(planned []plannedOp) {
	slices.SortStableFunc(planned, func(a, b plannedOp) int {
		if a.from != b.from {
			return a.from - b.from
		}
		switch {
		case a.isInsert() && !b.isInsert():
			return -1
		case !a.isInsert() && b.isInsert():
			return 1
		}
		return 0
	})
}

func (p plannedOp) isInsert() bool { return p.from == p.to }

// checkOverlaps refuses sorted ops that touch the same lines, naming both.
func checkOverlaps(planned []plannedOp) error {
	holder := -1 // the replacing op that reaches furthest down so far
	for i, p := range planned {
		if holder >= 0 && p.from < planned[holder].to {
			h := planned[holder]
			how := fmt.Sprintf("both change line %d", p.from+1)
			if p.isInsert() {
				how = "the insert point is inside the lines the first one changes"
			}
			return errorf("edit_text_file refused; nothing was changed: %s and %s overlap "+
				"(%s). Combine them into one operation.", h.describe(), p.describe(), how)
		}
		if !p.isInsert() && (holder < 0 || p.to > planned[holder].to) {
			holder = i
		}
	}
	return nil
}

// applyPlanned performs the sorted, non-overlapping ops and writes the summary.
func applyPlanned(doc *document, old []byte, planned []plannedOp) (*TaggedEdit, error) {
	splices := make([]splice, len(planned))
	for i, p := range planned {
		splices[i] = splice{start: p.from, end: p.to, lines: doc.terminated(p.texts)}
	}
	lines, spans := doc.apply(splices)
	lines = doc.finish(lines)
	content := doc.join(lines)
	if bytes.Equal(content, old) {
		return nil, errorf("no change: the operations leave the file exactly as it is; " +
			"nothing was written")
	}
	texts := make([]string, len(lines))
	for i, line := range lines {
		texts[i] = lineText(line)
	}
	return &TaggedEdit{
		Content: content,
		Summary: summary(planned, spans, texts, content),
		Lines:   texts,
	}, nil
}

// summaryContext is how many lines around each change the summary shows.
const summaryContext = 2

// summary says which ops applied (in the given order), which anchors moved, and shows
// the fresh tagged lines around each change and the new file_hash.
func summary(planned []plannedOp, spans []span, texts []string, content []byte) string {
	byIndex := slices.Clone(planned)
	slices.SortFunc(byIndex, func(a, b plannedOp) int { return a.index - b.index })
	var b strings.Builder
	names := make([]string, len(byIndex))
	for i, p := range byIndex {
		names[i] = p.short()
	}
	fmt.Fprintf(&b, "Applied %s: %s.\n", plural(len(byIndex), "operation"), strings.Join(names, ", "))
	for _, p := range byIndex {
		for _, move := range p.moves {
			b.WriteString(move + "\n")
		}
		if p.stripped {
			fmt.Fprintf(&b, "operation %d: removed the N:hh| prefixes copied from read output "+
				"from its content\n", p.index+1)
		}
	}
	if len(texts) == 0 {
		b.WriteString("\nThe file is now empty.\n")
	}
	for _, w := range contextWindows(spans, len(texts), summaryContext) {
		fmt.Fprintf(&b, "\nLines %d-%d now:\n", w.start+1, w.end)
		writeTagged(&b, texts, w.start+1, w.end)
	}
	b.WriteString("file_hash: " + FileHash(content))
	return b.String()
}

// contextWindows widens each span by context lines on both sides, clamps them to a
// file of n lines and merges the ones that touch.
func contextWindows(spans []span, n, context int) []span {
	var windows []span
	for _, s := range spans {
		w := span{start: max(s.start-context, 0), end: min(s.end+context, n)}
		if w.start >= w.end {
			continue
		}
		if last := len(windows) - 1; last >= 0 && w.start <= windows[last].end {
			windows[last].end = max(windows[last].end, w.end)
			continue
		}
		windows = append(windows, w)
	}
	return windows
}

// refusalContext is how many lines around a problem a refusal shows.
const refusalContext = 3

// refusal lists the problems, the current tagged lines around each, and the current
// file_hash.
func refusal(cur []string, content []byte, problems []problem) error {
	var b strings.Builder
	b.WriteString("edit_text_file refused; nothing was changed:\n")
	lines := make([]int, len(problems))
	for i, p := range problems {
		b.WriteString("- " + p.msg + "\n")
		lines[i] = p.line
	}
	writeCurrent(&b, cur, content, lines)
	return &Error{Msg: b.String()}
}

// hashMismatch refuses a call whose file_hash is not the current one, showing the
// current lines around the first anchors.
func hashMismatch(cur []string, content []byte, ops []parsedOp) error {
	const shownAnchors = 3
	var b strings.Builder
	b.WriteString("edit_text_file refused; nothing was changed: file_hash does not match; " +
		"the file changed since you read it.\n")
	var lines []int
	for _, op := range ops[:min(len(ops), shownAnchors)] {
		lines = append(lines, op.start.line)
	}
	writeCurrent(&b, cur, content, lines)
	return &Error{Msg: b.String()}
}

// writeCurrent shows the current tagged lines around the given 1-based lines (a line
// past the end shows the end of the file), the current file_hash and what to do.
func writeCurrent(b *strings.Builder, cur []string, content []byte, lines []int) {
	slices.Sort(lines)
	spans := make([]span, len(lines))
	for i, line := range lines {
		at := min(line, len(cur)) - 1
		spans[i] = span{start: max(at, 0), end: max(at+1, 0)}
	}
	windows := contextWindows(spans, len(cur), refusalContext)
	if len(cur) == 0 {
		b.WriteString("\nThe file is empty.\n")
	}
	for _, w := range windows {
		fmt.Fprintf(b, "\nCurrent lines %d-%d:\n", w.start+1, w.end)
		writeTagged(b, cur, w.start+1, w.end)
	}
	b.WriteString("file_hash: " + FileHash(content) + "\n")
	b.WriteString("Re-read the file or use these anchors.")
}

// joinLineNumbers renders up to 10 line numbers as "3, 8, 12".
func joinLineNumbers(lines []int) string {
	const shown = 10
	parts := make([]string, 0, min(len(lines), shown)+1)
	for _, n := range lines[:min(len(lines), shown)] {
		parts = append(parts, strconv.Itoa(n))
	}
	if len(lines) > shown {
		parts = append(parts, "…")
	}
	return strings.Join(parts, ", ")
}
