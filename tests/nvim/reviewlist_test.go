//go:build unix

package nvimtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The review list of a long history: what is left to review, and where.

// twelvePrompts records twelve conversations, one edit of a.txt each (line n of
// a numbered file), and accepts all but the third and the last. It returns the
// conversations and their edits' ids.
func (s *session) twelvePrompts() (convs, ids []string) {
	s.t.Helper()
	content := numberedLines(40)
	path := s.writeFile("a.txt", content)
	for n := 1; n <= 12; n++ {
		conv := fmt.Sprintf("conv_%02d_aa", n)
		next := replaceLines(content, map[int]string{3 * n: conv})
		ids = append(ids, s.recordEdit(conv, path, content, next))
		convs = append(convs, conv)
		content = next
	}
	args := []string{"accept"}
	for n, id := range ids {
		if n != 2 && n != 11 {
			args = append(args, id)
		}
	}
	if out, code := s.cli(args...); code != 0 {
		s.t.Fatalf("accept: %s", out)
	}
	return convs, ids
}

// listConversations is the conversations of the list's lines, in order.
func listConversations(lines []string) []string {
	var out []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Conversation" {
			out = append(out, f[1])
		}
	}
	return out
}

// After a dozen prompts the pending ones come first, newest first, and the list
// opens with the cursor on the first pending edit; p hides the resolved ones.
func TestReviewListPendingFirst(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		s.cmd("set lines=30 columns=120")
		convs, ids := s.twelvePrompts()
		s.cmd("McpDiffStatus")
		edit := s.waitListLine(ids[11][:8], "pending")
		want := []string{convs[11], convs[2], convs[10], convs[9], convs[8], convs[7], convs[6], convs[5], convs[4], convs[3], convs[1], convs[0]}
		if got := listConversations(s.listLines()); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("conversations in the order %q, want %q", got, want)
		}
		if !testenv.Within(waitLimit, func() bool { return s.cursorLine() == edit }) {
			t.Fatalf("cursor on %d, want %d:\n%s", s.cursorLine(), edit, strings.Join(s.listLines(), "\n"))
		}

		// p: only the two conversations with pending edits, and a line that says so.
		s.input("p")
		s.waitListLine("(10 resolved conversations hidden: p shows them)")
		s.waitListLine("Keys:", "p show resolved")
		if got := listConversations(s.listLines()); strings.Join(got, " ") != convs[11]+" "+convs[2] {
			t.Fatalf("with resolved conversations hidden: %q", got)
		}
		if got := s.listLines()[s.cursorLine()-1]; !strings.Contains(got, ids[11][:8]) {
			t.Fatalf("the cursor left its edit: %q", got)
		}
		// A refresh keeps them hidden; accepting the last pending edit of a
		// conversation hides it, and the cursor goes to the next pending edit.
		if out, code := s.cli("accept", ids[11]); code != 0 {
			t.Fatalf("accept: %s", out)
		}
		s.waitListLine("(11 resolved conversations hidden: p shows them)")
		eventually(t, "the cursor on the edit left pending", func() bool {
			return strings.Contains(s.listLines()[s.cursorLine()-1], ids[2][:8])
		})
		s.input("p")
		s.waitListLine("Keys:", "p hide resolved")
		if got := listConversations(s.listLines()); len(got) != 12 || got[0] != convs[2] {
			t.Fatalf("all shown again: %q", got)
		}
	})
}

// <CR> and = on a conversation's line show the diff of its edits, and = on the last
// rows scrolls what it shows into view.
func TestReviewListConversationDiffs(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		s.cmd("set lines=30 columns=120")
		convs, ids := s.twelvePrompts()
		s.cmd("McpDiffStatus")
		s.waitListLine(ids[11][:8], "pending")

		// = on the last conversation's line, the last row of the list.
		head := s.waitListLine("Conversation " + convs[0])
		if head != len(s.listLines())-1 {
			t.Fatalf("conversation %s is on line %d of %d", convs[0], head, len(s.listLines()))
		}
		s.cursorTo(head)
		s.input("=")
		s.waitListLine("+" + convs[0])
		s.expectScreenRun("Conversation "+convs[0], "edit "+ids[0])
		rows := s.screen()
		if !strings.Contains(strings.Join(rows, "\n"), "+"+convs[0]) {
			t.Fatalf("the conversation's diff is below the window:\n%s", strings.Join(rows, "\n"))
		}
		if s.cursorLine() != head {
			t.Fatalf("the cursor moved to line %d, want the conversation's line %d", s.cursorLine(), head)
		}
		s.input("=")
		eventually(t, "the diff hidden again", func() bool {
			return !strings.Contains(strings.Join(s.listLines(), "\n"), "+"+convs[0])
		})

		// <CR> on a conversation's line: its diff in a split.
		s.cursorTo(s.waitListLine("Conversation " + convs[2]))
		s.input("<CR>")
		eventually(t, "the conversation's diff in a split", func() bool {
			return strings.HasSuffix(s.currentBufName(), "mcpdiff://show/"+convs[2])
		})
		if text := strings.Join(luaValue[[]string](s, `return vim.api.nvim_buf_get_lines(0, 0, -1, false)`), "\n"); !strings.Contains(text, "+"+convs[2]) || !strings.Contains(text, ids[2]) {
			t.Fatalf("the split shows:\n%s", text)
		}
		for _, m := range s.messages() {
			if strings.Contains(m.Msg, "no edit on this line") {
				t.Fatalf("message %q", m.Msg)
			}
		}
	})
}

// q closes the review list and the diff split it opens also when it is the last
// window (after :only): the window shows the file from before instead of failing
// with E444.
func TestQClosesTheLastWindow(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		path := s.writeFile("a.txt", "a\n")
		id := s.recordEdit("conv_1_qq", path, "a\n", "b\n")
		s.cmd("edit " + path)
		s.cmd("McpDiffStatus")
		s.cursorTo(s.waitListLine(id[:8]))
		s.input("<CR>")
		eventually(t, "the edit's diff in a split", func() bool {
			return strings.HasSuffix(s.currentBufName(), "mcpdiff://show/"+id)
		})
		for _, name := range []string{"the diff split", "the review list"} {
			if name == "the review list" {
				s.cmd("McpDiffStatus")
			}
			s.cmd("only")
			s.input("q")
			eventually(t, name+" to close", func() bool {
				return s.currentBufName() == path
			})
			if wins := luaValue[int](s, `return #vim.api.nvim_list_wins()`); wins != 1 {
				t.Fatalf("after q in %s: %d windows", name, wins)
			}
		}
	})
}
