package edit

import "testing"

func TestOverwrite(t *testing.T) {
	tests := []struct {
		name    string
		old     string
		content string
		want    string
	}{
		{"LF file", "a\nb\n", "x\ny\n", "x\ny\n"},
		{"CRLF file gets CRLF", "a\r\nb\r\n", "x\ny\n", "x\r\ny\r\n"},
		{"CRLF file, no final newline kept", "a\r\nb\r\n", "x\ny", "x\r\ny"},
		{"content with CRLF left alone", "a\r\nb\r\n", "x\r\ny\n", "x\r\ny\n"},
		{"LF file, CRLF content left alone", "a\nb\n", "x\r\ny\r\n", "x\r\ny\r\n"},
		{"mostly LF file", "a\r\nb\nc\n", "x\ny\n", "x\ny\n"},
		{"BOM kept", utf8BOM + "a\n", "x\n", utf8BOM + "x\n"},
		{"BOM not doubled", utf8BOM + "a\n", utf8BOM + "x\n", utf8BOM + "x\n"},
		{"BOM and CRLF", utf8BOM + "a\r\n", "x\n", utf8BOM + "x\r\n"},
		{"empty content", utf8BOM + "a\r\n", "", ""},
		{"empty old file", "", "x\n", "x\n"},
		{"invalid UTF-8 kept", "a\n", "\xff\n", "\xff\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Overwrite([]byte(tt.old), tt.content); string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
