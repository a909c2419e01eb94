package edit

// Exact-string edits (edit_file).

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
)

// ReplaceString performs edit_file: it replaces oldString in content with newString and
// returns the new content and the number of replacements.
//
//   - oldString must occur byte for byte. One that is not found as is, is looked for
//     again with its line breaks in the file's dominant line ending, so LF-written
//     edits to CRLF files work.
//   - Line breaks in newString are written in the file's dominant line ending.
//   - Not found is an error (it mentions a match that differs only in whitespace, but
//     never applies it). Found more than once without replaceAll is an error with the
//     count and the lines. An empty oldString, or oldString == newString, is an error.
//
// It only scans content; it does not split it into lines, so a one-line edit in a
// large file costs about one pass over its bytes. The caller renders a dry run by
// diffing content against the result.
func ReplaceString(content []byte, oldString, newString string, replaceAll bool) ([]byte, int, error) {
	return ReplaceStringInto(nil, content, oldString, newString, replaceAll)
}

// ReplaceStringInto is ReplaceString building the new content in dst's memory when
// it has room (dst must not overlap content), so that a caller editing a big file
// again and again can reuse the memory of a content it no longer needs.
func ReplaceStringInto(dst, content []byte, oldString, newString string, replaceAll bool) ([]byte, int, error) {
	if err := CheckText(content); err != nil {
		return nil, 0, err
	}
	switch {
	case oldString == "":
		return nil, 0, errorf("old_string is empty; to give a file new content use write_file " +
			"(or create_file for a new file)")
	case oldString == newString:
		return nil, 0, errorf("no change: old_string and new_string are the same")
	}
	limit := 2 // enough to tell a unique match from an ambiguous one
	if replaceAll {
		limit = -1
	}
	old, at := findForm(content, oldString, limit)
	switch {
	case len(at) == 0:
		return nil, 0, notFound(content, oldString)
	case len(at) > 1 && !replaceAll:
		return nil, 0, errorf("old_string appears %d times in the file (lines %s); pass "+
			"replace_all to replace every occurrence, or add context to make it unique. "+
			"Nothing was changed.", bytes.Count(content, old), joinLineNumbers(matchLines(content, old)))
	}
	replacement := []byte(newString)
	if strings.Contains(newString, "\n") {
		replacement = []byte(withEOL(newString, dominantEOLOf(content)))
	}
	return replaceAt(dst, content, at, len(old), replacement), len(at), nil
}

// findForm returns the form of oldString that occurs in content (as given, or with the
// file's dominant line ending) and where it occurs (at most limit places; -1 for all).
func findForm(content []byte, oldString string, limit int) ([]byte, []int) {
	old := []byte(oldString)
	if at := indexAll(content, old, limit); len(at) > 0 || !strings.Contains(oldString, "\n") {
		return old, at
	}
	adapted := []byte(withEOL(oldString, dominantEOLOf(content)))
	if bytes.Equal(adapted, old) {
		return old, nil
	}
	return adapted, indexAll(content, adapted, limit)
}

// indexAll returns the offsets of the non-overlapping occurrences of sep in s, at most
// limit of them (-1 for all), in one pass.
func indexAll(s, sep []byte, limit int) []int {
	var at []int
	for from := 0; limit < 0 || len(at) < limit; {
		i := bytes.Index(s[from:], sep)
		if i < 0 {
			break
		}
		at = append(at, from+i)
		from += i + len(sep)
	}
	return at
}

// replaceAt builds s with the oldLen bytes at each offset in at replaced by new, in
// dst's memory when it has room. New memory has room for the content to grow by a
// little: it may be reused for a later content, often a few bytes longer.
func replaceAt(dst, s []byte, at []int, oldLen int, new []byte) []byte {
	out := dst[:0]
	if n := len(s) + len(at)*(len(new)-oldLen); cap(out) < n {
		out = make([]byte, 0, n+n/256)
	}
	prev := 0
	for _, i := range at {
		out = append(out, s[prev:i]...)
		out = append(out, new...)
		prev = i + oldLen
	}
	return append(out, s[prev:]...)
}

// withEOL rewrites every line break in s ("\n" or "\r\n") as eol.
func withEOL(s, eol string) string {
	s = toLF(s)
	if eol == "\n" {
		return s
	}
	return strings.ReplaceAll(s, "\n", eol)
}

// matchLines lists the 1-based lines where each occurrence of old starts.
func matchLines(content, old []byte) []int {
	var lines []int
	line, scanned := 1, 0
	for {
		i := bytes.Index(content[scanned:], old)
		if i < 0 {
			return lines
		}
		line += bytes.Count(content[scanned:scanned+i], []byte("\n"))
		lines = append(lines, line)
		line += bytes.Count(old, []byte("\n"))
		scanned += i + len(old)
	}
}

// notFound explains a missing old_string, pointing at a match that differs only in
// whitespace when there is one.
func notFound(content []byte, oldString string) error {
	if line := whitespaceMatch(LineTexts(content), contentLines(oldString)); line > 0 {
		return errorf("old_string was not found in the file, but it was found with different "+
			"whitespace at line %d (indentation, spaces or tabs differ); copy the file's exact "+
			"text into old_string. Nothing was changed.", line)
	}
	return errorf("old_string was not found in the file; read the file again and copy the " +
		"text exactly, including whitespace and line breaks. Nothing was changed.")
}

// whitespaceMatch finds the first 1-based line where target (line texts) matches the
// file's lines when all white space is ignored, the first target line matching the end
// of a file line and the last matching the start of one. It returns 0 when there is no
// such match or the target is only white space.
func whitespaceMatch(fileLines, target []string) int {
	want := make([]string, len(target))
	blank := true
	for i, t := range target {
		want[i] = stripSpace(t)
		blank = blank && want[i] == ""
	}
	if blank {
		return 0
	}
	have := make([]string, len(fileLines))
	for i, l := range fileLines {
		have[i] = stripSpace(l)
	}
	for i := 0; i+len(want) <= len(have); i++ {
		if matchesStripped(have[i:i+len(want)], want) {
			return i + 1
		}
	}
	return 0
}

// matchesStripped compares whitespace-free lines as whitespaceMatch describes.
func matchesStripped(have, want []string) bool {
	last := len(want) - 1
	if last == 0 {
		return strings.Contains(have[0], want[0])
	}
	if !strings.HasSuffix(have[0], want[0]) || !strings.HasPrefix(have[last], want[last]) {
		return false
	}
	for i := 1; i < last; i++ {
		if have[i] != want[i] {
			return false
		}
	}
	return true
}

// stripSpace removes all white space from s.
func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// ReplaceMessage is edit_file's success text.
func ReplaceMessage(name string, count int) string {
	return fmt.Sprintf("Successfully replaced %d occurrence(s) in %s", count, name)
}
