package edit

import (
	"bytes"
	"strings"
	"testing"
)

func TestReplaceString(t *testing.T) {
	tests := []struct {
		name       string
		content    string
		old, new   string
		replaceAll bool
		want       string
		count      int
	}{
		{"single", "x = 1\ny = 2", "x = 1", "x = 10", false, "x = 10\ny = 2", 1},
		{"multi-line", "def foo():\n    pass\n\ndef bar():\n    pass", "def foo():\n    pass", "def foo():\n    return 42", false,
			"def foo():\n    return 42\n\ndef bar():\n    pass", 1},
		{"replace_all", "x = 1\nx = 2\nx = 3", "x = ", "y = ", true, "y = 1\ny = 2\ny = 3", 3},
		{"replace_all with one match", "a b", "a", "c", true, "c b", 1},
		{"CRLF file, LF old_string", "a\r\nb\r\nc\r\n", "a\nb", "x\ny\nz", false, "x\r\ny\r\nz\r\nc\r\n", 1},
		{"CRLF file, new_string lines get CRLF", "a\r\nb\r\n", "b", "b\nc", false, "a\r\nb\r\nc\r\n", 1},
		{"CRLF file, CRLF old_string", "a\r\nb\r\n", "a\r\nb", "x", false, "x\r\n", 1},
		{"LF file, CRLF old_string", "a\nb\n", "a\r\nb", "x\r\ny", false, "x\ny\n", 1},
		{"BOM kept", utf8BOM + "a\n", "a", "b", false, utf8BOM + "b\n", 1},
		{"no final newline kept", "a\nb", "b", "c", false, "a\nc", 1},
		{"invalid UTF-8 kept", "\xff a \xfe", "a", "b", false, "\xff b \xfe", 1},
		{"mixed file: as-is match first", "a\nb\r\nc\r\nd\r\n", "a\nb", "x", false, "x\r\nc\r\nd\r\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := []byte(tt.content)
			got, count, err := ReplaceString(content, tt.old, tt.new, tt.replaceAll)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want || count != tt.count {
				t.Errorf("got %q, %d; want %q, %d", got, count, tt.want, tt.count)
			}
			if string(content) != tt.content {
				t.Errorf("the input was modified")
			}
		})
	}
}

func TestReplaceStringErrors(t *testing.T) {
	tests := []struct {
		name       string
		content    string
		old, new   string
		replaceAll bool
		errs       []string
	}{
		{"not found", "a\nb\n", "c", "d", false, []string{"old_string was not found", "copy the text exactly"}},
		{"different whitespace", "if x:\n\treturn  1\n", "if x:\n    return 1", "y", false,
			[]string{"found with different whitespace at line 1", "Nothing was changed"}},
		{"different whitespace mid-line", "a\nfoo(a, b)\n", "foo(a,b)", "y", false, []string{"at line 2"}},
		{"whitespace-only old_string gives no hint", "a\n", " ", "y", false, []string{"was not found in the file;"}},
		{"ambiguous", "x = 1\nx = 2\n", "x = ", "x = 10", false,
			[]string{"old_string appears 2 times in the file (lines 1, 2)", "pass replace_all", "add context to make it unique"}},
		{"ambiguous across lines", "a\nb\na\nb\n", "a\nb", "c", false, []string{"appears 2 times", "(lines 1, 3)"}},
		{"empty old_string", "a", "", "b", false, []string{"old_string is empty", "write_file"}},
		{"no change", "a", "a", "a", false, []string{"no change"}},
		{"binary", "a\x00b", "a", "b", false, []string{"binary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReplaceString([]byte(tt.content), tt.old, tt.new, tt.replaceAll)
			mustFail(t, err, tt.errs...)
		})
	}
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
