package udiff

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv/golike"
)

func TestSplitLines(t *testing.T) {
	for in, want := range map[string][]string{
		"":           nil,
		"\n":         {"\n"},
		"a":          {"a"},
		"a\n":        {"a\n"},
		"a\nb":       {"a\n", "b"},
		"a\r\nb\r\n": {"a\r\n", "b\r\n"},
		"a\rb\n\n":   {"a\rb\n", "\n"},
	} {
		got := SplitLines([]byte(in))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("SplitLines(%q) = %q, want %q", in, got, want)
		}
		if strings.Join(got, "") != in {
			t.Errorf("SplitLines(%q) does not join back", in)
		}
	}
}

func TestLines(t *testing.T) {
	tests := []struct {
		name string
		a, b string // one line per character
		want []Edit
	}{
		{"equal", "abc", "abc", nil},
		{"both empty", "", "", nil},
		{"create", "", "ab", []Edit{{0, 0, 0, 2}}},
		{"delete all", "ab", "", []Edit{{0, 2, 0, 0}}},
		{"replace middle", "abc", "aXc", []Edit{{1, 2, 1, 2}}},
		{"insert", "ac", "abc", []Edit{{1, 1, 1, 2}}},
		{"delete", "abc", "ac", []Edit{{1, 2, 1, 1}}},
		{"two edits", "abcdef", "aXcdeY", []Edit{{1, 2, 1, 2}, {5, 6, 5, 6}}},
		{"touching edits merge", "abcd", "aXYd", []Edit{{1, 3, 1, 3}}},
		{"repeated lines use Myers", "xaxbx", "xbxax", []Edit{{1, 3, 1, 1}, {4, 4, 2, 4}}},
		{"moved unique line", "abcde", "bcdea", []Edit{{0, 1, 0, 0}, {5, 5, 4, 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := chars(tt.a), chars(tt.b)
			got := Lines(a, b)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Lines(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			checkEdits(t, a, b, got)
		})
	}
}

// chars gives one line per character of s.
func chars(s string) []string {
	var lines []string
	for _, c := range s {
		lines = append(lines, string(c)+"\n")
	}
	return lines
}

func TestLinesFindsScatteredChanges(t *testing.T) {
	a := golike.File(2000)
	b := append([]string(nil), a...)
	var want []Edit
	for i := 50; i < len(b); i += 97 {
		b[i] = "\tchanged := " + b[i]
		want = append(want, Edit{i, i + 1, i, i + 1})
	}
	if got := Lines(a, b); !reflect.DeepEqual(got, want) {
		t.Errorf("Lines found %d edits, want the %d changed lines: %v", len(got), len(want), got)
	}
}

func TestLinesGivesUpOnHugeDissimilarGapsCorrectly(t *testing.T) {
	// No line is unique and no line is shared: the Myers search would take (n+m)²/4 steps.
	var a, b []string
	for i := 0; i < 40000; i++ {
		a = append(a, []string{"x\n", "y\n"}[i%2])
		b = append(b, []string{"u\n", "v\n"}[i%2])
	}
	got := Lines(a, b)
	if want := []Edit{{0, len(a), 0, len(b)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestUnified(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		context  int
		hunks    string // the diff after its header, which names f on both sides
	}{
		{"equal", "a\n", "a\n", 3, ""},
		{"create", "", "a\nb\n", 3, "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"delete everything", "a\nb\n", "", 3, "@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"middle change with context", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n", 2, "@@ -3,5 +3,5 @@\n 3\n 4\n-5\n+X\n 6\n 7\n"},
		{"pure insertion without context", "a\nb\n", "a\nX\nb\n", 0, "@@ -1,0 +2,1 @@\n+X\n"},
		{"pure deletion without context", "a\nb\nc\n", "a\nc\n", 0, "@@ -2,1 +1,0 @@\n-b\n"},
		// The three end-of-file cases: no newline at the end of the old, the new, or both.
		{"hunk at EOF, file ends in newline", "a\nb\nc\n", "a\nb\nC\n", 1, "@@ -2,2 +2,2 @@\n b\n-c\n+C\n"},
		{"file without final newline", "a\nb\nc", "a\nB\nc", 1, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n"},
		{"change of the last line without newline", "a\nb", "a\nc", 3, "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"final newline added", "a\nb", "a\nb\n", 3, "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"final newline removed", "a\nb\n", "a\nb", 3, "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"},
		{"CRLF lines keep their CR", "a\r\nb\r\n", "a\r\nB\r\n", 3, "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n"},
		{"contexts that touch make one hunk", "1\n2\n3\n4\n5\n6\n", "X\n2\n3\n4\n5\nY\n", 2, "@@ -1,6 +1,6 @@\n-1\n+X\n 2\n 3\n 4\n 5\n-6\n+Y\n"},
		{"contexts that do not touch make two hunks", "1\n2\n3\n4\n5\n6\n", "X\n2\n3\n4\n5\nY\n", 1, "@@ -1,2 +1,2 @@\n-1\n+X\n 2\n@@ -5,2 +5,2 @@\n 5\n-6\n+Y\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := "" // equal contents give no diff, not even a header
			if tt.hunks != "" {
				want = "--- a/f\n+++ b/f\n" + tt.hunks
			}
			got := Unified("f", "f", []byte(tt.old), []byte(tt.new), tt.context)
			if got != want {
				t.Errorf("Unified:\n%s\nwant:\n%s", got, want)
			}
			checkRoundTrip(t, []byte(tt.old), []byte(tt.new), tt.context)
		})
	}
}

func TestUnifiedHeaders(t *testing.T) {
	tests := []struct{ oldName, newName, want string }{
		{"dir/f.go", "dir/f.go", "--- a/dir/f.go\n+++ b/dir/f.go\n"},
		{"/dev/null", "new.txt", "--- /dev/null\n+++ b/new.txt\n"},
		{"old.txt", "/dev/null", "--- a/old.txt\n+++ /dev/null\n"},
		{"with space.txt", "with space.txt", "--- a/with space.txt\n+++ b/with space.txt\n"},
		{"tab\there", "quote\"", "--- \"a/tab\\there\"\n+++ \"b/quote\\\"\"\n"},
	}
	for _, tt := range tests {
		got := Unified(tt.oldName, tt.newName, []byte("a\n"), []byte("b\n"), 3)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("Unified(%q, %q) starts %q, want %q", tt.oldName, tt.newName, got, tt.want)
			continue
		}
		files, err := Parse(got)
		if err != nil {
			t.Fatal(err)
		}
		if files[0].OldName != tt.oldName || files[0].NewName != tt.newName {
			t.Errorf("Parse gave names %q, %q; want %q, %q", files[0].OldName, files[0].NewName, tt.oldName, tt.newName)
		}
	}
}

func TestParse(t *testing.T) {
	text := "diff --git a/x.go b/x.go\n" +
		"index 83db48f..bf269f4 100644\n" +
		"--- a/x.go\t2024-01-01 00:00:00\n" +
		"+++ b/x.go\n" +
		"@@ -1 +1 @@ func main() {\n" +
		"-a\n" +
		"+b\n" +
		"diff --git a/y.txt b/y.txt\n" +
		"new file mode 100644\n" +
		"--- /dev/null\n" +
		"+++ b/y.txt\n" +
		"@@ -0,0 +1,2 @@\n" +
		"+1\n" +
		"+2\n" +
		"\\ No newline at end of file\n"
	got, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []*FileDiff{
		{OldName: "x.go", NewName: "x.go", Hunks: []Hunk{{1, 1, 1, 1, []Line{{Delete, "a\n"}, {Insert, "b\n"}}}}},
		{OldName: "/dev/null", NewName: "y.txt", Hunks: []Hunk{{0, 0, 1, 2, []Line{{Insert, "1\n"}, {Insert, "2"}}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %+v\nwant %+v", got, want)
	}
}

func TestParseEmptyText(t *testing.T) {
	for _, text := range []string{"", "\n", "  \n"} {
		files, err := Parse(text)
		if err != nil || len(files) != 0 {
			t.Errorf("Parse(%q) = %v, %v; want no files and no error", text, files, err)
		}
	}
}

// parseError is a text that a parser must refuse with an error containing want.
type parseError struct{ name, text, want string }

// wantParseErrors checks that parse, called name, refuses each case's text.
func wantParseErrors(t *testing.T, name string, parse func(text string) error, tests []parseError) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := parse(tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s error = %v, want it to contain %q", name, err, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	parse := func(text string) error { _, err := Parse(text); return err }
	head := "--- a/f\n+++ b/f\n"
	wantParseErrors(t, "Parse", parse, []parseError{
		{"no header", "hello\n", "no file header found"},
		{"hunk before header", "@@ -1 +1 @@\n-a\n+b\n", "line 1 of the diff: hunk header before any"},
		{"no hunk", head, "file \"f\" has no hunk"},
		{"bad header", head + "@@ -x +1 @@\n", "hunk 1: bad header \"@@ -x +1 @@\""},
		{"header without numbers", head + "@@ @@\n a\n", "hunk 1: bad header"},
		{"start 0 with lines", head + "@@ -0,1 +1,1 @@\n a\n", "must start at line 1"},
		{"too few lines", head + "@@ -1,2 +1,2 @@\n a\n", "file \"f\": hunk 1: the diff ends before the header's counts -1,2 +1,2 are reached"},
		{"too many lines", head + "@@ -1,1 +1,1 @@\n a\n b\n", "line 5 of the diff: file \"f\": hunk 1 has more lines than its header counts"},
		{"count overrun inside", head + "@@ -1,1 +1,2 @@\n-a\n-b\n+c\n", "hunk 1: more lines than the header's counts"},
		{"garbage line", head + "@@ -1,2 +1,2 @@\n a\nb\n", "line 5 of the diff: hunk 1: \"b\" does not start with"},
		{"marker first", head + "@@ -1,1 +1,1 @@\n\\ No newline at end of file\n a\n", "must follow a '-', '+' or ' ' line"},
		{"double marker", head + "@@ -1,1 +1,1 @@\n a\n\\ No newline at end of file\n\\ No newline at end of file\n", "must follow"},
	})
}

func TestParseLenient(t *testing.T) {
	tests := []struct {
		name string
		text string
		want *FileDiff
	}{
		{
			name: "wrong counts are recomputed",
			text: "--- a/f\n+++ b/f\n@@ -3,7 +3,9 @@\n x\n-y\n+Y\n",
			want: &FileDiff{"f", "f", []Hunk{{3, 2, 3, 2, []Line{{Context, "x\n"}, {Delete, "y\n"}, {Insert, "Y\n"}}}}},
		},
		{
			name: "no headers, no numbers",
			text: "@@ @@\n x\n+y\n@@ @@\n z\n-w\n",
			want: &FileDiff{"", "", []Hunk{
				{1, 1, 1, 2, []Line{{Context, "x\n"}, {Insert, "y\n"}}},
				{1, 2, 2, 1, []Line{{Context, "z\n"}, {Delete, "w\n"}}},
			}},
		},
		{
			name: "starts without counts",
			text: "@@ -12 +12 @@\n a\n-b\n",
			want: &FileDiff{"", "", []Hunk{{12, 2, 12, 1, []Line{{Context, "a\n"}, {Delete, "b\n"}}}}},
		},
		{
			name: "empty line is empty context, trailing empty lines dropped",
			text: "@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n\n\n",
			want: &FileDiff{"", "", []Hunk{{1, 3, 1, 3, []Line{{Context, "a\n"}, {Context, "\n"}, {Delete, "b\n"}, {Insert, "B\n"}}}}},
		},
		{
			name: "CRLF diff text",
			text: "--- a/f\r\n+++ b/f\r\n@@ -1,2 +1,2 @@\r\n a\r\n\r\n-b\r\n+B\r\n",
			want: &FileDiff{"f", "f", []Hunk{{1, 3, 1, 3, []Line{{Context, "a\r\n"}, {Context, "\r\n"}, {Delete, "b\r\n"}, {Insert, "B\r\n"}}}}},
		},
		{
			name: "markdown fence and git preamble",
			text: "```diff\ndiff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n```\n",
			want: &FileDiff{"f", "f", []Hunk{{1, 1, 1, 1, []Line{{Delete, "a\n"}, {Insert, "b\n"}}}}},
		},
		{
			name: "no newline marker and a text without final newline",
			text: "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b",
			want: &FileDiff{"", "", []Hunk{{1, 1, 1, 1, []Line{{Delete, "a"}, {Insert, "b\n"}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLenient(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseLenient = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseLenientErrors(t *testing.T) {
	parseLenient := func(text string) error { _, err := ParseLenient(text); return err }
	wantParseErrors(t, "ParseLenient", parseLenient, []parseError{
		{"nothing", "just some words\n", "no hunk found"},
		{"garbage line", "@@ @@\n a\nb c\n", "line 3 of the diff: hunk 1: \"b c\" has no ' ', '-' or '+' in front"},
		{"garbage in second hunk", "@@ @@\n a\n-b\n@@ -9 +9 @@\n c\n?\n", "line 6 of the diff: hunk 2: \"?\""},
		{"bad header", "@@ -a +1 @@\n x\n", "hunk 1: cannot read the header \"@@ -a +1 @@\""},
		{"two files", "--- a/f\n+++ b/f\n@@ @@\n x\n--- a/g\n+++ b/g\n@@ @@\n y\n", "only one file"},
		{"empty hunk", "@@ -1 +1 @@\n@@ -2 +2 @@\n x\n", "hunk 1 has no lines"},
		{"positionless insertion", "@@ @@\n+x\n", "hunk 1 only adds lines and has no line numbers"},
	})
}

func TestApplyIsStrict(t *testing.T) {
	d := mustParse(t, "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n")
	if got, err := d.Apply([]byte("a\nb\nc\n")); err != nil || string(got) != "a\nb\nC\n" {
		t.Fatalf("Apply = %q, %v", got, err)
	}
	tests := []struct{ name, old, want string }{
		{"shifted", "x\na\nb\nc\n", `hunk 1: line 2 of the file is "a" but the hunk has "b"`},
		{"too short", "a\n", "hunk 1: the file has 1 lines, too few for its 2 context and deleted lines at line 2"},
		{"CRLF file", "a\r\nb\r\nc\r\n", `line 2 of the file is "b" but the hunk has "b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Apply([]byte(tt.old))
			var ae *ApplyError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Apply error = %v, want an *ApplyError containing %q", err, tt.want)
			}
		})
	}
}

// applyCase is a diff, read leniently, applied to old: it must give want.
type applyCase struct{ name, old, diff, want string }

// wantApplied checks that apply, called name, gives each case's want.
func wantApplied(t *testing.T, name string, apply func(d *FileDiff, old []byte) ([]byte, error), tests []applyCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := apply(mustParseLenient(t, tt.diff), []byte(tt.old))
			if err != nil || string(got) != tt.want {
				t.Errorf("%s = %q, %v; want %q", name, got, err, tt.want)
			}
		})
	}
}

func TestApplyNearest(t *testing.T) {
	wantApplied(t, "ApplyNearest", (*FileDiff).ApplyNearest, []applyCase{
		{"at the header", "a\nb\nc\n", "@@ -2,1 +2,1 @@\n-b\n+B\n", "a\nB\nc\n"},
		{"line numbers off", "0\n0\n0\na\nb\nc\n", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "0\n0\n0\na\nB\nc\n"},
		{"nearest of several", "x\n1\nx\n2\nx\n3\nx\n", "@@ -5,1 +5,1 @@\n-x\n+X\n", "x\n1\nx\n2\nX\n3\nx\n"},
		{"tie goes to the earlier", "x\n1\nx\n2\nx\n", "@@ -2,1 +2,1 @@\n-x\n+X\n", "X\n1\nx\n2\nx\n"},
		{"after the previous hunk", "x\n1\nx\n", "@@ -1,1 +1,1 @@\n-x\n+X\n@@ -1,1 +1,1 @@\n-x\n+Y\n", "X\n1\nY\n"},
		{"no numbers", "a\nb\nc\nb\n", "@@ @@\n c\n-b\n+B\n", "a\nb\nc\nB\n"},
		{"insertion at its header", "a\nb\n", "@@ -1,0 +2 @@\n+X\n", "a\nX\nb\n"},
		{"header past the end", "a\nb\n", "@@ -90,1 +90,1 @@\n-a\n+A\n", "A\nb\n"},
		{"deleting the last line without newline", "a\nb", "@@ -1,2 +1,1 @@\n a\n-b\n\\ No newline at end of file\n", "a\n"},
		{"model diff with CRLF text on a CRLF file", "a\r\nb\r\n", "@@ -1 +1 @@\r\n-a\r\n+A\r\n", "A\r\nb\r\n"},
	})
}

func TestApplyNearestErrors(t *testing.T) {
	tests := []struct {
		name, old, diff string
		hunk, line      int
		reason          string
	}{
		{"mismatch shows the closest place", "a\nb\nc\nd\n", "@@ -2,3 +2,3 @@\n b\n-c\n+C\n x\n", 1, 2,
			`these lines were not found in the file: the closest match starts at line 2, but line 4 of the file is "d" where the hunk has "x"`},
		{"first line nowhere", "a\nb\n", "@@ -1 +1 @@\n-q\n+Q\n", 1, 1,
			`its first context or deleted line "q" occurs nowhere in the file`},
		{"second hunk before the first", "a\nb\nc\n", "@@ -3 +3 @@\n-c\n+C\n@@ -1 +1 @@\n-a\n+A\n", 2, 1,
			`these lines were not found in the file: 0 lines remain after line 3, where hunk 1 ends, fewer than its 1 context and deleted lines`},
		{"second hunk only before the first", "a\nb\nc\nd\n", "@@ -3 +3 @@\n-c\n+C\n@@ -1 +1 @@\n-a\n+A\n", 2, 1,
			`"a" occurs nowhere after line 3, where hunk 1 ends; read the file again`},
		{"CRLF file needs ApplyNearestEOL", "a\r\n", "@@ -1 +1 @@\n-a\n+b\n", 1, 1, `"a" occurs nowhere`},
		{"insertion after a last line without newline", "a", "@@ -1,0 +2 @@\n+b\n", 1, 2,
			`the line "a" has no newline at end of file, but this hunk puts more lines after it`},
		{"no newline in the middle", "a\nb\n", "@@ -1 +1 @@\n-a\n+A\n\\ No newline at end of file\n", 1, 1,
			`the line "A" has no newline at end of file, but this hunk puts more lines after it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mustParseLenient(t, tt.diff).ApplyNearest([]byte(tt.old))
			var ae *ApplyError
			if !errors.As(err, &ae) {
				t.Fatalf("error = %v, want an *ApplyError", err)
			}
			if ae.Hunk != tt.hunk || ae.Line != tt.line || !strings.Contains(ae.Reason, tt.reason) {
				t.Errorf("got hunk %d line %d %q\nwant hunk %d line %d, reason containing %q", ae.Hunk, ae.Line, ae.Reason, tt.hunk, tt.line, tt.reason)
			}
			if !strings.HasPrefix(err.Error(), "hunk ") {
				t.Errorf("Error() = %q, want it to name the hunk", err)
			}
		})
	}
}

func TestApplyNearestEOL(t *testing.T) {
	applyNearestEOL := func(d *FileDiff, old []byte) ([]byte, error) { return ApplyNearestEOL(old, d) }
	wantApplied(t, "ApplyNearestEOL", applyNearestEOL, []applyCase{
		{"LF diff on CRLF file", "a\r\nb\r\nc\r\n", "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n", "a\r\nB\r\nB2\r\nc\r\n"},
		{"CRLF diff on LF file", "a\nb\n", "@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+B\r\n", "a\nB\n"},
		{"unchanged lines keep their bytes in a mixed file", "a\r\nb\nc\r\n", "@@ @@\n a\n b\n-c\n+C\n", "a\r\nb\nC\r\n"},
		{"missing final newline is kept", "a\nb", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "a\nB"},
		{"missing final newline kept after appending", "a\nb", "@@ -1,2 +1,3 @@\n a\n b\n+c\n", "a\nb\nc"},
		{"missing final newline kept after deleting the tail", "a\nb\nc", "@@ -2,2 +1,0 @@\n-b\n-c\n", "a"},
		{"missing final newline kept on CRLF", "a\r\nb", "@@ -2 +2 @@\n-b\n+B\n", "a\r\nB"},
		{"final newline kept", "a\nb\n", "@@ -2 +2 @@\n-b\n+B\n", "a\nB\n"},
		{"marker removes the final newline", "a\nb\n", "@@ -2 +2 @@\n-b\n+B\n\\ No newline at end of file\n", "a\nB"},
		{"marker adds the final newline", "a\nb", "@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+b\n", "a\nb\n"},
		{"hunk not at the end keeps a missing final newline", "a\nb\nc", "@@ -1 +1 @@\n-a\n+A\n", "A\nb\nc"},
		{"empty file", "", "@@ -0,0 +1 @@\n+a\n", "a\n"},
	})
	// Line endings are all it forgives: a trailing space still makes lines differ.
	_, err := ApplyNearestEOL([]byte("a\r\n"), mustParseLenient(t, "@@ -1 +1 @@\n-a \n+b\n"))
	if err == nil || !strings.Contains(err.Error(), `"a " occurs nowhere`) {
		t.Errorf("error = %v, want the trailing-space line not found", err)
	}
}

func TestApplyWithoutHunksKeepsTheFile(t *testing.T) {
	d := &FileDiff{OldName: "f", NewName: "f"}
	old := []byte("a\r\nb")
	for name, apply := range map[string]func([]byte) ([]byte, error){
		"Apply": d.Apply, "ApplyNearest": d.ApplyNearest,
		"ApplyNearestEOL": func(b []byte) ([]byte, error) { return ApplyNearestEOL(b, d) },
	} {
		if got, err := apply(old); err != nil || string(got) != string(old) {
			t.Errorf("%s = %q, %v; want the file unchanged", name, got, err)
		}
	}
}

func TestUnifiedLineNumbersInLargeFile(t *testing.T) {
	lines := golike.File(10000)
	old := strings.Join(lines, "")
	lines[5000] = "changed\n"
	got := Unified("f", "f", []byte(old), []byte(strings.Join(lines, "")), 3)
	want := "--- a/f\n+++ b/f\n@@ -4998,7 +4998,7 @@\n" +
		" " + lines[4997] + " " + lines[4998] + " " + lines[4999] +
		"-" + SplitLines([]byte(old))[5000] + "+changed\n" +
		" " + lines[5001] + " " + lines[5002] + " " + lines[5003]
	if got != want {
		t.Errorf("Unified:\n%s\nwant:\n%s", got, want)
	}
}

func TestReverse(t *testing.T) {
	d := mustParse(t, "--- a/old\n+++ b/new\n@@ -1,3 +1,4 @@\n a\n-b\n-c\n+B\n+C\n+D\n@@ -9,0 +10,1 @@\n+z\n")
	want := "--- a/new\n+++ b/old\n@@ -1,4 +1,3 @@\n a\n-B\n-C\n-D\n+b\n+c\n@@ -10,1 +9,0 @@\n-z\n"
	if got := d.Reverse().String(); got != want {
		t.Errorf("Reverse:\n%s\nwant:\n%s", got, want)
	}
}

func TestBlocks(t *testing.T) {
	d := mustParse(t, "--- a/f\n+++ b/f\n"+
		"@@ -1,6 +1,6 @@\n-a\n+A\n b\n c\n-d\n+D\n+D2\n e\n-f\n"+
		"@@ -20,0 +20,1 @@\n+new\n")
	want := []Block{
		{OldStart: 0, Old: []string{"a\n"}, New: []string{"A\n"}},
		{OldStart: 3, Old: []string{"d\n"}, New: []string{"D\n", "D2\n"}},
		{OldStart: 5, Old: []string{"f\n"}},
		{OldStart: 20, New: []string{"new\n"}},
	}
	if got := d.Blocks(); !reflect.DeepEqual(got, want) {
		t.Errorf("Blocks = %+v\nwant %+v", got, want)
	}
}

func mustParse(t *testing.T, text string) *FileDiff {
	t.Helper()
	files, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("Parse gave %d files, want 1", len(files))
	}
	return files[0]
}

func mustParseLenient(t *testing.T, text string) *FileDiff {
	t.Helper()
	d, err := ParseLenient(text)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
