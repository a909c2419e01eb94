package udiff

import (
	"bytes"
	"fmt"
	"strings"
)

// ApplyNearestEOL is ApplyNearest for a diff written by a model, which rarely gets
// line breaks right:
//   - lines are compared without their line breaks ("\n", "\r\n", or none on the last
//     line of the file), so an LF diff applies to a CRLF file and the other way round;
//   - unchanged lines keep the file's bytes, and inserted lines get the file's line
//     break ("\r\n" when the file's first line ends in "\r\n", else "\n");
//   - the file's final-newline state is kept, unless the diff's last hunk reaches the
//     end of the file and has a "\ No newline at end of file" marker: then the diff
//     says how the file ends.
//
// Lines still must be equal otherwise: no whitespace or fuzzy matching.
func ApplyNearestEOL(old []byte, d *FileDiff) ([]byte, error) { return d.apply(old, nearestAnyEOL) }

// applyMode says how hunks are placed and lines compared.
type applyMode int

const (
	atHeader      applyMode = iota // at the header's line, bytes equal
	nearest                        // nearest match to the header's line, bytes equal
	nearestAnyEOL                  // nearest match, line breaks ignored
)

type applier struct {
	mode applyMode
	file []string // lines of the old file
	eol  string   // line break for inserted lines in nearestAnyEOL mode
	out  []byte   // the new file so far
}

func (d *FileDiff) apply(old []byte, mode applyMode) ([]byte, error) {
	if len(d.Hunks) == 0 {
		return bytes.Clone(old), nil
	}
	a := &applier{mode: mode, file: SplitLines(old), eol: "\n", out: make([]byte, 0, len(old)+len(old)/8)}
	if len(a.file) > 0 && strings.HasSuffix(a.file[0], "\r\n") {
		a.eol = "\r\n"
	}
	done := 0 // a.file[:done] is accounted for in a.out
	for i := range d.Hunks {
		h := &d.Hunks[i]
		oldSide := h.oldSide()
		at, err := a.find(i+1, h, oldSide, done)
		if err != nil {
			return nil, err
		}
		if err := a.push(i+1, h, a.file[done:at]...); err != nil {
			return nil, err
		}
		if err := a.pushHunk(i+1, h, at); err != nil {
			return nil, err
		}
		done = at + len(oldSide)
	}
	last := &d.Hunks[len(d.Hunks)-1]
	if err := a.push(len(d.Hunks), last, a.file[done:]...); err != nil {
		return nil, err
	}
	if mode == nearestAnyEOL && done == len(a.file) && !hasNoNewlineLine(last) {
		a.keepFinalNewlineState()
	}
	return a.out, nil
}

// oldSide returns the lines the hunk expects in the old file: context and deleted.
func (h *Hunk) oldSide() []string {
	var lines []string
	for _, l := range h.Lines {
		if l.Kind == Context || l.Kind == Delete {
			lines = append(lines, l.Text)
		}
	}
	return lines
}

// oldStart0 is the 0-based index in the old file where the hunk's old side starts.
func oldStart0(h Hunk) int {
	if h.OldLines == 0 {
		return h.OldStart // the header names the line before an insertion
	}
	return h.OldStart - 1
}

func hasNoNewlineLine(h *Hunk) bool {
	for _, l := range h.Lines {
		if !strings.HasSuffix(l.Text, "\n") {
			return true
		}
	}
	return false
}

// push appends lines to the output. A line without a newline can only end the
// file: in nearestAnyEOL mode it gets a line break when more follows, otherwise the
// diff is inconsistent with the file.
func (a *applier) push(n int, h *Hunk, lines ...string) error {
	if len(lines) == 0 {
		return nil
	}
	if len(a.out) > 0 && a.out[len(a.out)-1] != '\n' {
		if a.mode != nearestAnyEOL {
			lastLine := string(a.out[bytes.LastIndexByte(a.out, '\n')+1:])
			return &ApplyError{Hunk: n, Line: oldStart0(*h) + 1, Reason: fmt.Sprintf(
				"the line %s has no newline at end of file, but this hunk puts more lines after it",
				quoteLine(lastLine))}
		}
		a.out = append(a.out, a.eol...)
	}
	for _, l := range lines {
		a.out = append(a.out, l...)
	}
	return nil
}

// pushHunk appends the new side of h, found at line at of the old file. Context lines
// are copied from the file, so they keep its bytes.
func (a *applier) pushHunk(n int, h *Hunk, at int) error {
	for _, l := range h.Lines {
		var err error
		switch l.Kind {
		case Context:
			err = a.push(n, h, a.file[at])
			at++
		case Delete:
			at++
		default:
			err = a.push(n, h, a.inserted(l.Text))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// inserted is the text to write for an inserted line: as in the diff, or in
// nearestAnyEOL mode with the file's line break.
func (a *applier) inserted(text string) string {
	if a.mode == nearestAnyEOL && strings.HasSuffix(text, "\n") {
		return withoutBreak(text) + a.eol
	}
	return text
}

// keepFinalNewlineState removes the last line break of the output when the old file
// had none at its end.
func (a *applier) keepFinalNewlineState() {
	n := len(a.file)
	if n == 0 || strings.HasSuffix(a.file[n-1], "\n") || !bytes.HasSuffix(a.out, []byte("\n")) {
		return
	}
	a.out = bytes.TrimSuffix(a.out[:len(a.out)-1], []byte("\r"))
}

func withoutBreak(s string) string {
	return strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
}

func (a *applier) same(fileLine, diffLine string) bool {
	if a.mode == nearestAnyEOL {
		return withoutBreak(fileLine) == withoutBreak(diffLine)
	}
	return fileLine == diffLine
}

// matched returns how many of want match the file from line at on.
func (a *applier) matched(want []string, at int) int {
	for k, w := range want {
		if !a.same(a.file[at+k], w) {
			return k
		}
	}
	return len(want)
}

// find returns where the hunk's old side starts in the file, at or after line from.
func (a *applier) find(n int, h *Hunk, oldSide []string, from int) (int, error) {
	want := oldStart0(*h)
	last := len(a.file) - len(oldSide) // the last place the old side fits
	if a.mode == atHeader {
		if want >= from && want <= last && a.matched(oldSide, want) == len(oldSide) {
			return want, nil
		}
		return 0, a.notFound(n, oldSide, want, max(want, from), min(want, last))
	}
	// Search outward from the header line, clamped into [from, last]; the clamp keeps
	// the order of distances.
	w := min(max(want, from), last)
	for dist := 0; w-dist >= from || w+dist <= last; dist++ {
		if p := w - dist; p >= from && a.matched(oldSide, p) == len(oldSide) {
			return p, nil
		}
		if p := w + dist; dist > 0 && p <= last && a.matched(oldSide, p) == len(oldSide) {
			return p, nil
		}
	}
	return 0, a.notFound(n, oldSide, want, from, last)
}

// notFound explains why the old side matches at no place in [lo, hi]: it names the
// place where most of its first lines match, and the first line that differs there.
func (a *applier) notFound(n int, oldSide []string, want, lo, hi int) *ApplyError {
	e := &ApplyError{Hunk: n, Line: want + 1}
	region := "in the file"
	if a.mode != atHeader && lo > 0 {
		region = fmt.Sprintf("after line %d, where hunk %d ends", lo, n-1)
	}
	if hi < lo {
		switch {
		case a.mode == atHeader && want < lo:
			e.Reason = fmt.Sprintf("it starts at line %d, inside the previous hunk", want+1)
		case a.mode == atHeader:
			e.Reason = fmt.Sprintf("the file has %d lines, too few for its %d context and deleted lines at line %d",
				len(a.file), len(oldSide), want+1)
		default:
			e.Reason = fmt.Sprintf("these lines were not found in the file: %d lines remain %s, fewer than its %d context and deleted lines",
				len(a.file)-lo, region, len(oldSide))
		}
		return e
	}
	best, bestK := lo, -1
	for p := lo; p <= hi; p++ {
		if k := a.matched(oldSide, p); k > bestK || (k == bestK && abs(p-want) < abs(best-want)) {
			best, bestK = p, k
		}
	}
	fileLine, diffLine := a.file[best+bestK], oldSide[bestK]
	switch {
	case a.mode == atHeader:
		e.Reason = fmt.Sprintf("line %d of the file is %s but the hunk has %s", best+bestK+1, quoteLine(fileLine), quoteLine(diffLine))
	case bestK == 0:
		e.Reason = fmt.Sprintf("these lines were not found in the file: its first context or deleted line %s occurs nowhere %s",
			quoteLine(diffLine), region)
	default:
		e.Reason = fmt.Sprintf("these lines were not found in the file: the closest match starts at line %d, "+
			"but line %d of the file is %s where the hunk has %s", best+1, best+bestK+1, quoteLine(fileLine), quoteLine(diffLine))
	}
	if a.mode != atHeader {
		e.Reason += "; read the file again and copy the context and deleted lines exactly"
	}
	return e
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// quoteLine quotes a line for an error message, without its line break and cut to a
// readable length.
func quoteLine(s string) string {
	s = withoutBreak(s)
	if len(s) > 120 {
		return fmt.Sprintf("%q…", s[:120])
	}
	return fmt.Sprintf("%q", s)
}

// Blocks splits d's hunks into zero-context change blocks, in order.
func (d *FileDiff) Blocks() []Block {
	var blocks []Block
	for _, h := range d.Hunks {
		at := oldStart0(h)
		inBlock := false // the last line was a change, so blocks[len-1] is growing
		for _, l := range h.Lines {
			if l.Kind == Context {
				inBlock = false
				at++
				continue
			}
			if !inBlock {
				blocks = append(blocks, Block{OldStart: at})
				inBlock = true
			}
			b := &blocks[len(blocks)-1]
			if l.Kind == Delete {
				b.Old = append(b.Old, l.Text)
				at++
			} else {
				b.New = append(b.New, l.Text)
			}
		}
	}
	return blocks
}
