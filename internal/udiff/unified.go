package udiff

import (
	"bytes"
	"strconv"
	"strings"
)

// devNull names the absent side of a creation or deletion.
const devNull = "/dev/null"

// noNewlineMarker follows a hunk line that has no newline at the end of the file.
const noNewlineMarker = "\\ No newline at end of file\n"

// Diff computes the diff of old → new with the given lines of context (negative counts
// as 0). Hunks whose contexts overlap or touch are merged, as diff -u does. Equal
// contents give a FileDiff without hunks.
func Diff(oldName, newName string, old, new []byte, context int) *FileDiff {
	context = max(context, 0)
	w := changedWindow(old, new, context)
	a, b := SplitLines(old[w.start:w.oldEnd]), SplitLines(new[w.start:w.newEnd])
	hunks := makeHunks(a, b, Lines(a, b), context)
	for i := range hunks {
		hunks[i].OldStart += w.line
		hunks[i].NewStart += w.line
	}
	return &FileDiff{OldName: oldName, NewName: newName, Hunks: hunks}
}

// window is the part of two texts that holds all their differing lines plus the
// context lines around them: old[start:oldEnd] and new[start:newEnd], starting at
// 0-based line number line. Outside it both texts are equal.
type window struct{ start, oldEnd, newEnd, line int }

// changedWindow finds the window by comparing bytes, so that a small change to a huge
// file costs no more than a few scans of memory instead of splitting every line.
func changedWindow(old, new []byte, context int) window {
	prefix := CommonPrefixLen(old, new)
	prefix = bytes.LastIndexByte(old[:prefix], '\n') + 1 // whole lines
	suffix := commonSuffixLen(old[prefix:], new[prefix:])
	// The suffix must start a line in both texts: cut it after a newline inside it.
	if i := bytes.IndexByte(old[len(old)-suffix:], '\n'); i >= 0 {
		suffix -= i + 1
	} else {
		suffix = 0
	}
	start := startOfLastLines(old[:prefix], context)
	after := endOfFirstLines(old[len(old)-suffix:], context)
	return window{
		start:  start,
		oldEnd: len(old) - suffix + after,
		newEnd: len(new) - suffix + after,
		line:   bytes.Count(old[:start], []byte("\n")),
	}
}

// compareChunk is the block size for comparing with bytes.Equal, which is vectorized.
const compareChunk = 4096

// CommonPrefixLen is how many bytes a and b begin with alike.
func CommonPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+compareChunk <= n && bytes.Equal(a[i:i+compareChunk], b[i:i+compareChunk]) {
		i += compareChunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+compareChunk <= n && bytes.Equal(a[len(a)-i-compareChunk:len(a)-i], b[len(b)-i-compareChunk:len(b)-i]) {
		i += compareChunk
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// startOfLastLines returns where the last n lines of s start; s is empty or ends in
// a newline.
func startOfLastLines(s []byte, n int) int {
	start := len(s)
	for ; n > 0 && start > 0; n-- {
		start = bytes.LastIndexByte(s[:start-1], '\n') + 1
	}
	return start
}

// endOfFirstLines returns where the first n lines of s end.
func endOfFirstLines(s []byte, n int) int {
	end := 0
	for ; n > 0 && end < len(s); n-- {
		i := bytes.IndexByte(s[end:], '\n')
		if i < 0 {
			return len(s)
		}
		end += i + 1
	}
	return end
}

// Unified renders the unified diff of old → new with the given lines of context,
// headed "--- a/<oldName>" / "+++ b/<newName>" ("/dev/null" for an absent side when the
// name is "/dev/null"). It returns "" when old and new are equal.
func Unified(oldName, newName string, old, new []byte, context int) string {
	return Diff(oldName, newName, old, new, context).String()
}

// makeHunks groups the edits into hunks: two edits share a hunk when at most
// 2*context unchanged lines separate them.
func makeHunks(a, b []string, edits []Edit, context int) []Hunk {
	var hunks []Hunk
	for len(edits) > 0 {
		n := 1
		for n < len(edits) && edits[n].OldStart-edits[n-1].OldEnd <= 2*context {
			n++
		}
		hunks = append(hunks, makeHunk(a, b, edits[:n], context))
		edits = edits[n:]
	}
	return hunks
}

func makeHunk(a, b []string, group []Edit, context int) Hunk {
	first, last := group[0], group[len(group)-1]
	oldStart := max(first.OldStart-context, 0)
	oldEnd := min(last.OldEnd+context, len(a))
	newStart := first.NewStart - (first.OldStart - oldStart)
	newEnd := last.NewEnd + (oldEnd - last.OldEnd)

	var lines []Line
	at := oldStart
	for _, e := range group {
		lines = appendLines(lines, Context, a[at:e.OldStart])
		lines = appendLines(lines, Delete, a[e.OldStart:e.OldEnd])
		lines = appendLines(lines, Insert, b[e.NewStart:e.NewEnd])
		at = e.OldEnd
	}
	lines = appendLines(lines, Context, a[at:oldEnd])
	return Hunk{
		OldStart: headerStart(oldStart, oldEnd-oldStart), OldLines: oldEnd - oldStart,
		NewStart: headerStart(newStart, newEnd-newStart), NewLines: newEnd - newStart,
		Lines: lines,
	}
}

func appendLines(lines []Line, kind LineKind, texts []string) []Line {
	for _, t := range texts {
		lines = append(lines, Line{kind, t})
	}
	return lines
}

// headerStart converts a 0-based start to a header's: 1-based, or for an empty side
// the number of the line before.
func headerStart(start0, count int) int {
	if count == 0 {
		return start0
	}
	return start0 + 1
}

// String renders d as unified diff text; Parse(d.String()) gives d back. A diff
// without hunks renders as "".
func (d *FileDiff) String() string {
	if len(d.Hunks) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("--- " + headerName("a/", d.OldName) + "\n")
	sb.WriteString("+++ " + headerName("b/", d.NewName) + "\n")
	for _, h := range d.Hunks {
		sb.WriteString("@@ -" + strconv.Itoa(h.OldStart) + "," + strconv.Itoa(h.OldLines) +
			" +" + strconv.Itoa(h.NewStart) + "," + strconv.Itoa(h.NewLines) + " @@\n")
		for _, l := range h.Lines {
			sb.WriteByte(byte(l.Kind))
			sb.WriteString(l.Text)
			if !strings.HasSuffix(l.Text, "\n") {
				sb.WriteString("\n" + noNewlineMarker)
			}
		}
	}
	return sb.String()
}

// headerName is the name as written after "--- " or "+++ ": prefixed with "a/" or
// "b/", and quoted like git does when it holds characters that would break the line.
func headerName(prefix, name string) string {
	if name == devNull {
		return name
	}
	name = prefix + name
	if strings.ContainsAny(name, "\"\\\t\n\r") {
		return strconv.Quote(name)
	}
	return name
}

// parseHeaderName reads the name of a "--- " or "+++ " line (given without that
// prefix): quoted or not, without a "\t<timestamp>" suffix, without the "a/" or "b/"
// prefix.
func parseHeaderName(s, prefix string) string {
	s = strings.TrimRight(s, "\r\n")
	if quoted, err := strconv.QuotedPrefix(s); err == nil && s[0] == '"' {
		s, _ = strconv.Unquote(quoted)
	} else if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if s == devNull {
		return s
	}
	return strings.TrimPrefix(s, prefix)
}
