package nvim

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/neovim/go-client/msgpack"
)

func TestSplitText(t *testing.T) {
	tests := []struct {
		text   string
		lines  []string
		format textFormat
	}{
		{"", []string{}, textFormat{}},
		{"\n", []string{""}, textFormat{finalNewline: true}},
		{"a\nb\n", []string{"a", "b"}, textFormat{finalNewline: true}},
		{"a\nb", []string{"a", "b"}, textFormat{}},
		{"a\r\nb\r\n", []string{"a", "b"}, textFormat{crlf: true, finalNewline: true}},
		{"a\r\nb", []string{"a", "b"}, textFormat{crlf: true}},
		{"a\r\nb\n", []string{"a\r", "b"}, textFormat{finalNewline: true}}, // mixed: Neovim shows ^M
		{"\uFEFFa\n", []string{"a"}, textFormat{bom: true, finalNewline: true}},
		{"\uFEFF", []string{}, textFormat{bom: true}},
		{"a\r", []string{"a\r"}, textFormat{}},
	}
	for _, tt := range tests {
		lines, format := splitText(tt.text)
		got := append([]string{}, slices.Collect(lines.all())...)
		if !reflect.DeepEqual(got, tt.lines) || format != tt.format {
			t.Errorf("splitText(%q) = %q %+v, want %q %+v", tt.text, got, format, tt.lines, tt.format)
		}
	}
}

// An edited proposal keeps the proposal's line ending, BOM and final newline.
func TestJoinLinesUsesTheProposalFormat(t *testing.T) {
	tests := []struct {
		proposal string
		edited   []string
		want     string
	}{
		{"a\nb\n", []string{"a", "x", "b"}, "a\nx\nb\n"},
		{"a\nb", []string{"a", "x"}, "a\nx"},
		{"a\r\nb\r\n", []string{"a", "x"}, "a\r\nx\r\n"},
		{"\uFEFFa\r\n", []string{"x"}, "\uFEFFx\r\n"},
		{"", []string{"x"}, "x"},
		// No line at all (every line deleted) is the empty text, whatever the format.
		{"a\nb\n", nil, ""},
		{"a\r\nb", nil, ""},
		{"\uFEFFa\n", nil, "\uFEFF"},
	}
	for _, tt := range tests {
		_, format := splitText(tt.proposal)
		lines := make([][]byte, len(tt.edited))
		for i, l := range tt.edited {
			lines[i] = []byte(l)
		}
		if got := format.joinLines(lines); got != tt.want {
			t.Errorf("edited %q → %q, want %q", tt.proposal, got, tt.want)
		}
	}
}

// The lines go to Neovim as msgpack and come back as [][]byte when the user saves an
// edited proposal: joined again, they are the text.
func FuzzSplitJoinRoundTrip(f *testing.F) {
	for _, s := range []string{"", "\n", "a\r\nb", "\uFEFF\r\n", "a\r\n\n", "x\ry\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines, format := splitText(s)
		var sent bytes.Buffer
		if err := msgpack.NewEncoder(&sent).Encode(lines); err != nil {
			t.Fatal(err)
		}
		var received [][]byte
		if err := msgpack.NewDecoder(&sent).Decode(&received); err != nil {
			t.Fatalf("decode the lines of %q: %v", s, err)
		}
		if got := format.joinLines(received); got != s {
			t.Fatalf("joinLines(splitText(%q)) = %q", s, got)
		}
	})
}

func TestDiffText(t *testing.T) {
	for _, tt := range []struct {
		text, want string
	}{
		{"", ""},
		{"\n", "\n"},
		{"a\r\nb", "a\nb\n"},
		{"\uFEFFa\nb\n", "a\nb\n"},
		{"a\r\nb\n", "a\r\nb\n"}, // mixed endings: the line keeps its \r, as Neovim shows it
	} {
		lines, _ := splitText(tt.text)
		if got := diffText(lines); got != tt.want {
			t.Errorf("diffText(splitText(%q)) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
