package edit

import "testing"

func TestOverwrite(t *testing.T) {
	overwrite := func(old []byte, content string) (string, error) { return string(Overwrite(old, content)), nil }
	runCalls(t, overwrite, []call[string, string]{
		{"LF file", "a\nb\n", "x\ny\n", "x\ny\n", nil},
		{"CRLF file gets CRLF", "a\r\nb\r\n", "x\ny\n", "x\r\ny\r\n", nil},
		{"CRLF file, no final newline kept", "a\r\nb\r\n", "x\ny", "x\r\ny", nil},
		{"content with CRLF left alone", "a\r\nb\r\n", "x\r\ny\n", "x\r\ny\n", nil},
		{"LF file, CRLF content left alone", "a\nb\n", "x\r\ny\r\n", "x\r\ny\r\n", nil},
		{"mostly LF file", "a\r\nb\nc\n", "x\ny\n", "x\ny\n", nil},
		{"BOM kept", utf8BOM + "a\n", "x\n", utf8BOM + "x\n", nil},
		{"BOM not doubled", utf8BOM + "a\n", utf8BOM + "x\n", utf8BOM + "x\n", nil},
		{"BOM and CRLF", utf8BOM + "a\r\n", "x\n", utf8BOM + "x\r\n", nil},
		{"empty content", utf8BOM + "a\r\n", "", "", nil},
		{"empty old file", "", "x\n", "x\n", nil},
		{"invalid UTF-8 kept", "a\n", "\xff\n", "\xff\n", nil},
	})
}
