package edit

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// textOnly makes fuzz input a text file: NUL bytes become spaces.
func textOnly(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte{0}, []byte{' '})
}

// mustBeEditError fails unless err is an *Error: every refusal must explain itself.
func mustBeEditError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Msg == "" {
		t.Fatalf("refusal is not an *edit.Error with a message: %v (%T)", err, err)
	}
}

func FuzzParseAnchor(f *testing.F) {
	for _, seed := range []string{"12:ab", " 3:0F|text", "0:00", "1:zz", "99999999999:00", ":", "|", "1:ab|x|y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, err := parseAnchor(in)
		if err != nil {
			mustBeEditError(t, err)
			return
		}
		if a.line < 1 || len(a.tag) != 2 || strings.Trim(a.tag, "0123456789abcdef") != "" {
			t.Fatalf("parseAnchor(%q) = %+v", in, a)
		}
		if again, err := parseAnchor(a.String()); err != nil || again != a {
			t.Fatalf("%q does not parse back: %+v, %v", a.String(), again, err)
		}
	})
}

// fuzzOps turns program bytes into edit_text_file ops on a file whose line texts are
// texts: 4 bytes per op (kind, line, range length, tag and content choice).
func fuzzOps(texts []string, program []byte) []Op {
	kinds := []string{opReplace, opReplaceRange, opInsertAfter, opInsertBefore, opDelete, opDeleteRange}
	contents := []string{"", "x", "a\nb", "c\r\nd\n", "1:00|p"}
	n := len(texts)
	var ops []Op
	for ; len(program) >= 4 && len(ops) < 8; program = program[4:] {
		b := program[:4]
		anchor := func(line int) string {
			tag := "00"
			if line <= n {
				tag = Tag(texts[line-1])
			}
			if b[3]%5 == 4 {
				tag = otherTag(tag)
			}
			return fmt.Sprintf("%d:%s", line, tag)
		}
		first := int(b[1])%(n+2) + 1
		op := Op{Op: kinds[int(b[0])%len(kinds)]}
		if op.Op == opReplaceRange || op.Op == opDeleteRange {
			op.Start, op.End = anchor(first), anchor(first+int(b[2]%3))
		} else {
			op.Anchor = anchor(first)
		}
		if !strings.HasPrefix(op.Op, "delete") {
			op.Content = s(contents[int(b[3])%len(contents)])
		}
		ops = append(ops, op)
	}
	return ops
}

func FuzzEditTagged(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte{0, 1, 0, 0}, true)
	f.Add([]byte("a\r\nb\r\nc"), []byte{1, 2, 1, 1, 4, 0, 0, 2}, false)
	f.Add([]byte(utf8BOM+"x\n\ny\n"), []byte{5, 0, 2, 3, 2, 3, 0, 0, 3, 3, 0, 1}, true)
	f.Add([]byte(""), []byte{2, 0, 0, 1}, false)
	f.Fuzz(func(t *testing.T, file, program []byte, withView bool) {
		file = textOnly(file)
		texts := LineTexts(file)
		ops := fuzzOps(texts, program)
		var views [][]string
		if withView {
			views = [][]string{texts}
		}
		res, err := EditTagged(file, "", ops, views)
		if err != nil {
			mustBeEditError(t, err)
			return
		}
		checkUntouched(t, file, ops, res)
	})
}

// checkUntouched checks a successful EditTagged whose anchors all name their own line
// (true when the views are the current file): the line count adds up, and the lines no
// op touched are all there, in order, with their bytes (bar the terminator of a line
// that is or was the last, which follows the final-newline state).
func checkUntouched(t *testing.T, file []byte, ops []Op, res *TaggedEdit) {
	t.Helper()
	before, after := parseDocument(file), parseDocument(res.Content)
	if before.bom != after.bom {
		t.Fatalf("BOM changed: %q → %q", before.bom, after.bom)
	}
	touched := map[int]bool{}
	inserted := 0
	for _, op := range ops {
		first, _ := parseAnchor(op.Anchor + op.Start)
		last := first
		if op.End != "" {
			last, _ = parseAnchor(op.End)
		}
		if op.Op != opInsertAfter && op.Op != opInsertBefore {
			for n := first.line; n <= last.line; n++ {
				touched[n-1] = true
			}
		}
		if op.Content != nil && !strings.HasPrefix(op.Op, "delete") {
			inserted += len(contentLines(*op.Content))
		}
	}
	if got, want := len(after.lines), len(before.lines)-len(touched)+inserted; got != want {
		t.Fatalf("file has %d lines, want %d", got, want)
	}
	// Lines match byte for byte, except that the last line of either file may have
	// gained or lost its terminator. Terminating a last line that ends in a lone "\r" makes
	// that "\r" part of a CRLF.
	same := func(i, j int) bool {
		if i < len(before.lines)-1 && j < len(after.lines)-1 {
			return before.lines[i] == after.lines[j]
		}
		text := func(line string) string { return strings.TrimRight(lineText(line), "\r") }
		return text(before.lines[i]) == text(after.lines[j])
	}
	j := 0
	for i, line := range before.lines {
		if touched[i] {
			continue
		}
		for j < len(after.lines) && !same(i, j) {
			j++
		}
		if j == len(after.lines) {
			t.Fatalf("untouched line %d %q is missing or changed in %q", i+1, line, res.Content)
		}
		j++
	}
	lastIsEmpty := len(after.lines) > 0 && lineText(after.lines[len(after.lines)-1]) == ""
	if len(before.lines) > 0 && len(after.lines) > 0 && !lastIsEmpty && before.lacksFinalNewline() != after.lacksFinalNewline() {
		t.Fatalf("final newline state changed: %q → %q", file, res.Content)
	}
	if !reflect.DeepEqual(res.Lines, after.texts()) {
		t.Fatalf("Lines %q are not the new file's lines", res.Lines)
	}
}

// fuzzDiffs turns program bytes into apply_diffs blocks, mostly cut from the file's
// own lines so that they are found: 3 bytes per diff.
func fuzzDiffs(texts []string, program []byte) []Diff {
	replaces := []string{"", "r", "r1\nr2", "  padded  \n"}
	n := len(texts)
	var diffs []Diff
	for ; len(program) >= 3 && len(diffs) < 6; program = program[3:] {
		b := program[:3]
		start, length := int(b[0])%(n+1), 1+int(b[1]%3)
		search := "not in the file"
		if start+length <= n {
			search = strings.Join(texts[start:start+length], "\n")
		}
		if b[2]%7 == 6 {
			search = " " + search
		}
		diffs = append(diffs, Diff{Search: search, Replace: replaces[int(b[1]/3)%len(replaces)], StartLine: int(b[2])%(n+2) + 1})
	}
	return diffs
}

func FuzzApplyDiffs(f *testing.F) {
	f.Add([]byte("a\nb\na\nb\n"), []byte{0, 1, 3, 2, 0, 1}, true, false)
	f.Add([]byte("x\r\n  y\r\nz"), []byte{1, 0, 0, 0, 4, 9}, false, true)
	f.Add([]byte(utf8BOM+"1\n2\n3\n4\n5\n"), []byte{0, 2, 5, 3, 1, 1, 4, 0, 6}, false, false)
	f.Fuzz(func(t *testing.T, file, program []byte, atomic, trim bool) {
		file = textOnly(file)
		// A U+FEFF that starts a later line becomes the file's BOM once the lines
		// before it are deleted: the bytes are right, but the oracle counts lines.
		bom := []byte("\ufeff")
		if rest, ok := bytes.CutPrefix(file, bom); ok {
			file = append(bom, bytes.ReplaceAll(rest, bom, []byte("?"))...)
		} else {
			file = bytes.ReplaceAll(file, bom, []byte("?"))
		}
		texts := LineTexts(file)
		diffs := fuzzDiffs(texts, program)
		res, err := ApplyDiffs("f", file, diffs, atomic, trim)
		if err != nil {
			mustBeEditError(t, err)
			return
		}
		norm := func(lines []string) []string {
			if !trim {
				return lines
			}
			out := make([]string, len(lines))
			for i, l := range lines {
				out[i] = strings.TrimSpace(l)
			}
			return out
		}
		type applied struct {
			at    int
			diff  Diff
			lines int
		}
		var done []applied
		for i, o := range res.Outcomes {
			if o.Status != statusSuccess {
				if atomic {
					t.Fatalf("atomic call succeeded with diff %d %s", i+1, o.Status)
				}
				continue
			}
			search := norm(contentLines(diffs[i].Search))
			k, at := len(search), o.Line-1
			if !slices.Equal(norm(texts[at:at+k]), search) {
				t.Fatalf("diff %d reported at line %d, where it does not match", i+1, o.Line)
			}
			hint := min(diffs[i].StartLine-1, len(texts)-k)
			for p := 0; p+k <= len(texts); p++ {
				closer := abs(p-hint) < abs(at-hint) || (abs(p-hint) == abs(at-hint) && p < at)
				if closer && slices.Equal(norm(texts[p:p+k]), search) {
					t.Fatalf("diff %d found at line %d, but line %d is nearer to the hint %d", i+1, at+1, p+1, diffs[i].StartLine)
				}
			}
			done = append(done, applied{at, diffs[i], k})
		}
		slices.SortFunc(done, func(a, b applied) int { return a.at - b.at })
		var want []string
		next := 0
		for _, d := range done {
			want = append(want, texts[next:d.at]...)
			want = append(want, replacementTexts(d.diff.Replace)...)
			next = d.at + d.lines
		}
		want = append(want, texts[next:]...)
		if got := LineTexts(res.Content); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("result lines %q, want %q", got, want)
		}
		if res.Lines != len(want) {
			t.Fatalf("Lines = %d, want %d", res.Lines, len(want))
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// lfText is a file's text with every line break written as "\n".
func lfText(content []byte) string {
	var b strings.Builder
	for _, line := range parseDocument(content).lines {
		b.WriteString(lineText(line))
		if terminator(line) != "" {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func FuzzSearchAndReplace(f *testing.F) {
	f.Add([]byte("a x\r\nb\r\nx c\r\n"), "x", "y\nz")
	f.Add([]byte("foo\nbar\nqux"), "bar\n", "")
	f.Add([]byte("a\nb\n"), "\n", "\n\n")
	f.Fuzz(func(t *testing.T, file []byte, search, replace string) {
		// A lone "\r" next to a new line break would read back as CRLF; keep "\r" out.
		file = bytes.ReplaceAll(textOnly(file), []byte("\r\n"), []byte("\x01"))
		file = bytes.ReplaceAll(bytes.ReplaceAll(file, []byte("\r"), []byte("r")), []byte("\x01"), []byte("\r\n"))
		search, replace = strings.ReplaceAll(search, "\r", "r"), strings.ReplaceAll(replace, "\r", "r")
		res, err := SearchAndReplace("f", file, SearchReplace{Search: search, Replace: replace})
		if err != nil {
			mustBeEditError(t, err)
			return
		}
		before := lfText(file)
		if want := strings.ReplaceAll(before, search, replace); lfText(res.Content) != want {
			t.Fatalf("LF text %q, want %q", lfText(res.Content), want)
		}
		if res.Count != strings.Count(before, search) {
			t.Fatalf("Count = %d, want %d", res.Count, strings.Count(before, search))
		}
		onlyCRLF := bytes.Contains(file, []byte("\r\n")) && bytes.Count(file, []byte("\n")) == bytes.Count(file, []byte("\r\n"))
		if onlyCRLF && bytes.Count(res.Content, []byte("\n")) != bytes.Count(res.Content, []byte("\r\n")) {
			t.Fatalf("a CRLF file got a bare LF: %q", res.Content)
		}
	})
}
