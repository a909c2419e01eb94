package udiff

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// checkRoundTrip checks everything a diff of old → new promises: Parse gives back the
// FileDiff, strict and nearest Apply give new, Reverse gives old, the Blocks rebuild
// new, and go-gitdiff, an independent parser and applier, agrees (context > 0).
func checkRoundTrip(t *testing.T, old, new []byte, context int) {
	t.Helper()
	a, b := SplitLines(old), SplitLines(new)
	checkEdits(t, a, b, Lines(a, b))

	text := Unified("f", "f", old, new, context)
	if bytes.Equal(old, new) {
		if text != "" {
			t.Fatalf("equal contents gave a diff:\n%s", text)
		}
		return
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("old %q\nnew %q\ndiff:\n%s\n%s", old, new, text, fmt.Sprintf(format, args...))
	}
	files, err := Parse(text)
	if err != nil || len(files) != 1 {
		fail("Parse: %d files, %v", len(files), err)
	}
	d := files[0]
	if d.String() != text {
		fail("String after Parse differs:\n%s", d.String())
	}
	if got, err := d.Apply(old); err != nil || !bytes.Equal(got, new) {
		fail("Apply = %q, %v", got, err)
	}
	if got, err := d.ApplyNearest(old); err != nil || !bytes.Equal(got, new) {
		fail("ApplyNearest = %q, %v", got, err)
	}
	if got, err := d.Reverse().Apply(new); err != nil || !bytes.Equal(got, old) {
		fail("Reverse().Apply = %q, %v", got, err)
	}
	if got := applyBlocks(a, d.Blocks()); got != string(new) {
		fail("applying Blocks gives %q", got)
	}
	// go-gitdiff, like git apply without --unidiff-zero, reads a hunk with no old
	// lines as inserting before its line, not after: it only takes context > 0.
	if context == 0 {
		return
	}
	if got, err := gitdiffApply(text, old); err != nil || !bytes.Equal(got, new) {
		fail("go-gitdiff: %q, %v", got, err)
	}
}

// checkEdits checks that edits are sorted, never touch, and turn a into b.
func checkEdits(t *testing.T, a, b []string, edits []Edit) {
	t.Helper()
	var got []string
	oldAt, newAt := 0, 0
	for i, e := range edits {
		if e.OldStart > e.OldEnd || e.NewStart > e.NewEnd || (e.OldStart == e.OldEnd && e.NewStart == e.NewEnd) {
			t.Fatalf("edit %d is malformed: %+v", i, e)
		}
		if i > 0 && e.OldStart <= oldAt {
			t.Fatalf("edit %d %+v touches or precedes the one before", i, e)
		}
		if e.OldStart-oldAt != e.NewStart-newAt {
			t.Fatalf("edit %d %+v: unequal gaps before it", i, e)
		}
		for k := oldAt; k < e.OldStart; k++ {
			if a[k] != b[newAt+k-oldAt] {
				t.Fatalf("line %d outside the edits differs: %q vs %q", k, a[k], b[newAt+k-oldAt])
			}
		}
		got = append(got, a[oldAt:e.OldStart]...)
		got = append(got, b[e.NewStart:e.NewEnd]...)
		oldAt, newAt = e.OldEnd, e.NewEnd
	}
	got = append(got, a[oldAt:]...)
	if strings.Join(got, "") != strings.Join(b, "") {
		t.Fatalf("edits %v turn a into %q, want %q", edits, got, b)
	}
}

// applyBlocks applies blocks given in old-file coordinates, in order.
func applyBlocks(old []string, blocks []Block) string {
	var out []string
	at := 0
	for _, b := range blocks {
		out = append(out, old[at:b.OldStart]...)
		out = append(out, b.New...)
		at = b.OldStart + len(b.Old)
	}
	return strings.Join(append(out, old[at:]...), "")
}

func gitdiffApply(text string, old []byte) ([]byte, error) {
	files, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("%d files", len(files))
	}
	var out bytes.Buffer
	err = gitdiff.Apply(&out, bytes.NewReader(old), files[0])
	return out.Bytes(), err
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 600; i++ {
		old := randomFile(rng)
		new := mutate(rng, old)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkRoundTrip(t, old, new, rng.Intn(5))
		})
	}
}

func TestRoundTripSpecialContents(t *testing.T) {
	long := strings.Repeat("x", 100000)
	cases := []struct{ old, new string }{
		{"", ""},
		{"", "a"},
		{"a", ""},
		{"\n", ""},
		{"", "\n"},
		{"\n", "\n\n"},
		{"a", "a\n"},
		{"a\n", "a"},
		{"a\r\n", "a\n"},
		{"a\r", "a\r\n"},
		{"a\r\nb\nc\r\n", "a\nb\r\nc\r\n"},
		{"x\xff\xfe\n\x00\n", "x\xff\n\x00\n"},
		{long + "\n" + long, long + "y\n" + long},
		{"same\nsame\nsame", "same\nsame"},
		{"\\ No newline at end of file\n", "+a\n-b\n @@\n"},
		{"--- a/x\n+++ b/x\n", "@@ -1 +1 @@\n"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for ctx := 0; ctx < 4; ctx++ {
				checkRoundTrip(t, []byte(c.old), []byte(c.new), ctx)
			}
		})
	}
}

// vocabulary mixes lines that repeat a lot (as braces and blank lines do) with rarer ones.
var vocabulary = []string{"", "}", "{", "\treturn nil", "\tx++", "a", "b", "c", "-x", "+y", " z", "@@", "\\ n", "\t\t}"}

func randomLine(rng *rand.Rand) string {
	var s string
	switch r := rng.Intn(10); {
	case r < 6:
		s = vocabulary[rng.Intn(len(vocabulary))]
	case r < 9:
		s = fmt.Sprintf("line %d", rng.Intn(1000))
	default:
		b := make([]byte, rng.Intn(8))
		rng.Read(b) // invalid UTF-8, CRs and NULs included
		s = strings.ReplaceAll(string(b), "\n", "")
	}
	if rng.Intn(4) == 0 {
		return s + "\r\n"
	}
	return s + "\n"
}

func randomFile(rng *rand.Rand) []byte {
	var sb strings.Builder
	crlf := rng.Intn(3) == 0
	for n := rng.Intn(40); n > 0; n-- {
		line := randomLine(rng)
		if crlf {
			line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r") + "\r\n"
		}
		sb.WriteString(line)
	}
	return dropFinalNewlineSometimes(rng, sb.String())
}

func dropFinalNewlineSometimes(rng *rand.Rand, s string) []byte {
	if rng.Intn(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return []byte(s)
}

// mutate makes a few random line edits: insertions, deletions, replacements, and
// changes of line endings.
func mutate(rng *rand.Rand, old []byte) []byte {
	lines := SplitLines(old)
	for n := rng.Intn(6); n > 0; n-- {
		i := rng.Intn(len(lines) + 1)
		switch rng.Intn(4) {
		case 0:
			lines = append(lines[:i], append([]string{randomLine(rng)}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		case 2:
			if i < len(lines) {
				lines[i] = randomLine(rng)
			}
		default:
			if i < len(lines) {
				lines[i] = strings.TrimSuffix(strings.TrimSuffix(lines[i], "\n"), "\r") + []string{"\n", "\r\n", ""}[rng.Intn(3)]
			}
		}
	}
	// Only the last line may lack a newline.
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasSuffix(lines[i], "\n") {
			lines[i] += "\n"
		}
	}
	return dropFinalNewlineSometimes(rng, strings.Join(lines, ""))
}

func TestMyersIsMinimal(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 500; i++ {
		a, b := randomSymbols(rng), randomSymbols(rng)
		d := newDiffer(a, b)
		d.myers(0, len(d.x), 0, len(d.y))
		checkEdits(t, a, b, d.edits)
		cost := 0
		for _, e := range d.edits {
			cost += e.OldEnd - e.OldStart + e.NewEnd - e.NewStart
		}
		if want := len(a) + len(b) - 2*lcsLength(a, b); cost != want {
			t.Fatalf("Myers on %q → %q costs %d, the minimum is %d", a, b, cost, want)
		}
	}
}

func randomSymbols(rng *rand.Rand) []string {
	s := make([]string, rng.Intn(30))
	for i := range s {
		s[i] = string(rune('a' + rng.Intn(3)))
	}
	return s
}

// lcsLength is the textbook dynamic program.
func lcsLength(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	f.Add([]byte("a\nb"), []byte("a\nb\n"))
	f.Add([]byte(""), []byte("x\r\ny"))
	f.Add([]byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n"), []byte("0\n1\n2\n3\n5\n6\n7\n8\n9\nA"))
	f.Add([]byte("\xff\r\n\r\n"), []byte("\r\n\xff"))
	f.Fuzz(func(t *testing.T, old, new []byte) {
		checkRoundTrip(t, old, new, 3)
		checkRoundTrip(t, old, new, 0)
	})
}

func FuzzApplyNearest(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), "@@ -2 +2 @@\n-b\n+B\n")
	f.Add([]byte("x\nx\nx\n"), "@@ @@\n x\n-x\n+y\n@@ @@\n-x\n")
	f.Add([]byte("a\r\nb"), "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n")
	f.Add([]byte("a"), "@@ -1,0 +2 @@\n+b\n\\ No newline at end of file\n")
	f.Fuzz(func(t *testing.T, old []byte, text string) {
		Parse(text) // must not panic
		d, err := ParseLenient(text)
		if err != nil {
			return
		}
		near, nearErr := d.ApplyNearest(old)
		if nearErr == nil {
			checkApplied(t, old, near, d)
		}
		if strict, err := d.Apply(old); err == nil && (nearErr != nil || !bytes.Equal(strict, near)) {
			t.Fatalf("Apply gives %q but ApplyNearest %q, %v", strict, near, nearErr)
		}
		if got, err := ApplyNearestEOL(old, d); err == nil {
			lines := SplitLines(got)
			for _, l := range lines[:max(len(lines)-1, 0)] {
				if !strings.HasSuffix(l, "\n") {
					t.Fatalf("ApplyNearestEOL gave a line without newline in the middle: %q", got)
				}
			}
		}
	})
}

// checkApplied checks a successful ApplyNearest: the line counts add up, only the
// last line may lack a newline, and the reversed diff finds its lines in the result.
func checkApplied(t *testing.T, old, new []byte, d *FileDiff) {
	t.Helper()
	want := len(SplitLines(old))
	for _, h := range d.Hunks {
		want += h.NewLines - h.OldLines
	}
	lines := SplitLines(new)
	if len(lines) != want {
		t.Fatalf("ApplyNearest gave %d lines, want %d: %q", len(lines), want, new)
	}
	for _, l := range lines[:max(len(lines)-1, 0)] {
		if !strings.HasSuffix(l, "\n") {
			t.Fatalf("ApplyNearest gave a line without newline in the middle: %q", new)
		}
	}
	at := 0
	for i, h := range d.Reverse().Hunks {
		newSide := h.oldSide()
		found := false
		for ; at+len(newSide) <= len(lines) && !found; at++ {
			found = strings.Join(lines[at:at+len(newSide)], "") == strings.Join(newSide, "")
		}
		if !found {
			t.Fatalf("hunk %d: its new lines %q are not in the result %q", i+1, newSide, new)
		}
		at += len(newSide) - 1
	}
}
