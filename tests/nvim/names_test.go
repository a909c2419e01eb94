//go:build unix

package nvimtest

import (
	"path/filepath"
	"strings"
	"testing"
)

// The review list shows any name, a newline or escape sequence in it included: the
// row stays one line, with the control characters written as escapes, and the list
// does not stop at "loading".
func TestReviewListShowsAnyName(t *testing.T) {
	t.Parallel()
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
		// `o` opens the file of the row, under its own name: an Ex command cannot
		// hold a newline (":edit two\<NL>rows.txt" opened "tworows.txt", empty).
		for _, name := range names {
			s.cmd("McpDiffStatus")
			s.cursorTo(s.waitListLine(termsafeName(name)))
			s.input("o")
			want := filepath.Join(s.ws, name)
			eventually(t, "o to open "+want, func() bool {
				return luaValue[string](s, `return vim.api.nvim_buf_get_name(0)`) == want
			})
			if got := luaValue[[]string](s, `return vim.api.nvim_buf_get_lines(0, 0, -1, false)`); len(got) != 1 || got[0] != "a" {
				t.Fatalf("o opened %q holding %q", want, got)
			}
		}
	})
}

// termsafeName is a name as the review list shows it.
func termsafeName(name string) string {
	return strings.NewReplacer("\n", `\n`, "\x1b", `\x1b`, "\x07", `\a`).Replace(name)
}

// openDiff of a file whose name holds a newline shows that file beside the proposal,
// not another: the rest of the name once ran as an Ex command of its own.
func TestOpenDiffOfANameWithANewline(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("two\nrows.txt", "old\n")
		tab := tabName("two\nrows.txt", 1)
		answer := c.OpenDiff(path, "new\n", tab)
		s.waitViews(1)
		shown := luaValue[[]string](s, `local out = {}
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local b = vim.api.nvim_win_get_buf(w)
  if vim.api.nvim_buf_get_name(b) == ... then
    vim.list_extend(out, vim.api.nvim_buf_get_lines(b, 0, -1, false))
  end
end
return out`, path)
		if strings.Join(shown, "|") != "old" {
			t.Fatalf("the window of %q shows %q", path, shown)
		}
		s.cmd("McpDiffReject")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
	})
}
