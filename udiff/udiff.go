// Package udiff computes line diffs and writes, reads and applies unified diffs.
//
// Lines keep their terminators everywhere in this package: "a\n", "b\r\n", and a
// final "c" without one. Joining the lines of a file gives back its exact bytes, so
// every diff round-trips byte for byte (CRLF, missing final newline, empty files).
package udiff

// SplitLines splits b after each "\n". Every element but the last ends in "\n"; the
// last one ends in "\n" too unless b lacks a final newline. strings.Join(SplitLines(b), "")
// equals string(b). An empty b gives no lines.
func SplitLines(b []byte) []string { panic("TODO") }

// Edit is one block of change with no context: a[OldStart:OldEnd] became
// b[NewStart:NewEnd]. Indexes are 0-based.
type Edit struct{ OldStart, OldEnd, NewStart, NewEnd int }

// Lines returns the edits that turn a into b, in increasing order; two edits are never
// adjacent (they would have been merged). The result is minimal or close to it:
// patience anchoring on unique lines, Myers inside the gaps.
func Lines(a, b []string) []Edit { panic("TODO") }

// Unified renders the unified diff of old → new with the given lines of context,
// headed "--- a/<oldName>" / "+++ b/<newName>" ("/dev/null" for an absent side when the
// name is "/dev/null"). It returns "" when old and new are equal.
func Unified(oldName, newName string, old, new []byte, context int) string { panic("TODO") }

// LineKind is the first column of a hunk line.
type LineKind byte

const (
	Context LineKind = ' '
	Delete  LineKind = '-'
	Insert  LineKind = '+'
)

// Line is one line of a hunk. Text keeps its terminator, except a final line without
// newline (shown in the diff by "\ No newline at end of file").
type Line struct {
	Kind LineKind
	Text string
}

// Hunk is one "@@ -OldStart,OldLines +NewStart,NewLines @@" section. Starts are 1-based
// as in the header (0 for an empty side).
type Hunk struct {
	OldStart, OldLines, NewStart, NewLines int
	Lines                                  []Line
}

// FileDiff is the diff of one file.
type FileDiff struct {
	OldName, NewName string
	Hunks            []Hunk
}

// Parse reads a diff made by Unified (or git/diff -u). Header counts must match
// the hunk bodies.
func Parse(text string) ([]*FileDiff, error) { panic("TODO") }

// ParseLenient reads one file's diff written by a model: "---"/"+++" headers are
// optional, hunk counts are recomputed from the body, "@@ @@" without numbers is
// accepted (position then found by content).
func ParseLenient(text string) (*FileDiff, error) { panic("TODO") }

// String renders d as unified diff text; Parse(d.String()) gives d back.
func (d *FileDiff) String() string { panic("TODO") }

// Apply applies d strictly: every hunk must match at exactly its header position.
func (d *FileDiff) Apply(old []byte) ([]byte, error) { panic("TODO") }

// ApplyNearest applies d when each hunk's context and deleted lines match exactly,
// at the matching position nearest to its header line (hunks stay in order and must not
// overlap). No fuzz: a hunk whose lines are not found is an *ApplyError.
func (d *FileDiff) ApplyNearest(old []byte) ([]byte, error) { panic("TODO") }

// Reverse returns the diff that undoes d.
func (d *FileDiff) Reverse() *FileDiff { panic("TODO") }

// Block is one change with no context, in the coordinates of the old file:
// lines Old starting at OldStart (0-based) were replaced by New.
type Block struct {
	OldStart int
	Old, New []string
}

// Blocks splits d's hunks into zero-context change blocks, in order.
func (d *FileDiff) Blocks() []Block { panic("TODO") }

// ApplyError says which hunk did not apply and why.
type ApplyError struct {
	Hunk   int // 1-based
	Line   int // 1-based line in the old file where it was expected
	Reason string
}

func (e *ApplyError) Error() string { panic("TODO") }
