package edit

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// s is a pointer to a string literal, for Op.Content.
func s(text string) *string { return &text }

// mustFail asserts err is an *Error whose message holds every want.
func mustFail(t *testing.T, err error, want ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want an *edit.Error", err, err)
	}
	for _, w := range want {
		if !strings.Contains(e.Msg, w) {
			t.Errorf("error message lacks %q:\n%s", w, e.Msg)
		}
	}
}

// wantRefusal checks err against a case's errs: when errs is set, an *Error holding
// each of them; otherwise no error at all. It reports whether errs was set.
func wantRefusal(t *testing.T, err error, errs []string) bool {
	t.Helper()
	if errs != nil {
		mustFail(t, err, errs...)
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// call is one test of an edit function on a file's content with args: it must give
// want and leave the content it was given alone, or, when errs is set, refuse with an
// *Error whose message holds each of errs. One table of calls covers an operation's
// edits and refusals.
type call[A any, W comparable] struct {
	name    string
	content string
	args    A
	want    W
	errs    []string
}

// runCalls runs fn on each case, as a subtest.
func runCalls[A any, W comparable](t *testing.T, fn func(content []byte, args A) (W, error), tests []call[A, W]) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := []byte(tt.content)
			got, err := fn(content, tt.args)
			if wantRefusal(t, err, tt.errs) {
				return
			}
			if got != tt.want {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
			if string(content) != tt.content {
				t.Errorf("the input was modified")
			}
		})
	}
}

func TestSplitLinesMatchesUdiff(t *testing.T) {
	for _, in := range []string{"", "a", "a\n", "a\r\nb", "\n\n", "a\rb\r", "x\r\n\r\ny\n", "\xff\n\xfe"} {
		got := splitLines(in)
		want := udiff.SplitLines([]byte(in))
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("splitLines(%q) = %q, udiff.SplitLines = %q", in, got, want)
		}
	}
}

func TestParseDocument(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		bom   string
		lines []string
		eol   string
	}{
		{"empty", "", "", []string{}, "\n"},
		{"only BOM", utf8BOM, utf8BOM, []string{}, "\n"},
		{"LF", "a\nb\n", "", []string{"a\n", "b\n"}, "\n"},
		{"CRLF without final newline", "a\r\nb", "", []string{"a\r\n", "b"}, "\r\n"},
		{"mixed, CRLF wins", "a\r\nb\r\nc\n", "", []string{"a\r\n", "b\r\n", "c\n"}, "\r\n"},
		{"mixed tie is LF", "a\r\nb\n", "", []string{"a\r\n", "b\n"}, "\n"},
		{"no terminated line", "abc", "", []string{"abc"}, "\n"},
		{"lone CR is not a break", "a\rb\n", "", []string{"a\rb\n"}, "\n"},
		{"BOM and CRLF", utf8BOM + "x\r\n", utf8BOM, []string{"x\r\n"}, "\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parseDocument([]byte(tt.in))
			if d.bom != tt.bom || !reflect.DeepEqual(d.lines, tt.lines) || d.eol != tt.eol {
				t.Errorf("got bom %q lines %q eol %q; want %q %q %q", d.bom, d.lines, d.eol, tt.bom, tt.lines, tt.eol)
			}
			if got := string(d.join(d.lines)); got != tt.in {
				t.Errorf("join = %q, want the input back", got)
			}
			if got := dominantEOLOf([]byte(tt.in)); got != tt.eol {
				t.Errorf("dominantEOLOf = %q, want %q", got, tt.eol)
			}
		})
	}
}

// contentLines and CountLines are the two line models of the text a model sends: they
// differ only on "", one empty line to the one and no line to the other.
func TestContentLines(t *testing.T) {
	tests := []struct {
		in    string
		lines []string
		count int
	}{
		{"", []string{""}, 0},
		{"a", []string{"a"}, 1},
		{"a\n", []string{"a"}, 1},
		{"a\nb", []string{"a", "b"}, 2},
		{"a\nb\n", []string{"a", "b"}, 2},
		{"a\r\nb\r\n", []string{"a", "b"}, 2},
		{"\n", []string{""}, 1},
		{"a\n\n", []string{"a", ""}, 2},
		{"a\rb", []string{"a\rb"}, 1},
	}
	for _, tt := range tests {
		if got := contentLines(tt.in); !reflect.DeepEqual(got, tt.lines) {
			t.Errorf("contentLines(%q) = %q, want %q", tt.in, got, tt.lines)
		}
		if got := CountLines(tt.in); got != tt.count {
			t.Errorf("CountLines(%q) = %d, want %d", tt.in, got, tt.count)
		}
	}
}

func TestCheckText(t *testing.T) {
	nulAt := func(i int) []byte {
		b := bytes.Repeat([]byte("a"), 9000)
		b[i] = 0
		return b
	}
	tests := []struct {
		name   string
		in     []byte
		binary bool
	}{
		{"empty", nil, false},
		{"text", []byte("hello\n"), false},
		{"invalid UTF-8 is text", []byte("caf\xe9 \xff\xfe\n"), false},
		{"NUL first", nulAt(0), true},
		{"NUL at 7999", nulAt(7999), true},
		{"NUL at 8000 is past the sniff", nulAt(8000), false},
		{"UTF-16", []byte("h\x00i\x00\n\x00"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckText(tt.in)
			if !tt.binary {
				if err != nil {
					t.Fatalf("CheckText = %v, want nil", err)
				}
				return
			}
			mustFail(t, err, "binary", "NUL")
		})
	}
}

func TestLineTexts(t *testing.T) {
	got := LineTexts([]byte(utf8BOM + "a\r\nb\n\nc"))
	want := []string{"a", "b", "", "c"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LineTexts = %q, want %q", got, want)
	}
	if got := LineTexts(nil); len(got) != 0 {
		t.Errorf("LineTexts(empty) = %q, want no lines", got)
	}
}
