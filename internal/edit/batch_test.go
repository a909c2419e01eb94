package edit

import (
	"fmt"
	"strings"
	"testing"
)

// numbered builds a file of n lines "line 1" … "line n" (each ending in eol), with
// some lines replaced by the given texts.
func numbered(n int, eol string, set map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		text, ok := set[i]
		if !ok {
			text = fmt.Sprintf("line %d", i)
		}
		b.WriteString(text + eol)
	}
	return b.String()
}

func TestParseLineRange(t *testing.T) {
	for _, tt := range []struct {
		in         string
		start, end int
	}{{"1-50", 1, 50}, {" 3 - 3 ", 3, 3}} {
		start, end, err := ParseLineRange(tt.in)
		if err != nil || start != tt.start || end != tt.end {
			t.Errorf("ParseLineRange(%q) = %d, %d, %v", tt.in, start, end, err)
		}
	}
	for _, in := range []string{"", "5", "1-", "-3", "a-b", "0-5", "9-5", "1-99999999999999999999"} {
		_, _, err := ParseLineRange(in)
		mustFail(t, err, "Invalid line_range")
	}
}

func TestReadNumbered(t *testing.T) {
	tests := []struct {
		name       string
		content    string
		start, end int
		want       string
		lines      int
	}{
		{"whole file", "package com.example.lsmtree;\n\nclass A {}\n", 0, 0, "1 | package com.example.lsmtree;\n2 | \n3 | class A {}", 3},
		{"range", numbered(20, "\n", nil), 1, 2, "1 | line 1\n2 | line 2", 20},
		{"CRLF and BOM not shown", utf8BOM + "a\r\nb", 0, 0, "1 | a\n2 | b", 2},
		{"empty file", "", 0, 0, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lines, err := ReadNumbered([]byte(tt.content), tt.start, tt.end)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || lines != tt.lines {
				t.Errorf("got %q (%d lines), want %q (%d lines)", got, lines, tt.want, tt.lines)
			}
		})
	}
	_, _, err := ReadNumbered([]byte(numbered(20, "\n", nil)), 10, 50)
	if err == nil || err.Error() != "Line number 50 exceeds file length (20 lines)" {
		t.Errorf("out of range: %v", err)
	}
	_, _, err = ReadNumbered([]byte(numbered(20, "\n", nil)), 9, 5)
	mustFail(t, err, "Invalid line range 9-5")
	_, _, err = ReadNumbered([]byte("\x00"), 0, 0)
	mustFail(t, err, "binary")
}

func TestCheckLineCount(t *testing.T) {
	if err := CheckLineCount("a\nb\n", 2); err != nil {
		t.Errorf("matching count refused: %v", err)
	}
	mustFail(t, CheckLineCount("a\nb", 4), "expected 4 lines but the content has 2 lines", "truncated", "Nothing was written")
}

func TestWriteFilesMessage(t *testing.T) {
	one := WriteFilesMessage([]WrittenFile{{"config/database.js", CountLines("export const config = {\n  host: 'localhost',\n  port: 3306\n};")}})
	if want := "File written successfully: config/database.js (4 lines)"; one != want {
		t.Errorf("got %q, want %q", one, want)
	}
	files := []WrittenFile{
		{"package.json", CountLines("{\n  \"name\": \"my-project\",\n  \"version\": \"1.0.0\"\n}")},
		{"README.md", CountLines("# My Project\n\nA sample project")},
		{".gitignore", CountLines("node_modules/\n*.log\n.env")},
	}
	want := "Successfully wrote 3 files (10 total lines):\n  - package.json (4 lines)\n  - README.md (3 lines)\n  - .gitignore (3 lines)"
	if got := WriteFilesMessage(files); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestInsertContent(t *testing.T) {
	const abc = "a\nb\nc\n"
	tests := []struct {
		name     string
		content  string
		line     int
		text     string
		want     string
		position string
	}{
		{"before line 1", abc, 1, "x", "x\na\nb\nc\n", "1"},
		{"becomes line 3", abc, 3, "x", "a\nb\nx\nc\n", "3"},
		{"lines+1 appends", abc, 4, "x", "a\nb\nc\nx\n", "4"},
		{"0 appends", abc, 0, "x", "a\nb\nc\nx\n", "end of file"},
		{"-1 before the last line", abc, -1, "x", "a\nb\nx\nc\n", "3"},
		{"-3 before the first line", abc, -3, "x", "x\na\nb\nc\n", "1"},
		{"several lines", abc, 2, "x\ny\n", "a\nx\ny\nb\nc\n", "2"},
		{"empty text is an empty line", abc, 2, "", "a\n\nb\nc\n", "2"},
		{"CRLF", "a\r\nb\r\n", 0, "x\ny", "a\r\nb\r\nx\r\ny\r\n", "end of file"},
		{"no final newline: append", "a\nb", 0, "x", "a\nb\nx", "end of file"},
		{"no final newline: insert before last", "a\nb", -1, "x", "a\nx\nb", "2"},
		{"empty file", "", 0, "x", "x\n", "end of file"},
		{"empty file, line 1", "", 1, "x", "x\n", "1"},
		{"BOM", utf8BOM + "a\n", 1, "x", utf8BOM + "x\na\n", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InsertContent("f.txt", []byte(tt.content), tt.line, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Content) != tt.want || got.Position != tt.position {
				t.Errorf("got %q at %q, want %q at %q", got.Content, got.Position, tt.want, tt.position)
			}
			if got.Lines != CountLines(tt.want) || got.Inserted != len(contentLines(tt.text)) {
				t.Errorf("Lines %d, Inserted %d", got.Lines, got.Inserted)
			}
		})
	}
}

func TestInsertContentMessages(t *testing.T) {
	got, err := InsertContent("src/main/java/com/example/App.java", []byte(numbered(24, "\n", nil)), 3, "import java.util.ArrayList;")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Successfully inserted 1 line(s) at position 3 in src/main/java/com/example/App.java. File now has 25 lines."; got.Message != want {
		t.Errorf("got %q\nwant %q", got.Message, want)
	}
	got, err = InsertContent("main.js", []byte(numbered(44, "\n", nil)), 0, "// Main entry point")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Successfully inserted 1 line(s) at position end of file in main.js. File now has 45 lines."; got.Message != want {
		t.Errorf("got %q\nwant %q", got.Message, want)
	}
}

func TestInsertContentErrors(t *testing.T) {
	file := []byte(numbered(20, "\n", nil))
	tests := []struct {
		content []byte
		line    int
		errs    []string
	}{
		{file, 50, []string{"Line number 50 exceeds file length (20 lines)", "use 21 or 0"}},
		{file, -21, []string{"Line number -21 exceeds file length (20 lines)", "-20 before the first"}},
		{nil, -1, []string{"the file is empty"}},
		{[]byte("\x00"), 0, []string{"binary"}},
	}
	for _, tt := range tests {
		_, err := InsertContent("f", tt.content, tt.line, "x")
		mustFail(t, err, tt.errs...)
	}
}

func TestApplyDiffsSeedMessages(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		diffs   []Diff
		atomic  bool
		trim    bool
		message string
		want    string
	}{
		{
			name:    "one line",
			file:    numbered(45, "\n", map[int]string{25: "        <version>1.2.0</version>"}),
			diffs:   []Diff{{Search: "        <version>1.2.0</version>", Replace: "        <version>1.3.1</version>", StartLine: 25}},
			message: "Successfully applied diff to pom.xml: replaced 1 line(s) at line 25. File now has 45 lines.",
			want:    numbered(45, "\n", map[int]string{25: "        <version>1.3.1</version>"}),
		},
		{
			name: "multi-line, added",
			file: numbered(25, "\n", map[int]string{10: "const config = {", 11: "  port: 3000,", 12: "  host: 'localhost'", 13: "};"}),
			diffs: []Diff{{
				Search:    "const config = {\n  port: 3000,\n  host: 'localhost'\n};",
				Replace:   "const config = {\n  port: process.env.PORT || 8080,\n  host: process.env.HOST || '0.0.0.0',\n  ssl: process.env.SSL || false\n};",
				StartLine: 10,
			}},
			message: "Successfully applied diff to pom.xml: replaced 4 line(s) at line 10 (added 1 line(s)). File now has 26 lines.",
		},
		{
			name:    "removed",
			file:    numbered(10, "\n", nil),
			diffs:   []Diff{{Search: "line 3\nline 4\nline 5", Replace: "line 3", StartLine: 3}},
			message: "Successfully applied diff to pom.xml: replaced 3 line(s) at line 3 (removed 2 line(s)). File now has 8 lines.",
		},
		{
			name:    "trim",
			file:    numbered(25, "\n", map[int]string{5: "    console.log('Hello World');"}),
			diffs:   []Diff{{Search: "console.log('Hello World');", Replace: "    console.log('Hello Universe');", StartLine: 5}},
			trim:    true,
			message: "Successfully applied diff to pom.xml: replaced 1 line(s) at line 5. File now has 25 lines.",
			want:    numbered(25, "\n", map[int]string{5: "    console.log('Hello Universe');"}),
		},
		{
			name: "batch",
			file: numbered(30, "\n", map[int]string{2: "    console.log('start');", 15: "    return false;", 28: "    console.log('end');"}),
			diffs: []Diff{
				{Search: "    console.log('start');", Replace: "    console.log('application started');", StartLine: 2},
				{Search: "    return false;", Replace: "    return true;", StartLine: 15},
				{Search: "    console.log('end');", Replace: "    console.log('application ended');", StartLine: 28},
			},
			atomic: true,
			message: "Batch diff operation (atomic) completed: 3/3 diffs applied successfully to pom.xml. File now has 30 lines." +
				"\n\nDetailed results:\n\nDiff 1:\n  Status: success\n  Start Line: 2\n  Message: Replaced 1 line(s) at line 2" +
				"\n\nDiff 2:\n  Status: success\n  Start Line: 15\n  Message: Replaced 1 line(s) at line 15" +
				"\n\nDiff 3:\n  Status: success\n  Start Line: 28\n  Message: Replaced 1 line(s) at line 28",
			want: numbered(30, "\n", map[int]string{2: "    console.log('application started');", 15: "    return true;", 28: "    console.log('application ended');"}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyDiffs("pom.xml", []byte(tt.file), tt.diffs, tt.atomic, tt.trim)
			if err != nil {
				t.Fatal(err)
			}
			if got.Message != tt.message {
				t.Errorf("message\n%q\nwant\n%q", got.Message, tt.message)
			}
			if tt.want != "" && string(got.Content) != tt.want {
				t.Errorf("content\n%q\nwant\n%q", got.Content, tt.want)
			}
		})
	}
}

func TestApplyDiffsLocate(t *testing.T) {
	file := "x\nA\nx\nx\nA\nx\nx\nx\n" // A at lines 2 and 5
	tests := []struct {
		name      string
		file      string
		diffs     []Diff
		trim      bool
		want      string
		foundLine []int
	}{
		{"at the hint", file, []Diff{{Search: "A", Replace: "B", StartLine: 5}}, false, "x\nA\nx\nx\nB\nx\nx\nx\n", []int{5}},
		{"nearest to the hint", file, []Diff{{Search: "A", Replace: "B", StartLine: 7}}, false, "x\nA\nx\nx\nB\nx\nx\nx\n", []int{5}},
		{"tie goes to the earlier", "A\nx\nA\n", []Diff{{Search: "A", Replace: "B", StartLine: 2}}, false, "B\nx\nA\n", []int{1}},
		{"hint past the end", file, []Diff{{Search: "A", Replace: "B", StartLine: 99}}, false, "x\nA\nx\nx\nB\nx\nx\nx\n", []int{5}},
		{"offsets handled", "a\nb\nc\nd\n", []Diff{
			{Search: "a", Replace: "a1\na2\na3", StartLine: 1},
			{Search: "c", Replace: "C", StartLine: 3},
		}, false, "a1\na2\na3\nb\nC\nd\n", []int{1, 3}},
		{"empty replacement deletes", "a\nb\nc\n", []Diff{{Search: "b", Replace: "", StartLine: 2}}, false, "a\nc\n", []int{2}},
		{"blank line as search", "a\n\nb\n", []Diff{{Search: "\n", Replace: "x", StartLine: 1}}, false, "a\nx\nb\n", []int{2}},
		{"trim both sides", "  a  \n\tb\n", []Diff{{Search: "a\n   b", Replace: "c", StartLine: 1}}, true, "c\n", []int{1}},
		{"CRLF", "a\r\nb\r\nc\r\n", []Diff{{Search: "b\n", Replace: "x\ny\n", StartLine: 2}}, false, "a\r\nx\r\ny\r\nc\r\n", []int{2}},
		{"no final newline", "a\nb", []Diff{{Search: "b", Replace: "c\nd", StartLine: 2}}, false, "a\nc\nd", []int{2}},
		{"BOM", utf8BOM + "a\nb\n", []Diff{{Search: "a", Replace: "c", StartLine: 1}}, false, utf8BOM + "c\nb\n", []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyDiffs("f", []byte(tt.file), tt.diffs, true, tt.trim)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Content) != tt.want {
				t.Errorf("content %q, want %q", got.Content, tt.want)
			}
			for i, o := range got.Outcomes {
				if o.Line != tt.foundLine[i] || o.Status != "success" {
					t.Errorf("diff %d: %+v, want found at line %d", i+1, o, tt.foundLine[i])
				}
			}
		})
	}
}

func TestApplyDiffsFailures(t *testing.T) {
	const file = "a\nb\nc\nd\n"
	ok := Diff{Search: "a", Replace: "A", StartLine: 1}
	missing := Diff{Search: "zzz", Replace: "y", StartLine: 3}

	_, err := ApplyDiffs("main.js", []byte(file), []Diff{ok, missing}, true, false)
	mustFail(t, err, "Batch diff operation (atomic) failed: 0/2 diffs applied to main.js; no changes were made.",
		"Diff 1:\n  Status: skipped\n  Start Line: 1\n  Message: Found at line 1 but not applied: atomic mode and another diff failed",
		"Diff 2:\n  Status: failed\n  Start Line: 3\n  Message: search_content (1 line) not found at line 3 or anywhere else in the file")

	got, err := ApplyDiffs("main.js", []byte(file), []Diff{ok, missing}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Content) != "A\nb\nc\nd\n" || got.Applied != 1 {
		t.Errorf("non-atomic: %q, %d applied", got.Content, got.Applied)
	}
	if want := "Batch diff operation (non-atomic) completed: 1/2 diffs applied successfully to main.js. File now has 4 lines." +
		"\n\nDetailed results:\n\nDiff 1:\n  Status: success\n  Start Line: 1\n  Message: Replaced 1 line(s) at line 1" +
		"\n\nDiff 2:\n  Status: failed\n  Start Line: 3\n  Message: "; !strings.HasPrefix(got.Message, want) {
		t.Errorf("non-atomic message:\n%s", got.Message)
	}

	tests := []struct {
		name      string
		file      string
		diffs     []Diff
		nonAtomic bool
		errs      []string
	}{
		{"single not found", file, []Diff{missing}, false, []string{"Failed to apply diff to main.js: search_content (1 line) not found", "Nothing was changed."}},
		{"non-atomic, nothing applied", file, []Diff{missing, missing}, true, []string{"Batch diff operation (non-atomic) failed: 0/2"}},
		{"whitespace hint", "  a\n", []Diff{{Search: "a", Replace: "b", StartLine: 1}}, false, []string{"matches at line 1 if leading and trailing whitespace is ignored", "trim=true"}},
		{"first line hint", file, []Diff{{Search: "b\nx", Replace: "y", StartLine: 1}}, false, []string{"its first line matches line 2 but the lines after it differ"}},
		{"empty search", file, []Diff{{Search: "", Replace: "y", StartLine: 1}}, false, []string{"search_content is empty"}},
		{"bad start_line", file, []Diff{{Search: "a", Replace: "y", StartLine: 0}}, false, []string{"start_line 0 is not a line number"}},
		{"overlap", file, []Diff{
			{Search: "a\nb", Replace: "x", StartLine: 1},
			{Search: "b\nc", Replace: "y", StartLine: 2},
		}, false, []string{"Diff 2:\n  Status: failed", "overlaps diff 1 (lines 1-2)"}},
		{"no diffs", file, nil, false, []string{"No diffs given"}},
		{"binary", "\x00", []Diff{ok}, false, []string{"binary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ApplyDiffs("main.js", []byte(tt.file), tt.diffs, !tt.nonAtomic, false)
			mustFail(t, err, tt.errs...)
		})
	}
}
