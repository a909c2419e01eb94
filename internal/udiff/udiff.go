// Package udiff computes line diffs and writes, reads and applies unified diffs.
//
// Lines keep their terminators everywhere in this package: "a\n", "b\r\n", and a
// final "c" without one. Joining the lines of a file gives back its exact bytes, so
// every diff round-trips byte for byte (CRLF, missing final newline, empty files).
//
// The files: lines.go computes line diffs, unified.go renders unified diffs, parse.go
// reads them (strictly, or leniently for diffs written by a model) and apply.go
// applies, reverses and splits them.
package udiff

import "fmt"

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

// Block is one change with no context, in the coordinates of the old file:
// lines Old starting at OldStart (0-based) were replaced by New.
type Block struct {
	OldStart int
	Old, New []string
}

// ApplyError says which hunk did not apply and why.
type ApplyError struct {
	Hunk   int // 1-based
	Line   int // 1-based line in the old file where it was expected
	Reason string
}

func (e *ApplyError) Error() string { return fmt.Sprintf("hunk %d: %s", e.Hunk, e.Reason) }
