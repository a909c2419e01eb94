package edit

import "testing"

func TestApplyPatch(t *testing.T) {
	const diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	tests := []struct {
		name    string
		content string
		diff    string
		want    string
	}{
		{"LF", "a\nb\nc\n", diff, "a\nB\nc\n"},
		{"CRLF file, LF diff", "a\r\nb\r\nc\r\n", diff, "a\r\nB\r\nc\r\n"},
		{"BOM", utf8BOM + "a\nb\nc\n", diff, utf8BOM + "a\nB\nc\n"},
		{"no final newline", "a\nb\nc", diff, "a\nB\nc"},
		{"no headers, no numbers", "x\na\nb\nc\n", "@@ @@\n a\n-b\n+B\n", "x\na\nB\nc\n"},
		{"shifted hunk found nearby", "0\n1\na\nb\nc\n", diff, "0\n1\na\nB\nc\n"},
		{"invalid UTF-8 kept", "\xff\nb\n", "@@ -1,2 +1,2 @@\n \xff\n-b\n+c\n", "\xff\nc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := []byte(tt.content)
			got, err := ApplyPatch(content, tt.diff)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if string(content) != tt.content {
				t.Errorf("the input was modified")
			}
		})
	}
}

func TestApplyPatchErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		diff    string
		errs    []string
	}{
		{"hunk does not match", "a\nb\nc\n", "@@ -1,2 +1,2 @@\n a\n-x\n+y\n",
			[]string{"Hunk 1 of the diff did not apply", `"b"`, `"x"`, "Nothing was changed."}},
		{"second hunk does not match", "a\nb\nc\nd\n", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -3,2 +3,2 @@\n c\n-z\n+Z\n",
			[]string{"Hunk 2 of the diff did not apply"}},
		{"not a diff", "a\n", "just text", []string{"The diff could not be read", "@@ -12,3 +12,4 @@"}},
		{"no change", "a\n", "@@ -1 +1 @@\n a\n", []string{"no change"}},
		{"binary", "\x00", "@@ -1 +1 @@\n-a\n+b\n", []string{"binary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ApplyPatch([]byte(tt.content), tt.diff)
			mustFail(t, err, tt.errs...)
		})
	}
}
