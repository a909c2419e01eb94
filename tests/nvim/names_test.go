//go:build unix

package nvimtest

import (
	"strings"
	"testing"
)

// The review list shows any name, a newline or escape sequence in it included: the
// row stays one line, with the control characters written as escapes, and the list
// does not stop at "loading".
func TestReviewListShowsAnyName(t *testing.T) {
	eachStarted(t, nil, func(t *testing.T, s *session) {
		names := []string{"two\nrows.txt", "title\x1b]0;owned\x07.txt"}
		var ids []string
		for _, name := range names {
			ids = append(ids, s.recordEdit("conv_1_names", s.writeFile(name, "a\n"), "", "a\n"))
		}
		s.cmd("McpDiffStatus")
		s.waitListLine(ids[0][:8], `two\nrows.txt`)
		s.waitListLine(ids[1][:8], `title\x1b]0;owned\a.txt`)
		for _, line := range s.listLines() {
			if strings.ContainsAny(line, "\x1b\x07") {
				t.Fatalf("a row holds a raw control character: %q", line)
			}
		}
	})
}
