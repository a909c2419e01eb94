package edit

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestTag(t *testing.T) {
	fnvLowByte := func(s string) string {
		h := fnv.New32a()
		h.Write([]byte(s))
		return fmt.Sprintf("%02x", byte(h.Sum32()))
	}
	tests := []struct{ line, hashed string }{
		{"", ""},
		{"function hello() {", "function hello() {"},
		{"  return x;  \t", "  return x;"},
		{"abc\r", "abc"},
		{"abc\u00a0\u3000", "abc"}, // Unicode white space counts too
		{"caf\xe9", "caf\xe9"},     // invalid UTF-8 is hashed as bytes
	}
	for _, tt := range tests {
		if got, want := Tag(tt.line), fnvLowByte(tt.hashed); got != want {
			t.Errorf("Tag(%q) = %s, want %s", tt.line, got, want)
		}
	}
	if Tag("") != "c5" { // 0x811c9dc5, the FNV-1a offset basis
		t.Errorf("Tag(\"\") = %s, want c5", Tag(""))
	}
	if Tag("x = 1") == Tag("  x = 1") {
		t.Errorf("indentation must change the tag")
	}
}

func TestFileHash(t *testing.T) {
	if got := FileHash(nil); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("FileHash(empty) = %s", got)
	}
	content := []byte("a\r\nb")
	if got, want := FileHash(content), fmt.Sprintf("%x", sha256.Sum256(content)); got != want {
		t.Errorf("FileHash = %s, want %s", got, want)
	}
}

// tagged renders lines the way ReadTagged does, for expectations.
func tagged(from int, texts ...string) string {
	var b strings.Builder
	for i, text := range texts {
		fmt.Fprintf(&b, "%d:%s|%s\n", from+i, Tag(text), text)
	}
	return b.String()
}

// anchorOf is the anchor read_text_file shows for line n of content.
func anchorOf(content string, n int) string {
	return fmt.Sprintf("%d:%s", n, Tag(LineTexts([]byte(content))[n-1]))
}

// readTagged is a Reading of content's lines start..end as text.
func readTagged(content []byte, start, end int) (string, error) {
	r, err := NewReading(content)
	if err != nil {
		return "", err
	}
	if err := r.Select(start, end); err != nil {
		return "", err
	}
	return r.String(), nil
}

func TestReadTagged(t *testing.T) {
	hashOf := func(s string) string { return "file_hash: " + FileHash([]byte(s)) }
	tests := []struct {
		name       string
		content    string
		start, end int
		want       string
	}{
		{"LF", "a\nb\n", 0, 0, tagged(1, "a", "b")},
		{"CRLF gets the LF tags", "a\r\nb\r\n", 0, 0, tagged(1, "a", "b")},
		{"BOM is not on line 1", utf8BOM + "a\nb", 0, 0, tagged(1, "a", "b")},
		{"no final newline", "a\nb", 0, 0, tagged(1, "a", "b")},
		{"blank last line", "a\n\n", 0, 0, tagged(1, "a", "")},
		{"range", "a\nb\nc\nd\n", 2, 3, tagged(2, "b", "c")},
		{"open start", "a\nb\nc\n", 0, 2, tagged(1, "a", "b")},
		{"open end", "a\nb\nc\n", 3, 0, tagged(3, "c")},
		{"invalid UTF-8 kept", "caf\xe9\n", 0, 0, tagged(1, "caf\xe9")},
		{"empty file", "", 0, 0, emptyFileNote + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readTagged([]byte(tt.content), tt.start, tt.end)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.want + hashOf(tt.content); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestReadTaggedErrors(t *testing.T) {
	file := []byte(strings.Repeat("line\n", 20))
	tests := []struct {
		name       string
		content    []byte
		start, end int
		want       []string
	}{
		{"start past end", file, 21, 0, []string{"start_line 21", "(20 lines)"}},
		{"end past end", file, 1, 30, []string{"end_line 30", "(20 lines)", "use end_line 20"}},
		{"start after end", file, 9, 5, []string{"start_line 9 is after end_line 5"}},
		{"negative", file, -1, 0, []string{"1-based"}},
		{"empty file", nil, 1, 0, []string{"empty (0 lines)"}},
		{"binary", []byte("a\x00b"), 0, 0, []string{"binary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readTagged(tt.content, tt.start, tt.end)
			mustFail(t, err, tt.want...)
		})
	}
}

func TestReadTaggedHugeLine(t *testing.T) {
	line := strings.Repeat("x", 10<<20)
	got, err := readTagged([]byte(line+"\n"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1:" + Tag(line) + "|" + line + "\n"; !strings.HasPrefix(got, want) {
		t.Errorf("huge line not rendered whole")
	}
}

func TestParseAnchor(t *testing.T) {
	valid := []struct {
		in   string
		want anchor
	}{
		{"12:ab", anchor{12, "ab"}},
		{" 12:ab ", anchor{12, "ab"}},
		{"12:ab|  return x;", anchor{12, "ab"}},
		{"12:ab |", anchor{12, "ab"}},
		{"7:0F", anchor{7, "0f"}},
		{"007:00", anchor{7, "00"}},
	}
	for _, tt := range valid {
		got, err := parseAnchor(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseAnchor(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	invalid := []string{"", "12", "ab", "12:a", "12:abc", "12:gg", "0:ab", "-1:ab", "+1:ab",
		"1 2:ab", "12 :ab", "12: ab", "12:ab:cd", "1234567890:ab", "L12:ab", ":ab", "12:"}
	for _, in := range invalid {
		if got, err := parseAnchor(in); err == nil {
			t.Errorf("parseAnchor(%q) = %v, want an error", in, got)
		} else {
			mustFail(t, err, "e.g. \"12:a3\"")
		}
	}
}

// editCase is one EditTagged call on content whose view is the current file.
type editCase struct {
	name    string
	content string
	ops     []Op
	want    string
}

func runEditCases(t *testing.T, tests []editCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := []byte(tt.content)
			res, err := EditTagged(content, FileHash(content), tt.ops, [][]string{LineTexts(content)})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Content) != tt.want {
				t.Errorf("content = %q, want %q", res.Content, tt.want)
			}
			if !reflect.DeepEqual(res.Lines, LineTexts(res.Content)) {
				t.Errorf("Lines = %q, want the new file's line texts", res.Lines)
			}
			if !strings.HasSuffix(res.Summary, "file_hash: "+FileHash(res.Content)) {
				t.Errorf("summary does not end with the new file_hash:\n%s", res.Summary)
			}
			if string(content) != tt.content {
				t.Errorf("the input was modified")
			}
		})
	}
}

func TestEditTaggedOps(t *testing.T) {
	const abc = "a\nb\nc\n"
	a, b, c := anchorOf(abc, 1), anchorOf(abc, 2), anchorOf(abc, 3)
	runEditCases(t, []editCase{
		{"replace", abc, []Op{{Op: "replace", Anchor: b, Content: s("B")}}, "a\nB\nc\n"},
		{"replace with several lines", abc, []Op{{Op: "replace", Anchor: b, Content: s("x\ny")}}, "a\nx\ny\nc\n"},
		{"trailing newline is not an extra line", abc, []Op{{Op: "replace", Anchor: b, Content: s("x\n")}}, "a\nx\nc\n"},
		{"empty content is one empty line", abc, []Op{{Op: "replace", Anchor: b, Content: s("")}}, "a\n\nc\n"},
		{"CRLF content written as LF", abc, []Op{{Op: "replace", Anchor: b, Content: s("x\r\ny\r\n")}}, "a\nx\ny\nc\n"},
		{"replace_range", abc, []Op{{Op: "replace_range", Start: a, End: b, Content: s("z")}}, "z\nc\n"},
		{"insert_after", abc, []Op{{Op: "insert_after", Anchor: a, Content: s("n")}}, "a\nn\nb\nc\n"},
		{"insert_before", abc, []Op{{Op: "insert_before", Anchor: a, Content: s("n")}}, "n\na\nb\nc\n"},
		{"insert_after last", abc, []Op{{Op: "insert_after", Anchor: c, Content: s("n")}}, "a\nb\nc\nn\n"},
		{"delete", abc, []Op{{Op: "delete", Anchor: b}}, "a\nc\n"},
		{"delete with empty content", abc, []Op{{Op: "delete", Anchor: b, Content: s("")}}, "a\nc\n"},
		{"delete_range", abc, []Op{{Op: "delete_range", Start: b, End: c}}, "a\n"},
		{"delete everything", abc, []Op{{Op: "delete_range", Start: a, End: c}}, ""},
		{"anchor with copied text", abc, []Op{{Op: "replace", Anchor: " " + b + "|b", Content: s("B")}}, "a\nB\nc\n"},
		{"copied read prefixes are stripped", abc,
			[]Op{{Op: "replace", Anchor: b, Content: s("2:" + Tag("x") + "|x\n3:" + Tag("y") + "|y")}}, "a\nx\ny\nc\n"},
		{"several ops apply to the file as read", abc, []Op{
			{Op: "delete", Anchor: a},
			{Op: "replace", Anchor: c, Content: s("C")},
			{Op: "insert_after", Anchor: b, Content: s("b2")},
		}, "b\nb2\nC\n"},
		{"inserts at one point keep their order", abc, []Op{
			{Op: "insert_after", Anchor: a, Content: s("1")},
			{Op: "insert_before", Anchor: b, Content: s("2")},
			{Op: "insert_after", Anchor: a, Content: s("3")},
		}, "a\n1\n2\n3\nb\nc\n"},
		{"insert before a replaced line", abc, []Op{
			{Op: "replace", Anchor: b, Content: s("B")},
			{Op: "insert_before", Anchor: b, Content: s("n")},
		}, "a\nn\nB\nc\n"},
		{"insert after a deleted line", abc, []Op{
			{Op: "delete", Anchor: b},
			{Op: "insert_after", Anchor: b, Content: s("n")},
		}, "a\nn\nc\n"},
	})
}

func TestEditTaggedKeepsBytes(t *testing.T) {
	const crlf = "a\r\nb\r\nc\r\n"
	const noEOL = "a\nb\nc"
	const bom = utf8BOM + "a\nb\n"
	const mixed = "a\r\nb\nc\r\nd\r\n"
	runEditCases(t, []editCase{
		{"CRLF replace", crlf, []Op{{Op: "replace", Anchor: anchorOf(crlf, 2), Content: s("x\ny")}}, "a\r\nx\r\ny\r\nc\r\n"},
		{"CRLF insert", crlf, []Op{{Op: "insert_after", Anchor: anchorOf(crlf, 3), Content: s("d")}}, "a\r\nb\r\nc\r\nd\r\n"},
		{"mixed: other lines keep theirs", mixed, []Op{{Op: "replace", Anchor: anchorOf(mixed, 3), Content: s("C")}}, "a\r\nb\nC\r\nd\r\n"},
		{"no final newline: append", noEOL, []Op{{Op: "insert_after", Anchor: anchorOf(noEOL, 3), Content: s("d")}}, "a\nb\nc\nd"},
		{"no final newline: replace last", noEOL, []Op{{Op: "replace", Anchor: anchorOf(noEOL, 3), Content: s("C\n")}}, "a\nb\nC"},
		{"no final newline: delete last", noEOL, []Op{{Op: "delete", Anchor: anchorOf(noEOL, 3)}}, "a\nb"},
		{"no final newline: insert before last", noEOL, []Op{{Op: "insert_before", Anchor: anchorOf(noEOL, 3), Content: s("x")}}, "a\nb\nx\nc"},
		{"no final newline: an empty last line keeps its newline", noEOL, []Op{{Op: "insert_after", Anchor: anchorOf(noEOL, 3), Content: s("")}}, "a\nb\nc\n\n"},
		{"no final newline: a blank line left last keeps its newline", "a\n\nb", []Op{{Op: "delete", Anchor: anchorOf("a\n\nb", 3)}}, "a\n\n"},
		{"BOM stays", bom, []Op{{Op: "replace", Anchor: anchorOf(bom, 1), Content: s("A")}}, utf8BOM + "A\nb\n"},
		{"BOM stays when line 1 goes", bom, []Op{{Op: "delete", Anchor: anchorOf(bom, 1)}}, utf8BOM + "b\n"},
		{"invalid UTF-8 kept", "\xff\nx\n", []Op{{Op: "replace", Anchor: anchorOf("\xff\nx\n", 2), Content: s("\xfe")}}, "\xff\n\xfe\n"},
	})
}

func TestEditTaggedSummary(t *testing.T) {
	content := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
	ops := []Op{
		{Op: "replace", Anchor: anchorOf(content, 2), Content: s("two")},
		{Op: "delete", Anchor: anchorOf(content, 9)},
	}
	res, err := EditTagged([]byte(content), "", ops, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "Applied 2 operations: replace " + anchorOf(content, 2) + ", delete " + anchorOf(content, 9) + ".\n" +
		"\nLines 1-4 now:\n" + tagged(1, "l1", "two", "l3", "l4") +
		"\nLines 7-9 now:\n" + tagged(7, "l7", "l8", "l10") +
		"file_hash: " + FileHash(res.Content)
	if res.Summary != want {
		t.Errorf("summary\n%s\nwant\n%s", res.Summary, want)
	}
}

func TestEditTaggedSummaryNotes(t *testing.T) {
	content := "a\nb\n"
	res, err := EditTagged([]byte(content), "", []Op{
		{Op: "replace", Anchor: anchorOf(content, 2), Content: s("2:00|x")},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "operation 1: removed the N:hh| prefixes") {
		t.Errorf("summary does not mention the stripped prefixes:\n%s", res.Summary)
	}
	res, err = EditTagged([]byte(content), "", []Op{{Op: "delete_range", Start: anchorOf(content, 1), End: anchorOf(content, 2)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "The file is now empty.") {
		t.Errorf("summary of an emptied file:\n%s", res.Summary)
	}
}

func TestEditTaggedAnchors(t *testing.T) {
	const shown = "func f() {\n\tx := 1\n\treturn x\n}\n"
	view := LineTexts([]byte(shown))
	ret := anchorOf(shown, 3)
	changed, collider := collidingLinesFor(t, "return total")
	withCollision := "a\n" + changed + "\nc\n"
	collisionView := LineTexts([]byte(withCollision))
	nowColliding := "a\n" + collider + "\nc\n"

	tests := []struct {
		name    string
		current string
		views   [][]string
		ops     []Op
		want    string   // new content when the call succeeds
		summary string   // text the summary must hold
		errs    []string // texts the refusal must hold
	}{
		{
			name: "unchanged", current: shown, views: [][]string{view},
			ops:  []Op{{Op: "replace", Anchor: ret, Content: s("\treturn 2")}},
			want: "func f() {\n\tx := 1\n\treturn 2\n}\n",
		},
		{
			name: "moved line is relocated", current: "// doc\n// more\n" + shown, views: [][]string{view},
			ops:     []Op{{Op: "replace", Anchor: ret, Content: s("\treturn 2")}},
			want:    "// doc\n// more\nfunc f() {\n\tx := 1\n\treturn 2\n}\n",
			summary: "anchor " + ret + " moved to line 5",
		},
		{
			name: "changed line is stale", current: "func f() {\n\tx := 1\n\treturn x + 1\n}\n", views: [][]string{view},
			ops: []Op{{Op: "replace", Anchor: ret, Content: s("\treturn 2")}},
			errs: []string{"anchor " + ret + " is stale", `shown line 3 as "\treturn x"`, `it now holds "\treturn x + 1"`,
				"that text is on no other line", "Current lines 1-4:", "file_hash: ", "Re-read the file or use these anchors."},
		},
		{
			name: "ambiguous relocation is stale", current: "\treturn x\n" + "\n" + shown, views: [][]string{view},
			ops:  []Op{{Op: "replace", Anchor: ret, Content: s("\treturn 2")}},
			errs: []string{"that text is now on 2 lines (1, 5), so it cannot be relocated"},
		},
		{
			name: "line gone past the end", current: "func f() {\n", views: [][]string{view},
			ops:  []Op{{Op: "delete", Anchor: ret}},
			errs: []string{"the file now has only 1 line", "Current lines 1-1:"},
		},
		{
			name: "no view: the tag decides", current: shown, views: nil,
			ops:  []Op{{Op: "replace", Anchor: ret, Content: s("\treturn 2")}},
			want: "func f() {\n\tx := 1\n\treturn 2\n}\n",
		},
		{
			name: "no view: wrong tag is stale", current: "func f() {\n\tx := 1\n\treturn x + 1\n}\n", views: nil,
			ops:  []Op{{Op: "replace", Anchor: ret, Content: s("\treturn 2")}},
			errs: []string{"line 3 now holds \"\\treturn x + 1\" (tag " + Tag("\treturn x + 1") + ")"},
		},
		{
			name: "colliding tag passes without a view", current: nowColliding, views: nil,
			ops:  []Op{{Op: "replace", Anchor: anchorOf(withCollision, 2), Content: s("B")}},
			want: "a\nB\nc\n",
		},
		{
			name: "colliding tag is caught by the view", current: nowColliding, views: [][]string{collisionView},
			ops:  []Op{{Op: "replace", Anchor: anchorOf(withCollision, 2), Content: s("B")}},
			errs: []string{"is stale", quote(changed), quote(collider)},
		},
		{
			name: "the newest view with the tag wins", current: "new\n",
			views: [][]string{{"new"}, {"old"}},
			ops:   []Op{{Op: "replace", Anchor: "1:" + Tag("old"), Content: s("x")}},
			errs:  []string{`shown line 1 as "old"`},
		},
		{
			name: "older view used when the newer has another tag", current: "b\nkeep\n",
			views:   [][]string{{"a", "keep"}, {"keep"}},
			ops:     []Op{{Op: "insert_after", Anchor: "1:" + Tag("keep"), Content: s("x")}},
			want:    "b\nkeep\nx\n",
			summary: "anchor 1:" + Tag("keep") + " moved to line 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := EditTagged([]byte(tt.current), "", tt.ops, tt.views)
			if !wantContent(t, res, err, tt.want, tt.errs) {
				return
			}
			if !strings.Contains(res.Summary, tt.summary) {
				t.Errorf("summary lacks %q:\n%s", tt.summary, res.Summary)
			}
		})
	}
}

func TestEditTaggedRanges(t *testing.T) {
	const shown = "head\nstart\nmid1\nmid2\nend\ntail\n"
	view := [][]string{LineTexts([]byte(shown))}
	start, end := anchorOf(shown, 2), anchorOf(shown, 5)
	_, sameTagMid := collidingLinesFor(t, "mid1")
	tests := []struct {
		name    string
		current string
		want    string
		errs    []string
	}{
		{"unchanged", shown, "head\nX\ntail\n", nil},
		{"moved as a block", "new\n" + shown, "new\nhead\nX\ntail\n", nil},
		{"changed middle line", "head\nstart\nmid1\nMID2\nend\ntail\n", "",
			[]string{"line 4 inside the range changed", `it was "mid2", now "MID2"`}},
		{"middle changed to a line with the same tag", strings.Replace(shown, "mid1", sameTagMid, 1), "",
			[]string{"line 3 inside the range changed"}},
		{"line added inside", "head\nstart\nmid1\nextra\nmid2\nend\ntail\n", "",
			[]string{"the lines between start and end changed", "held 4 lines, now 5 lines"}},
		{"ends swapped", "head\nend\nmid1\nmid2\nstart\ntail\n", "",
			[]string{"resolved to line 5, after end"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := EditTagged([]byte(tt.current), "", []Op{{Op: "replace_range", Start: start, End: end, Content: s("X")}}, view)
			wantContent(t, res, err, tt.want, tt.errs)
		})
	}
}

// wantContent checks an EditTagged result: the error naming every string of errs
// when errs is set, else the content want. It reports whether the edit was made.
func wantContent(t *testing.T, res *TaggedEdit, err error, want string, errs []string) bool {
	t.Helper()
	if wantRefusal(t, err, errs) {
		return false
	}
	if string(res.Content) != want {
		t.Errorf("content = %q, want %q", res.Content, want)
	}
	return true
}

// collidingLinesFor returns base and a different line with the same tag.
func collidingLinesFor(t *testing.T, base string) (string, string) {
	t.Helper()
	for i := 0; i < 100000; i++ {
		if other := fmt.Sprintf("%s/%d", base, i); Tag(other) == Tag(base) {
			return base, other
		}
	}
	t.Fatal("no colliding line found")
	return "", ""
}

func TestEditTaggedRefusals(t *testing.T) {
	const abc = "a\nb\nc\nd\n"
	a, b, c, d := anchorOf(abc, 1), anchorOf(abc, 2), anchorOf(abc, 3), anchorOf(abc, 4)
	tests := []struct {
		name string
		hash string
		ops  []Op
		errs []string
	}{
		{"no ops", "", nil, []string{"no operations"}},
		{"unknown op", "", []Op{{Op: "set_line", Anchor: a}}, []string{`unknown op "set_line"`, "replace_range"}},
		{"missing anchor", "", []Op{{Op: "replace", Content: s("x")}}, []string{"operation 1 (replace) needs an anchor"}},
		{"missing content", "", []Op{{Op: "insert_after", Anchor: a}}, []string{"needs content"}},
		{"range without end", "", []Op{{Op: "delete_range", Start: a}}, []string{"needs start and end"}},
		{"delete with content", "", []Op{{Op: "delete_range", Start: a, End: b, Content: s("x")}}, []string{"takes no content", "replace_range"}},
		{"bad anchor", "", []Op{{Op: "delete", Anchor: "2-" + b[2:]}}, []string{"operation 1 (delete): anchor"}},
		{"start after end", "", []Op{{Op: "delete_range", Start: c, End: a}}, []string{"start " + c + " comes after end " + a}},
		{"every syntax problem listed", "", []Op{{Op: "bogus"}, {Op: "delete"}}, []string{"operation 1:", "operation 2 (delete)"}},
		{"overlap: same line twice", "", []Op{
			{Op: "replace", Anchor: b, Content: s("x")},
			{Op: "delete", Anchor: b},
		}, []string{"operation 1 (replace " + b + ") and operation 2 (delete " + b + ") overlap", "line 2"}},
		{"overlap: ranges", "", []Op{
			{Op: "delete_range", Start: c, End: d},
			{Op: "replace_range", Start: a, End: c, Content: s("x")},
		}, []string{"operation 2 (replace_range " + a + ".." + c + ") and operation 1 (delete_range " + c + ".." + d + ") overlap"}},
		{"overlap: insert inside a range", "", []Op{
			{Op: "delete_range", Start: a, End: c},
			{Op: "insert_after", Anchor: b, Content: s("x")},
		}, []string{"overlap", "insert point is inside"}},
		{"no change", "", []Op{{Op: "replace", Anchor: b, Content: s("b")}}, []string{"no change"}},
		{"one stale op: nothing applies", "", []Op{
			{Op: "replace", Anchor: a, Content: s("A")},
			{Op: "delete", Anchor: "3:" + otherTag(Tag("c"))},
		}, []string{"operation 2 (delete 3:" + otherTag(Tag("c")) + "): anchor", "is stale"}},
		{"wrong file_hash", strings.Repeat("0", 64), []Op{{Op: "replace", Anchor: c, Content: s("C")}},
			[]string{"file_hash does not match", "Current lines 1-4:", "file_hash: " + FileHash([]byte(abc))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := []byte(abc)
			res, err := EditTagged(content, tt.hash, tt.ops, [][]string{LineTexts(content)})
			if res != nil {
				t.Errorf("got a result for a refused call")
			}
			mustFail(t, err, tt.errs...)
			if string(content) != abc {
				t.Errorf("the input was modified")
			}
		})
	}
}

// otherTag is a tag different from tag.
func otherTag(tag string) string {
	if tag == "00" {
		return "01"
	}
	return "00"
}

func TestEditTaggedFileHash(t *testing.T) {
	content := []byte("a\nb\n")
	ops := []Op{{Op: "replace", Anchor: anchorOf("a\nb\n", 1), Content: s("A")}}
	for _, hash := range []string{FileHash(content), " file_hash: " + FileHash(content) + "\n", strings.ToUpper(FileHash(content))} {
		if _, err := EditTagged(content, hash, ops, nil); err != nil {
			t.Errorf("file_hash %q refused: %v", hash, err)
		}
	}
}

func TestEditTaggedBinary(t *testing.T) {
	_, err := EditTagged([]byte("a\x00"), "", []Op{{Op: "delete", Anchor: "1:00"}}, nil)
	mustFail(t, err, "binary")
}

func TestEditTaggedHugeLine(t *testing.T) {
	huge := strings.Repeat("y", 10<<20)
	content := []byte("a\n" + huge + "\nb\n")
	res, err := EditTagged(content, "", []Op{{Op: "replace", Anchor: anchorOf("a\n", 1), Content: s("A")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte("A\n" + huge + "\nb\n"); !bytes.Equal(res.Content, want) {
		t.Errorf("huge line not kept")
	}
}

// BenchmarkReadTagged10000Lines is read_text_file's work on a 10,000-line file: the
// lines, their tags, the hash and the answer written as JSON.
func BenchmarkReadTagged10000Lines(b *testing.B) {
	content := []byte(numbered(10000, "\n", nil))
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		r, err := NewReading(content)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.AppendJSON(nil)
	}
}

func BenchmarkEditTagged10000Lines(b *testing.B) {
	text := numbered(10000, "\n", nil)
	content := []byte(text)
	views := [][]string{LineTexts(content)}
	ops := []Op{{Op: "replace", Anchor: anchorOf(text, 5000), Content: s("changed")}}
	for b.Loop() {
		if _, err := EditTagged(content, FileHash(content), ops, views); err != nil {
			b.Fatal(err)
		}
	}
}

// A Reading written as JSON reads back as its String, as encoding/json writes it; Len
// is String's length, for any content and range.
func FuzzReading(f *testing.F) {
	for _, seed := range []string{"", "a\n", "a\nb", "\xef\xbb\xbfx\r\ny\r\n", "tab\there \"q\" \\ é\n\x01\n", "bad \xff utf8\n", "\n\n\n"} {
		f.Add([]byte(seed), 0, 0)
		f.Add([]byte(seed), 2, 3)
	}
	f.Fuzz(func(t *testing.T, content []byte, start, end int) {
		r, err := NewReading(content)
		if err != nil {
			return
		}
		if want := parseDocument(content).texts(); !slices.Equal(r.Texts, want) {
			t.Fatalf("Texts %q, want the document's %q", r.Texts, want)
		}
		if err := r.Select(start, end); err != nil {
			return
		}
		text := r.String()
		if r.Len() != len(text) {
			t.Fatalf("Len %d, String has %d bytes", r.Len(), len(text))
		}
		// The same string as encoding/json's (which also escapes <, > and &, and turns
		// invalid UTF-8 into U+FFFD), read back.
		escaped, _ := json.Marshal(text)
		var want, got string
		if err := json.Unmarshal(escaped, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(`"`+string(r.AppendJSON(nil))+`"`), &got); err != nil || got != want {
			t.Fatalf("AppendJSON reads back as %q (%v), want %q", got, err, want)
		}
		if old, err := readTagged(content, start, end); err != nil || old != text {
			t.Fatalf("ReadTagged = %q, %v; want %q", old, err, text)
		}
	})
}

// Tag trims as strings.TrimRightFunc(line, unicode.IsSpace) does before hashing.
func FuzzTag(f *testing.F) {
	for _, seed := range []string{"", "a", "a \t\r\n\v\f", "x\u00a0", "x\u0085", "x\u2003 ", "\xff ", " \u3000", "ab x xabc \tx x\u3000xlongest line of allxy"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		trimmed := strings.TrimRightFunc(line, unicode.IsSpace)
		hash := uint32(2166136261)
		for i := 0; i < len(trimmed); i++ {
			hash ^= uint32(trimmed[i])
			hash *= 16777619
		}
		if got, want := Tag(line), fmt.Sprintf("%02x", byte(hash)); got != want {
			t.Fatalf("Tag(%q) = %s, want %s", line, got, want)
		}
		// Lines tagged four at a time get the tags they get alone.
		texts := strings.Split(line, "x")
		for i, tag := range tagBytes(texts) {
			if tag != tagByte(texts[i]) {
				t.Fatalf("tagBytes(%q)[%d] = %02x, want %02x", texts, i, tag, tagByte(texts[i]))
			}
		}
	})
}
