package edit

import (
	"bytes"
	"strings"
	"testing"
)

// replaced is what a replacement gives: the new content and how many occurrences it
// replaced.
type replaced struct {
	content string
	count   int
}

// replacement is ReplaceString's arguments after the content.
type replacement struct {
	old, new   string
	replaceAll bool
}

func TestReplaceString(t *testing.T) {
	replaceString := func(content []byte, r replacement) (replaced, error) {
		got, count, err := ReplaceString(content, r.old, r.new, r.replaceAll)
		return replaced{string(got), count}, err
	}
	runCalls(t, replaceString, []call[replacement, replaced]{
		{"single", "x = 1\ny = 2", replacement{"x = 1", "x = 10", false}, replaced{"x = 10\ny = 2", 1}, nil},
		{"multi-line", "def foo():\n    pass\n\ndef bar():\n    pass", replacement{"def foo():\n    pass", "def foo():\n    return 42", false},
			replaced{"def foo():\n    return 42\n\ndef bar():\n    pass", 1}, nil},
		{"replace_all", "x = 1\nx = 2\nx = 3", replacement{"x = ", "y = ", true}, replaced{"y = 1\ny = 2\ny = 3", 3}, nil},
		{"replace_all with one match", "a b", replacement{"a", "c", true}, replaced{"c b", 1}, nil},
		{"CRLF file, LF old_string", "a\r\nb\r\nc\r\n", replacement{"a\nb", "x\ny\nz", false}, replaced{"x\r\ny\r\nz\r\nc\r\n", 1}, nil},
		{"CRLF file, new_string lines get CRLF", "a\r\nb\r\n", replacement{"b", "b\nc", false}, replaced{"a\r\nb\r\nc\r\n", 1}, nil},
		{"CRLF file, CRLF old_string", "a\r\nb\r\n", replacement{"a\r\nb", "x", false}, replaced{"x\r\n", 1}, nil},
		{"LF file, CRLF old_string", "a\nb\n", replacement{"a\r\nb", "x\r\ny", false}, replaced{"x\ny\n", 1}, nil},
		{"BOM kept", utf8BOM + "a\n", replacement{"a", "b", false}, replaced{utf8BOM + "b\n", 1}, nil},
		{"no final newline kept", "a\nb", replacement{"b", "c", false}, replaced{"a\nc", 1}, nil},
		{"invalid UTF-8 kept", "\xff a \xfe", replacement{"a", "b", false}, replaced{"\xff b \xfe", 1}, nil},
		{"mixed file: as-is match first", "a\nb\r\nc\r\nd\r\n", replacement{"a\nb", "x", false}, replaced{"x\r\nc\r\nd\r\n", 1}, nil},

		{"not found", "a\nb\n", replacement{"c", "d", false}, replaced{}, []string{"old_string was not found", "copy the text exactly"}},
		{"different whitespace", "if x:\n\treturn  1\n", replacement{"if x:\n    return 1", "y", false}, replaced{},
			[]string{"found with different whitespace at line 1", "Nothing was changed"}},
		{"different whitespace mid-line", "a\nfoo(a, b)\n", replacement{"foo(a,b)", "y", false}, replaced{}, []string{"at line 2"}},
		{"whitespace-only old_string gives no hint", "a\n", replacement{" ", "y", false}, replaced{}, []string{"was not found in the file;"}},
		{"ambiguous", "x = 1\nx = 2\n", replacement{"x = ", "x = 10", false}, replaced{},
			[]string{"old_string appears 2 times in the file (lines 1, 2)", "pass replace_all", "add context to make it unique"}},
		{"ambiguous across lines", "a\nb\na\nb\n", replacement{"a\nb", "c", false}, replaced{}, []string{"appears 2 times", "(lines 1, 3)"}},
		{"empty old_string", "a", replacement{"", "b", false}, replaced{}, []string{"old_string is empty", "write_file"}},
		{"no change", "a", replacement{"a", "a", false}, replaced{}, []string{"no change"}},
		{"binary", "a\x00b", replacement{"a", "b", false}, replaced{}, []string{"binary"}},
	})
}

func TestReplaceStringHugeLine(t *testing.T) {
	huge := strings.Repeat("z", 10<<20)
	content := []byte("head\n" + huge + "needle" + huge + "\ntail")
	got, _, err := ReplaceString(content, "needle", "pin", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte("head\n" + huge + "pin" + huge + "\ntail"); !bytes.Equal(got, want) {
		t.Errorf("huge line edit went wrong")
	}
}

func TestReplaceMessage(t *testing.T) {
	if got, want := ReplaceMessage("app.py", 15), "Successfully replaced 15 occurrence(s) in app.py"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// sourceFile builds a file of about size bytes of code-like lines, with one unique
// line in the middle.
func sourceFile(size int, eol string) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		if i == 5000 {
			b.WriteString("\tunique := computeTheAnswer(42)" + eol)
		}
		b.WriteString("\tvalue := compute(value, 17) // a typical line of code" + eol)
	}
	return b.Bytes()
}

func benchmarkReplaceString(b *testing.B, size int) {
	content := sourceFile(size, "\n")
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, _, err := ReplaceString(content, "unique := computeTheAnswer(42)", "unique := computeTheAnswer(43)", false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReplaceString1MB(b *testing.B)  { benchmarkReplaceString(b, 1<<20) }
func BenchmarkReplaceString11MB(b *testing.B) { benchmarkReplaceString(b, 11<<20) }

func BenchmarkReplaceString11MBCRLF(b *testing.B) {
	content := sourceFile(11<<20, "\r\n")
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, _, err := ReplaceString(content, "\tunique := computeTheAnswer(42)\n", "\tunique := 43\n", false); err != nil {
			b.Fatal(err)
		}
	}
}
