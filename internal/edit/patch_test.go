package edit

import "testing"

func TestApplyPatch(t *testing.T) {
	applyPatch := func(content []byte, diff string) (string, error) {
		got, err := ApplyPatch(content, diff)
		return string(got), err
	}
	const diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	runCalls(t, applyPatch, []call[string, string]{
		{"LF", "a\nb\nc\n", diff, "a\nB\nc\n", nil},
		{"CRLF file, LF diff", "a\r\nb\r\nc\r\n", diff, "a\r\nB\r\nc\r\n", nil},
		{"BOM", utf8BOM + "a\nb\nc\n", diff, utf8BOM + "a\nB\nc\n", nil},
		{"no final newline", "a\nb\nc", diff, "a\nB\nc", nil},
		{"no headers, no numbers", "x\na\nb\nc\n", "@@ @@\n a\n-b\n+B\n", "x\na\nB\nc\n", nil},
		{"shifted hunk found nearby", "0\n1\na\nb\nc\n", diff, "0\n1\na\nB\nc\n", nil},
		{"invalid UTF-8 kept", "\xff\nb\n", "@@ -1,2 +1,2 @@\n \xff\n-b\n+c\n", "\xff\nc\n", nil},

		{"hunk does not match", "a\nb\nc\n", "@@ -1,2 +1,2 @@\n a\n-x\n+y\n", "",
			[]string{"Hunk 1 of the diff did not apply", `"b"`, `"x"`, "Nothing was changed."}},
		{"second hunk does not match", "a\nb\nc\nd\n", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -3,2 +3,2 @@\n c\n-z\n+Z\n", "",
			[]string{"Hunk 2 of the diff did not apply"}},
		{"not a diff", "a\n", "just text", "", []string{"The diff could not be read", "@@ -12,3 +12,4 @@"}},
		{"no change", "a\n", "@@ -1 +1 @@\n a\n", "", []string{"no change"}},
		{"binary", "\x00", "@@ -1 +1 @@\n-a\n+b\n", "", []string{"binary"}},
	})
}
