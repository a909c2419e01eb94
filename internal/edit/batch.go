package edit

// The batch toolkit: read_files, write_files, insert_contents, apply_diffs
// (search_and_replace is in search.go). Result texts are fixed word for word (models
// and tests match them); functions that produce them take the file's name as the
// model should see it.

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// --- read_files

var lineRangePattern = regexp.MustCompile(`^\s*(\d+)\s*-\s*(\d+)\s*$`)

// ParseLineRange reads read_files' line_range, "start-end" (1-based, inclusive).
func ParseLineRange(s string) (start, end int, err error) {
	m := lineRangePattern.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, errorf("Invalid line_range %s: use \"start-end\", e.g. \"1-50\"", quote(s))
	}
	start, err1 := strconv.Atoi(m[1])
	end, err2 := strconv.Atoi(m[2])
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, errorf("Invalid line_range %s: the numbers are too large", quote(s))
	case start < 1:
		return 0, 0, errorf("Invalid line_range %s: line numbers start at 1", quote(s))
	case start > end:
		return 0, 0, errorf("Invalid line_range %s: the start line is after the end line", quote(s))
	}
	return start, end, nil
}

// ReadNumbered renders lines start..end (1-based, inclusive; 0 means the first / the
// last line) as "N | text" lines joined by "\n" (no final newline; "" for an empty
// file), and returns the file's line count. Text is the line without its terminator
// (and without the BOM). A line past the end is the toolkit's error "Line number 50
// exceeds file length (20 lines)".
func ReadNumbered(content []byte, start, end int) (string, int, error) {
	if err := CheckText(content); err != nil {
		return "", 0, err
	}
	texts := LineTexts(content)
	n := len(texts)
	for _, line := range []int{start, end} {
		if line < 0 {
			return "", n, errorf("Line number %d is not valid: lines start at 1", line)
		}
		if line > n {
			return "", n, errorf("Line number %d exceeds file length (%s)", line, plural(n, "line"))
		}
	}
	if start > 0 && end > 0 && start > end {
		return "", n, errorf("Invalid line range %d-%d: the start line is after the end line", start, end)
	}
	from, to := max(start, 1), end
	if end == 0 {
		to = n
	}
	var b strings.Builder
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" | ")
		b.WriteString(texts[i-1])
	}
	return b.String(), n, nil
}

// --- write_files

// CountLines counts content's lines as the line model does: "a\nb" and "a\nb\n" have
// 2, "" has 0.
func CountLines(content string) int {
	n := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		n++
	}
	return n
}

// CheckLineCount is write_files' guard against truncated content: content must have
// lineCount lines (as CountLines counts them).
func CheckLineCount(content string, lineCount int) error {
	if actual := CountLines(content); actual != lineCount {
		return errorf("line_count mismatch: expected %s but the content has %s; the content "+
			"may be truncated. Check it and send the complete content with a matching "+
			"line_count. Nothing was written.", plural(lineCount, "line"), plural(actual, "line"))
	}
	return nil
}

// WrittenFile is one file write_files wrote, for WriteFilesMessage.
type WrittenFile struct {
	Name  string
	Lines int
}

// WriteFilesMessage is write_files' result text: the toolkit's single-file form for one
// file, its list form for several.
func WriteFilesMessage(files []WrittenFile) string {
	if len(files) == 1 {
		return fmt.Sprintf("File written successfully: %s (%d lines)", files[0].Name, files[0].Lines)
	}
	total := 0
	var list strings.Builder
	for _, f := range files {
		total += f.Lines
		fmt.Fprintf(&list, "\n  - %s (%d lines)", f.Name, f.Lines)
	}
	return fmt.Sprintf("Successfully wrote %d files (%d total lines):%s", len(files), total, list.String())
}

// --- insert_contents

// Insertion is a successful insert_contents on one file.
type Insertion struct {
	Content  []byte // the new file
	Position string // where the content went, as the message says it: "3", "end of file"
	Inserted int    // lines inserted
	Lines    int    // lines in the file now
	Message  string // the toolkit's text
}

// InsertContent inserts text (split into lines as the line model says: "" is one
// empty line) at line:
//   - N > 0 inserts before line N, so the text becomes line N; N = lines+1 appends;
//   - 0 appends at the end of the file;
//   - -k inserts before the k-th line from the end (-1: before the last line).
//
// Anything else is an error in the toolkit's "Line number … exceeds file length" form.
func InsertContent(name string, content []byte, line int, text string) (*Insertion, error) {
	if err := CheckText(content); err != nil {
		return nil, err
	}
	doc := parseDocument(content)
	n := len(doc.lines)
	at, position, err := insertPoint(n, line)
	if err != nil {
		return nil, err
	}
	texts := contentLines(text)
	content, lines := doc.spliceLines([]splice{{start: at, end: at, lines: doc.terminated(texts)}})
	in := &Insertion{Content: content, Position: position, Inserted: len(texts), Lines: lines}
	in.Message = fmt.Sprintf("Successfully inserted %d line(s) at position %s in %s. File now has %d lines.",
		in.Inserted, in.Position, name, in.Lines)
	return in, nil
}

// insertPoint turns insert_contents' line into a 0-based insert index for a file of n
// lines, and the position text for the message.
func insertPoint(n, line int) (int, string, error) {
	switch {
	case line == 0:
		return n, "end of file", nil
	case line > 0 && line <= n+1:
		return line - 1, strconv.Itoa(line), nil
	case line > 0:
		return 0, "", errorf("Line number %d exceeds file length (%s); use %d or 0 to append at the end",
			line, plural(n, "line"), n+1)
	case -line <= n:
		return n + line, strconv.Itoa(n + line + 1), nil
	case n == 0:
		return 0, "", errorf("Line number %d exceeds file length (0 lines); the file is empty, "+
			"so use 0 or 1", line)
	default:
		return 0, "", errorf("Line number %d exceeds file length (%s); negative numbers count "+
			"from the end: -1 inserts before the last line, -%d before the first", line, plural(n, "line"), n)
	}
}

// --- apply_diffs

// Diff is one apply_diffs block: the whole lines Search, found near StartLine
// (1-based, counted on the original file), become Replace. Both are split into lines as
// the line model says, except that an empty Replace deletes the lines.
type Diff struct {
	Search    string
	Replace   string
	StartLine int
}

// DiffOutcome is what happened to one Diff.
type DiffOutcome struct {
	StartLine int    // the hint given
	Line      int    // 1-based line of the original file where Search was found; 0 if not
	Status    string // "success", "failed", or "skipped" (found, but an atomic batch failed)
	Message   string

	change string // "1 line(s) at line 25", for the single-diff message
}

// AppliedDiffs is a successful apply_diffs.
type AppliedDiffs struct {
	Content  []byte // the new file
	Outcomes []DiffOutcome
	Applied  int    // diffs applied
	Lines    int    // lines in the file now
	Message  string // the toolkit's text
}

// Diff statuses.
const (
	statusSuccess = "success"
	statusFailed  = "failed"
	statusSkipped = "skipped"
)

// ApplyDiffs performs apply_diffs on one file. Every block is located on the original
// file: at its StartLine if it matches there, else at the matching position nearest to
// StartLine (on a tie, the earlier one). Lines match exactly, or with trim after
// strings.TrimSpace on both sides; replacements are inserted as given, in the file's
// line ending. Blocks must not overlap; they are applied together, so StartLines need
// no adjusting for earlier blocks.
//
// atomic: any block that fails leaves the file unchanged and the call is an error.
// Otherwise the blocks found are applied and the others reported as failed (an error
// only when none applied). The message is the toolkit's single-diff text for one diff and
// its "Batch diff operation" text for several.
func ApplyDiffs(name string, content []byte, diffs []Diff, atomic, trim bool) (*AppliedDiffs, error) {
	if err := CheckText(content); err != nil {
		return nil, err
	}
	if len(diffs) == 0 {
		return nil, errorf("No diffs given: pass search_content, replace_content and start_line")
	}
	doc := parseDocument(content)
	outcomes, splices := locateDiffs(doc, diffs, trim)
	failed := 0
	for _, o := range outcomes {
		if o.Status == statusFailed {
			failed++
		}
	}
	if failed > 0 && atomic {
		markSkipped(outcomes)
		splices = nil
	}
	content, lines := doc.spliceLines(splices)
	res := &AppliedDiffs{Content: content, Outcomes: outcomes, Applied: len(splices), Lines: lines}
	if len(diffs) == 1 {
		return singleDiffResult(name, res)
	}
	return batchDiffResult(name, res, atomic)
}

// locateDiffs finds every diff on the original file and returns the outcomes and, for
// the diffs found that do not overlap an earlier one, the splices in file order.
func locateDiffs(doc *document, diffs []Diff, trim bool) ([]DiffOutcome, []splice) {
	m := newBlockMatcher(doc.texts(), trim)
	outcomes := make([]DiffOutcome, len(diffs))
	var found []splice
	var owners []int // index of the diff behind each found splice
	for i, d := range diffs {
		o := &outcomes[i]
		o.StartLine = d.StartLine
		search := contentLines(d.Search)
		at, why := m.locate(d, search)
		if at < 0 {
			o.Status, o.Message = statusFailed, why
			continue
		}
		sp := splice{start: at, end: at + len(search), lines: doc.terminated(replacementTexts(d.Replace))}
		if j := overlapping(found, sp); j >= 0 {
			other := found[j]
			o.Status = statusFailed
			o.Message = fmt.Sprintf("Found at line %d, but it overlaps diff %d (lines %d-%d); merge "+
				"the two into one diff", at+1, owners[j]+1, other.start+1, other.end)
			continue
		}
		o.Status, o.Line = statusSuccess, at+1
		o.change = changeText(len(search), len(sp.lines), at+1)
		o.Message = "Replaced " + o.change
		found = append(found, sp)
		owners = append(owners, i)
	}
	return outcomes, sortedSplices(found)
}

// overlapping returns the index of a splice in found that shares a line with sp, or -1.
func overlapping(found []splice, sp splice) int {
	for j, f := range found {
		if sp.start < f.end && f.start < sp.end {
			return j
		}
	}
	return -1
}

func sortedSplices(splices []splice) []splice {
	out := slices.Clone(splices)
	slices.SortFunc(out, func(a, b splice) int { return a.start - b.start })
	return out
}

// markSkipped turns the successes of a failed atomic batch into "skipped".
func markSkipped(outcomes []DiffOutcome) {
	for i := range outcomes {
		if o := &outcomes[i]; o.Status == statusSuccess {
			o.Status = statusSkipped
			o.Message = fmt.Sprintf("Found at line %d but not applied: atomic mode and another diff failed", o.Line)
		}
	}
}

// changeText is the toolkit's "4 line(s) at line 10 (added 1 line(s))", which follows
// "replaced" in its messages.
func changeText(oldLines, newLines, line int) string {
	text := fmt.Sprintf("%d line(s) at line %d", oldLines, line)
	switch {
	case newLines > oldLines:
		text += fmt.Sprintf(" (added %d line(s))", newLines-oldLines)
	case newLines < oldLines:
		text += fmt.Sprintf(" (removed %d line(s))", oldLines-newLines)
	}
	return text
}

func singleDiffResult(name string, res *AppliedDiffs) (*AppliedDiffs, error) {
	o := res.Outcomes[0]
	if o.Status != statusSuccess {
		return nil, errorf("Failed to apply diff to %s: %s. Nothing was changed.", name, o.Message)
	}
	res.Message = fmt.Sprintf("Successfully applied diff to %s: replaced %s. File now has %d lines.",
		name, o.change, res.Lines)
	return res, nil
}

func batchDiffResult(name string, res *AppliedDiffs, atomic bool) (*AppliedDiffs, error) {
	mode := "non-atomic"
	if atomic {
		mode = "atomic"
	}
	var details strings.Builder
	details.WriteString("\n\nDetailed results:")
	for i, o := range res.Outcomes {
		fmt.Fprintf(&details, "\n\nDiff %d:\n  Status: %s\n  Start Line: %d\n  Message: %s",
			i+1, o.Status, o.StartLine, o.Message)
	}
	total := len(res.Outcomes)
	if res.Applied == 0 {
		return nil, errorf("Batch diff operation (%s) failed: 0/%d diffs applied to %s; no changes "+
			"were made. Fix the failed diffs and send the whole batch again.%s",
			mode, total, name, details.String())
	}
	res.Message = fmt.Sprintf("Batch diff operation (%s) completed: %d/%d diffs applied successfully "+
		"to %s. File now has %d lines.%s", mode, res.Applied, total, name, res.Lines, details.String())
	return res, nil
}

// blockMatcher finds blocks of whole lines in a file's lines.
type blockMatcher struct {
	lines []string // the file's line texts, trimmed when trim is set
	trim  bool
}

func newBlockMatcher(texts []string, trim bool) *blockMatcher {
	m := &blockMatcher{trim: trim}
	m.lines = m.normalize(texts)
	return m
}

// normalize prepares line texts for comparison: trimmed when the matcher trims.
func (m *blockMatcher) normalize(texts []string) []string {
	if !m.trim {
		return texts
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = strings.TrimSpace(t)
	}
	return out
}

// locate returns the 0-based line where search (line texts) is found for d, or -1
// and the reason.
func (m *blockMatcher) locate(d Diff, search []string) (int, string) {
	switch {
	case d.Search == "":
		return -1, "search_content is empty; give the exact lines to replace"
	case d.StartLine < 1:
		return -1, fmt.Sprintf("start_line %d is not a line number; lines start at 1", d.StartLine)
	}
	if at := m.nearest(m.normalize(search), d.StartLine-1); at >= 0 {
		return at, ""
	}
	return -1, m.explainMiss(search, d.StartLine)
}

// nearest finds want at hint or at the matching position closest to it, the earlier
// one on a tie; -1 if nowhere.
func (m *blockMatcher) nearest(want []string, hint int) int {
	last := len(m.lines) - len(want) // the last position a block can start at
	if last < 0 {
		return -1
	}
	hint = min(hint, last)
	for d := 0; hint-d >= 0 || hint+d <= last; d++ {
		if up := hint - d; up >= 0 && m.matchesAt(want, up) {
			return up
		}
		if down := hint + d; d > 0 && down <= last && m.matchesAt(want, down) {
			return down
		}
	}
	return -1
}

func (m *blockMatcher) matchesAt(want []string, at int) bool {
	for i, w := range want {
		if m.lines[at+i] != w {
			return false
		}
	}
	return true
}

// explainMiss says why search was not found and what nearly matched.
func (m *blockMatcher) explainMiss(search []string, startLine int) string {
	msg := fmt.Sprintf("search_content (%s) not found at line %d or anywhere else in the file",
		plural(len(search), "line"), startLine)
	if !m.trim {
		loose := newBlockMatcher(m.lines, true)
		if at := loose.nearest(loose.normalize(search), startLine-1); at >= 0 {
			return msg + fmt.Sprintf("; it matches at line %d if leading and trailing whitespace "+
				"is ignored: copy the file's exact whitespace or pass trim=true", at+1)
		}
	}
	if at := m.nearest(m.normalize(search[:1]), startLine-1); at >= 0 && len(search) > 1 {
		return msg + fmt.Sprintf("; its first line matches line %d but the lines after it differ: "+
			"read the file again and copy the lines exactly", at+1)
	}
	return msg + "; read the file again and copy the lines exactly"
}

// replacementTexts turns replace_content into the line texts to write: "" deletes the
// block.
func replacementTexts(replace string) []string {
	if replace == "" {
		return nil
	}
	return contentLines(replace)
}
