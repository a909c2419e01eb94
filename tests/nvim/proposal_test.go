//go:build unix

package nvimtest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The proposal of these tests changes line 2, removes line 4 and adds a last line.
const (
	hunkOriginal = "one\ntwo\nthree\nfour\nfive\nsix\n"
	hunkProposal = "one\nTWO\nthree\nfive\nsix\nseven\n"
)

var layouts = []string{"vertical", "inline"}

// proposalBuf is the buffer of the proposal shown under tab.
func (s *session) proposalBuf(tab string) int {
	s.t.Helper()
	var buf int
	s.lua(`
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.b[b].mcpdiff_tab == ... then return b end
end
return 0`, &buf, tab)
	if buf == 0 {
		s.t.Fatalf("no proposal buffer for %s", tab)
	}
	return buf
}

func (s *session) bufLines(buf int) []string {
	s.t.Helper()
	return luaValue[[]string](s, `return vim.api.nvim_buf_get_lines(..., 0, -1, true)`, buf)
}

// hunkMarks describes the marks mcpdiff drew over a proposal, one string per mark:
// "ROW above|below LINE|LINE" for removed lines, "ROW hl GROUP" or "ROW-LAST hl
// GROUP" for highlighted lines, "ROW TEXT" for a marker.
func (s *session) hunkMarks(buf int) []string {
	s.t.Helper()
	return luaValue[[]string](s, `
local ns = vim.api.nvim_create_namespace("mcpdiff_hunks")
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(..., ns, 0, -1, { details = true })) do
  local d, desc = m[4], nil
  if d.virt_lines then
    local texts = {}
    for _, l in ipairs(d.virt_lines) do table.insert(texts, l[1][1]) end
    desc = (d.virt_lines_above and "above " or "below ") .. table.concat(texts, "|")
  elseif d.virt_text then
    desc = vim.trim(d.virt_text[1][1])
  else
    desc = "hl " .. tostring(d.hl_group)
  end
  local row = tostring(m[2] + 1)
  if d.end_row and d.end_row > m[2] + 1 then row = row .. "-" .. d.end_row end
  table.insert(out, { row = row, desc = desc })
end
table.sort(out, function(a, b)
  local ra, rb = tonumber(a.row:match("^%d+")), tonumber(b.row:match("^%d+"))
  if ra ~= rb then return ra < rb end
  return a.desc < b.desc
end)
for i, m in ipairs(out) do out[i] = m.row .. " " .. m.desc end
return out`, buf)
}

// wantMarks waits until the proposal's marks are want.
func (s *session) wantMarks(buf int, want ...string) {
	s.t.Helper()
	if want == nil {
		want = []string{}
	}
	var got []string
	if !testenv.Within(waitLimit, func() bool {
		got = s.hunkMarks(buf)
		if got == nil {
			got = []string{}
		}
		return reflect.DeepEqual(got, want)
	}) {
		s.t.Fatalf("hunk marks %q, want %q", got, want)
	}
}

// screen returns the rows of the screen, trailing blanks removed.
func (s *session) screen() []string {
	s.t.Helper()
	return luaValue[[]string](s, `
vim.cmd("redraw!")
local rows = {}
for r = 1, vim.o.lines do
  local chars = {}
  for c = 1, vim.o.columns do table.insert(chars, vim.fn.screenstring(r, c)) end
  rows[r] = (table.concat(chars):gsub("%s+$", ""))
end
return rows`)
}

// expectScreenRun fails unless the screen shows want on consecutive rows (each row
// starting with its item).
func (s *session) expectScreenRun(want ...string) {
	s.t.Helper()
	rows := s.screen()
	for i := range rows {
		ok := i+len(want) <= len(rows)
		for j := 0; ok && j < len(want); j++ {
			ok = strings.HasPrefix(strings.TrimSpace(rows[i+j]), want[j])
		}
		if ok {
			return
		}
	}
	s.t.Fatalf("the screen does not show %q on consecutive rows:\n%s", want, strings.Join(rows, "\n"))
}

func (s *session) cursorLine() int {
	s.t.Helper()
	return luaValue[int](s, `return vim.api.nvim_win_get_cursor(0)[1]`)
}

// lastMessage waits for a new notification after the first n and returns it.
func (s *session) lastMessage(n int) message {
	s.t.Helper()
	var msgs []message
	eventually(s.t, "a message from the plugin", func() bool {
		msgs = s.messages()
		return len(msgs) > n
	})
	return msgs[len(msgs)-1]
}

// closeTabs closes a diff as Claude Code does after an answer.
func closeTabs(t *testing.T, c *ideClient, tab string) {
	t.Helper()
	for range 2 {
		expectTexts(t, "close_tab", c.Texts(c.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab"), "TAB_CLOSED")
	}
}

func TestHunkDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		decide  func(s *session)
		lines   []string // the proposal buffer's lines after the decision
		message string   // the notification it gives
		saved   string   // FILE_SAVED's text after :w
	}{
		{"reject a changed line", func(s *session) { s.cmd("2McpDiffReject") },
			[]string{"one", "two", "three", "five", "six", "seven"},
			"mcpdiff: took back 1 hunk (line 2); :w accepts the 2 hunks left",
			"one\ntwo\nthree\nfive\nsix\nseven\n"},
		{"reject removed lines at the line below them", func(s *session) { s.cmd("4McpDiffReject") },
			[]string{"one", "TWO", "three", "four", "five", "six", "seven"},
			"mcpdiff: took back 1 hunk (line 4); :w accepts the 2 hunks left",
			"one\nTWO\nthree\nfour\nfive\nsix\nseven\n"},
		{"reject an added last line", func(s *session) { s.cmd("6McpDiffReject") },
			[]string{"one", "TWO", "three", "five", "six"},
			"mcpdiff: took back 1 hunk (line 6); :w accepts the 2 hunks left",
			"one\nTWO\nthree\nfive\nsix\n"},
		{"reject a range over two hunks", func(s *session) { s.cmd("2,4McpDiffReject") },
			[]string{"one", "two", "three", "four", "five", "six", "seven"},
			"mcpdiff: took back 2 hunks (lines 2-4); :w accepts the 1 hunk left",
			"one\ntwo\nthree\nfour\nfive\nsix\nseven\n"},
		{"reject everything", func(s *session) { s.cmd("%McpDiffReject") },
			[]string{"one", "two", "three", "four", "five", "six"},
			"mcpdiff: took back 3 hunks (lines 1-6): the proposal now equals the file; :w accepts it unchanged, :q rejects",
			hunkOriginal},
		{"reject keymap", func(s *session) { s.cmd("2"); s.input(`\dr`) },
			[]string{"one", "two", "three", "five", "six", "seven"},
			"mcpdiff: took back 1 hunk (line 2); :w accepts the 2 hunks left",
			"one\ntwo\nthree\nfive\nsix\nseven\n"},
		{"reject keymap on a visual selection", func(s *session) { s.cmd("3"); s.input(`Vj\dr`) },
			[]string{"one", "TWO", "three", "four", "five", "six", "seven"},
			"mcpdiff: took back 1 hunk (lines 3-4); :w accepts the 2 hunks left",
			"one\nTWO\nthree\nfour\nfive\nsix\nseven\n"},
		{"a range without a change", func(s *session) { s.cmd("1McpDiffReject") },
			[]string{"one", "TWO", "three", "five", "six", "seven"},
			"mcpdiff: line 1: no change of the proposal there, nothing to take back (3 hunks elsewhere)",
			hunkProposal},
		{"accept a hunk", func(s *session) { s.cmd("2McpDiffAccept") },
			[]string{"one", "TWO", "three", "five", "six", "seven"},
			"mcpdiff: kept 1 hunk (line 2); 2 hunks not decided yet",
			hunkProposal},
		{"accept keymap", func(s *session) { s.cmd("6"); s.input(`\dk`) },
			[]string{"one", "TWO", "three", "five", "six", "seven"},
			"mcpdiff: kept 1 hunk (line 6); 2 hunks not decided yet",
			hunkProposal},
		{"undo a reject", func(s *session) { s.cmd("2McpDiffReject"); s.cmd("undo") },
			[]string{"one", "TWO", "three", "five", "six", "seven"},
			"mcpdiff: took back 1 hunk (line 2); :w accepts the 2 hunks left",
			hunkProposal},
	}
	eachNvim(t, func(t *testing.T, nv string) {
		for _, layout := range layouts {
			t.Run(layout, func(t *testing.T) {
				s, c := connected(t, nv, options{"diff": map[string]any{"layout": layout}})
				for i, tt := range tests {
					subtest(t, s, c, tt.name, func(t *testing.T) {
						// A file of its own: the previous diff still waits for its file to be
						// written (as Claude Code would), and reloads its buffer when it is.
						name := "hunks" + itoa(i) + ".txt"
						path := s.writeFile(name, hunkOriginal)
						before := s.snapshot()
						tab := tabName(name, i)
						answer := c.OpenDiff(path, hunkProposal, tab)
						s.waitViews(1)
						buf := s.proposalBuf(tab)
						seen := len(s.messages())
						tt.decide(s)
						if got := s.lastMessage(seen); got.Msg != tt.message {
							t.Fatalf("message %q, want %q", got.Msg, tt.message)
						}
						eventually(t, "the proposal's lines", func() bool { return reflect.DeepEqual(s.bufLines(buf), tt.lines) })
						if v := s.views(); len(v) != 1 || v[0].Status != "pending" {
							t.Fatalf("after a hunk decision the view must stay open and pending: %+v", v)
						}
						s.cmd("w")
						expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", tt.saved)
						closeTabs(t, c, tab)
						s.expectNoLeaks(before)
						if got := testenv.ReadFile(t, path); got != hunkOriginal {
							t.Fatalf("the IDE wrote the file: %q", got)
						}
					})
				}
			})
		}
	})
}

// A kept hunk is marked in both layouts; in the inline layout it is no longer drawn
// as a change.
func TestKeptHunkMarks(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		for _, layout := range layouts {
			t.Run(layout, func(t *testing.T) {
				s, c := connected(t, nv, options{"diff": map[string]any{"layout": layout}})
				path := s.writeFile("hunks.txt", hunkOriginal)
				tab := tabName("hunks.txt", 1)
				answer := c.OpenDiff(path, hunkProposal, tab)
				s.waitViews(1)
				buf := s.proposalBuf(tab)
				s.cmd("2McpDiffAccept")
				s.cmd("4McpDiffAccept")
				if layout == "inline" {
					s.wantMarks(buf, "2 ✓ kept", "4 ✓ kept: 1 line removed here", "6 hl McpDiffInlineAdd")
				} else {
					s.wantMarks(buf, "2 ✓ kept", "4 ✓ kept: 1 line removed here")
				}
				// Editing a kept hunk makes it a new change, to be decided again.
				s.lua(`vim.api.nvim_buf_set_lines(..., 1, 2, true, { "TWO!" })`, nil, buf)
				if layout == "inline" {
					s.wantMarks(buf, "2 above two", "2 hl McpDiffInlineChange", "4 ✓ kept: 1 line removed here", "6 hl McpDiffInlineAdd")
				} else {
					s.wantMarks(buf, "4 ✓ kept: 1 line removed here")
				}
				s.cmd("w")
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "one\nTWO!\nthree\nfive\nsix\nseven\n")
				seen := len(s.messages())
				s.cmd("2McpDiffReject")
				if got := s.lastMessage(seen); got.Msg != "mcpdiff: this proposal is already accepted; its hunks can no longer change" {
					t.Fatalf("a hunk decision after the answer said %q", got.Msg)
				}
				closeTabs(t, c, tab)
			})
		}
	})
}

// In the side-by-side layout a range in the original's window means its lines.
func TestHunkRejectFromTheOriginal(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hunks.txt", hunkOriginal)
		tab := tabName("hunks.txt", 1)
		answer := c.OpenDiff(path, hunkProposal, tab)
		s.waitViews(1)
		buf := s.proposalBuf(tab)
		s.cmd("wincmd h")
		if s.currentBufName() != path {
			t.Fatalf("wincmd h went to %q, want the original", s.currentBufName())
		}
		s.cmd("4McpDiffReject") // "four", which the proposal removes
		if got, want := s.bufLines(buf), []string{"one", "TWO", "three", "four", "five", "six", "seven"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("proposal = %q, want %q", got, want)
		}
		if got := s.messages(); got[len(got)-1].Msg != "mcpdiff: took back 1 hunk (line 4 of the original); :w accepts the 2 hunks left" {
			t.Fatalf("message %q", got[len(got)-1].Msg)
		}
		if got := s.bufLines(s.currentBuf()); !reflect.DeepEqual(got, strings.Split(strings.TrimSuffix(hunkOriginal, "\n"), "\n")) {
			t.Fatalf("the original's buffer changed: %q", got)
		}
		s.cmd("McpDiffAccept")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "one\nTWO\nthree\nfour\nfive\nsix\nseven\n")
		closeTabs(t, c, tab)
	})
}

func (s *session) currentBuf() int {
	s.t.Helper()
	return luaValue[int](s, `return vim.api.nvim_get_current_buf()`)
}

// What is left after hunk decisions is answered byte for byte: CRLF proposals stay
// CRLF, LF proposals of a CRLF file stay LF, and taking back every line of a new
// file leaves the empty text (not one empty line).
func TestHunkRejectExactText(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		for _, layout := range layouts {
			t.Run(layout, func(t *testing.T) {
				s, c := connected(t, nv, options{"diff": map[string]any{"layout": layout}})
				path := s.writeFile("crlf.txt", "a\r\nb\r\nc\r\n")
				tab := tabName("crlf.txt", 1)
				answer := c.OpenDiff(path, "a\r\nB\r\nc\r\nd\r\n", tab)
				s.waitViews(1)
				s.cmd("2McpDiffReject")
				s.cmd("w")
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "a\r\nb\r\nc\r\nd\r\n")
				closeTabs(t, c, tab)

				// Claude Code's Write sends LF for a CRLF file: the line endings are not a
				// change, and the answer keeps the proposal's.
				path = s.writeFile("lf.txt", "a\r\nb\r\nc\r\n")
				tab = tabName("lf.txt", 3)
				answer = c.OpenDiff(path, "a\nB\nc\n", tab)
				s.waitViews(1)
				if layout == "inline" {
					s.wantMarks(s.proposalBuf(tab), "2 above b", "2 hl McpDiffInlineChange")
				}
				s.cmd("%McpDiffReject")
				s.cmd("w")
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "a\nb\nc\n")
				closeTabs(t, c, tab)

				newPath := s.ws + "/sub/new.txt"
				tab = tabName("new.txt", 2)
				answer = c.OpenDiff(newPath, "x\ny\n", tab)
				s.waitViews(1)
				buf := s.proposalBuf(tab)
				if layout == "inline" {
					s.wantMarks(buf, "1-2 hl McpDiffInlineAdd")
				}
				s.cmd("%McpDiffReject")
				s.wantMarks(buf)
				s.cmd("w")
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "")
				closeTabs(t, c, tab)
			})
		}
	})
}

func inlineSession(t *testing.T, nv string) (*session, *ideClient) {
	t.Helper()
	return connected(t, nv, options{"diff": map[string]any{"layout": "inline"}})
}

type winState struct {
	Win  int    `msgpack:"win"`
	Wins int    `msgpack:"wins"`
	Buf  string `msgpack:"buf"`
	Diff bool   `msgpack:"diff"`
	Line int    `msgpack:"line"`
}

func (s *session) winState() winState {
	s.t.Helper()
	return luaValue[winState](s, `return {
  win = vim.api.nvim_get_current_win(),
  wins = #vim.api.nvim_list_wins(),
  buf = vim.api.nvim_buf_get_name(0),
  diff = vim.wo.diff,
  line = vim.api.nvim_win_get_cursor(0)[1],
}`)
}

// The inline layout: the proposal in the user's own window, removed lines as
// virtual lines above where they were, added and changed lines highlighted.
func TestInlineLayout(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s, c := inlineSession(t, nv)
		path := s.writeFile("hunks.txt", hunkOriginal)
		s.cmd("edit " + path)
		s.cmd("5")
		start := s.winState()
		before := s.snapshot()
		tab := tabName("hunks.txt", 1)
		answer := c.OpenDiff(path, hunkProposal, tab)
		s.waitViews(1)
		buf := s.proposalBuf(tab)
		st := s.winState()
		if st.Win != start.Win || st.Wins != 1 || !strings.HasSuffix(st.Buf, tab+" (proposed)") || st.Diff || st.Line != 2 {
			t.Fatalf("inline view: %+v; want the proposal in the same single window, not in diff mode, on line 2", st)
		}
		s.wantMarks(buf, "2 above two", "2 hl McpDiffInlineChange", "4 above four", "6 hl McpDiffInlineAdd")
		s.expectScreenRun("one", "two", "TWO", "three", "four", "five", "six", "seven", "~")

		// ]c and [c move between hunks, as in diff mode.
		for _, step := range []struct {
			keys string
			line int
		}{{"]c", 4}, {"]c", 6}, {"]c", 6}, {"[c", 4}, {"2[c", 2}, {"2]c", 6}} {
			s.input(step.keys)
			eventually(t, step.keys+" to move the cursor", func() bool { return s.cursorLine() == step.line })
		}

		// The proposal stays editable; the marks follow the text.
		s.input("ggOzero<Esc>")
		s.wantMarks(buf, "1 hl McpDiffInlineAdd", "3 above two", "3 hl McpDiffInlineChange", "5 above four", "7 hl McpDiffInlineAdd")
		s.input("u")
		s.wantMarks(buf, "2 above two", "2 hl McpDiffInlineChange", "4 above four", "6 hl McpDiffInlineAdd")

		// A hunk decision redraws the marks.
		s.cmd("4")
		s.input(`\dr`)
		s.wantMarks(buf, "2 above two", "2 hl McpDiffInlineChange", "7 hl McpDiffInlineAdd")

		s.cmd("w")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "one\nTWO\nthree\nfour\nfive\nsix\nseven\n")
		closeTabs(t, c, tab)
		s.expectNoLeaks(before)
		if st := s.winState(); st != start {
			t.Fatalf("after the view: %+v, want the window as it was: %+v", st, start)
		}
	})
}

// Every way of answering works in the inline layout; :q gives the user's window
// back instead of closing it, even when it is the only window.
func TestInlineAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer func(s *session)
		saved  bool
	}{
		{":q", func(s *session) { s.cmd("q") }, false},
		{":q!", func(s *session) { s.cmd("q!") }, false},
		{":q typed", func(s *session) { s.input(":q<CR>") }, false},
		{"ZQ", func(s *session) { s.input("ZQ") }, false},
		{"reject command", func(s *session) { s.cmd("McpDiffReject") }, false},
		{"reject keymap", func(s *session) { s.input(`\dq`) }, false},
		{":bw!", func(s *session) { s.cmd("bw!") }, false},
		{":w", func(s *session) { s.cmd("w") }, true},
		{":wq", func(s *session) { s.cmd("wq") }, true},
		{"accept command", func(s *session) { s.cmd("McpDiffAccept") }, true},
		{"accept keymap", func(s *session) { s.input(`\da`) }, true},
	}
	eachNvim(t, func(t *testing.T, nv string) {
		s, c := inlineSession(t, nv)
		for i, tt := range tests {
			for _, split := range []bool{false, true} {
				if split && tt.name == ":bw!" {
					continue // :bwipeout closes the buffer's windows, as it always does
				}
				name := tt.name
				if split {
					name += " beside another window"
				}
				subtest(t, s, c, name, func(t *testing.T) {
					path := s.writeFile("hello.txt", "hello\nworld\n")
					other := s.writeFile("other.txt", "other\n")
					s.cmd("only")
					s.cmd("edit " + other)
					if split {
						s.cmd("vsplit")
						s.cmd("wincmd l")
						s.cmd("vertical resize 30")
					}
					s.cmd("edit " + path)
					s.cmd("2")
					var width int
					s.lua(`return vim.api.nvim_win_get_width(0)`, &width)
					start := s.winState()
					before := s.snapshot()
					tab := tabName("hello.txt", 10*i)
					answer := c.OpenDiff(path, "hello\nedited\n", tab)
					s.waitViews(1)
					tt.answer(s)
					if tt.saved {
						expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "hello\nedited\n")
						closeTabs(t, c, tab)
					} else {
						expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
					}
					s.expectNoLeaks(before)
					st := s.winState()
					st.Win = start.Win // :q puts a new window in the old one's place
					if st != start {
						t.Fatalf("after %s: %+v, want the window as it was: %+v", tt.name, st, start)
					}
					var now int
					s.lua(`return vim.api.nvim_win_get_width(0)`, &now)
					if now != width {
						t.Fatalf("the window is %d columns wide after %s, was %d", now, tt.name, width)
					}
				})
			}
		}
	})
}

// Removed lines above the first line are scrolled into view (as diff filler is),
// and the window's own 'winbar' comes back after the view.
func TestInlineTopAndWinbar(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s, c := inlineSession(t, nv)
		path := s.writeFile("top.txt", "gone\nkept\n")
		s.cmd("edit " + path)
		var winbar bool
		s.lua(`return vim.fn.has("nvim-0.8") == 1`, &winbar)
		if winbar {
			s.cmd("setlocal winbar=MINE")
		}
		tab := tabName("top.txt", 1)
		answer := c.OpenDiff(path, "kept\n", tab)
		s.waitViews(1)
		s.wantMarks(s.proposalBuf(tab), "1 above gone")
		rows := s.screen()
		first := 0
		if winbar {
			first = 1
			if !strings.Contains(rows[0], "mcpdiff: :w or \\da accept · :q or \\dq reject · \\dk keep hunk · \\dr undo hunk") {
				t.Fatalf("winbar row = %q, want the hint", rows[0])
			}
		}
		if rows[first] != "gone" || !strings.HasPrefix(rows[first+1], "kept") {
			t.Fatalf("screen:\n%s\nwant the removed line above the first", strings.Join(rows, "\n"))
		}
		s.cmd("q")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
		if winbar {
			var got string
			eventually(t, "the winbar to come back", func() bool {
				s.lua(`return vim.wo.winbar`, &got)
				return got == "MINE"
			})
		}
	})
}

// A typed :qa quits Neovim with an inline view open, as with any other buffer (the
// view's :q handling leaves it alone), and Claude Code gets DIFF_REJECTED.
func TestInlineQuitAll(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		for _, keys := range []string{":qa<CR>", ":qa!<CR>"} {
			t.Run(keys, func(t *testing.T) {
				s, c := inlineSession(t, nv)
				info, _ := s.bridge()
				path := s.writeFile("hello.txt", "hello\n")
				s.cmd("edit " + path)
				tab := tabName("hello.txt", 1)
				answer := c.OpenDiff(path, "edited\n", tab)
				s.waitViews(1)
				s.input(keys)
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
				eventually(t, "Neovim and the bridge to exit", func() bool {
					return !testenv.ProcessAlive(s.pid) && !testenv.ProcessAlive(info.JobPID)
				})
			})
		}
	})
}

// With only a terminal on screen the inline view makes a window of its own, and :q
// closes that one.
func TestInlineTerminalOnly(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s, c := inlineSession(t, nv)
		diffBesideTerminal(t, s, c, 1, func(tab string) {
			if st := s.winState(); st.Wins != 2 || !strings.HasSuffix(st.Buf, tab+" (proposed)") {
				t.Fatalf("inline view beside a terminal: %+v, want the proposal in a second window", st)
			}
		})
	})
}

// Above 20,000 lines the inline marks follow edits once typing pauses.
func TestInlineLargeProposal(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s, c := inlineSession(t, nv)
		var orig, prop strings.Builder
		for i := range 30_000 {
			line := "line " + itoa(i) + "\n"
			orig.WriteString(line)
			if i == 20_000 {
				line = "CHANGED\n"
			}
			prop.WriteString(line)
		}
		path := s.writeFile("large.txt", orig.String())
		tab := tabName("large.txt", 1)
		answer := c.OpenDiff(path, prop.String(), tab)
		s.waitViews(1)
		buf := s.proposalBuf(tab)
		s.wantMarks(buf, "20001 above line 20000", "20001 hl McpDiffInlineChange")
		if line := s.cursorLine(); line != 20001 {
			t.Fatalf("cursor on line %d, want the change on line 20001", line)
		}
		s.lua(`vim.api.nvim_buf_set_lines(..., 9, 10, true, { "mine" })`, nil, buf)
		s.wantMarks(buf, "10 above line 9", "10 hl McpDiffInlineChange", "20001 above line 20000", "20001 hl McpDiffInlineChange")
		s.cmd("20001McpDiffReject")
		s.wantMarks(buf, "10 above line 9", "10 hl McpDiffInlineChange")
		s.cmd("w")
		want := strings.Replace(orig.String(), "line 9\n", "mine\n", 1)
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", want)
		closeTabs(t, c, tab)
	})
}

// The highlight groups are linked with default: a colour scheme's (or the user's)
// definition stays.
func TestInlineHighlightGroups(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s, c := inlineSession(t, nv)
		s.cmd("highlight McpDiffInlineDelete ctermbg=1")
		path := s.writeFile("hello.txt", "hello\n")
		tab := tabName("hello.txt", 1)
		answer := c.OpenDiff(path, "edited\n", tab)
		s.waitViews(1)
		var groups map[string]string
		s.lua(`local out = {}
for _, g in ipairs({ "McpDiffInlineAdd", "McpDiffInlineChange", "McpDiffInlineDelete", "McpDiffHunkKept" }) do
  out[g] = vim.trim(vim.api.nvim_exec("highlight " .. g, true):gsub("^%S+%s+xxx%s+", ""))
end
return out`, &groups)
		want := map[string]string{
			"McpDiffInlineAdd":    "links to DiffAdd",
			"McpDiffInlineChange": "links to DiffChange",
			"McpDiffInlineDelete": "ctermbg=1",
			"McpDiffHunkKept":     "links to Comment",
		}
		if !reflect.DeepEqual(groups, want) {
			t.Fatalf("highlight groups %q, want %q", groups, want)
		}
		s.cmd("q")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
	})
}

// hint returns the key hint of the proposal's window and that window's width: its
// winbar (Neovim 0.8+) or its status line.
func (s *session) hint(buf int) (string, int) {
	s.t.Helper()
	var got struct {
		Text  string `msgpack:"text"`
		Width int    `msgpack:"width"`
	}
	s.lua(`
local buf = ...
local w = vim.fn.win_findbuf(buf)[1]
local bar = vim.fn.has("nvim-0.8") == 1 and "winbar" or "statusline"
local text = vim.wo[w][bar]:gsub("%%#%w+#", ""):gsub("%%%*", ""):gsub("%%%%", "%%")
return { text = vim.trim(text), width = vim.api.nvim_win_get_width(w) }`, &got, buf)
	return got.Text, got.Width
}

// The side by side view's key hint fits its window (down to 30 columns, where its
// shortest form, ":w accept · :q reject", still fits), and grows back
// to the whole sentence when the window is wide again.
func TestHintFitsNarrowWindows(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		s.cmd("set columns=200")
		path := s.writeFile("narrow.txt", "a\n")
		tab := tabName("narrow.txt", 1)
		c.OpenDiff(path, "b\n", tab)
		s.waitViews(1)
		buf := s.proposalBuf(tab)
		full := "mcpdiff: :w or \\da accept · :q or \\dq reject · \\dk keep hunk · \\dr undo hunk"
		if text, _ := s.hint(buf); text != full {
			t.Fatalf("hint at 200 columns = %q, want %q", text, full)
		}
		for _, columns := range []int{120, 100, 80, 60} {
			s.cmd("set columns=" + itoa(columns))
			s.cmd("wincmd =")
			eventually(t, "the hint to fit "+itoa(columns)+" columns", func() bool {
				text, width := s.hint(buf)
				return strings.Contains(text, ":w") && strings.Contains(text, ":q") && len([]rune(text))+2 <= width
			})
		}
		s.cmd("set columns=200")
		eventually(t, "the whole hint back", func() bool {
			text, _ := s.hint(buf)
			return text == full
		})
	})
}

// Side by side on an 80-column screen (each window about 40 columns) the hint still
// names the accept and reject keymaps, leaving out the hunk keys first.
func TestHintNamesTheKeymapsAtEightyColumns(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		s.cmd("set columns=80")
		path := s.writeFile("eighty.txt", "a\n")
		tab := tabName("eighty.txt", 1)
		c.OpenDiff(path, "b\n", tab)
		s.waitViews(1)
		text, width := s.hint(s.proposalBuf(tab))
		if !strings.Contains(text, `\da`) || !strings.Contains(text, `\dq`) || len([]rune(text))+2 > width {
			t.Fatalf("hint in a window of %d columns = %q, want the accept and reject keys", width, text)
		}
	})
}

// The key hint is on screen on every Neovim (the winbar, or before 0.8 the status
// line), also when the proposal's first line is folded away or wider than the
// window, in both layouts.
func TestHintOnScreenWhateverLineOne(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			eachConnected(t, options{"diff": map[string]any{"layout": layout}}, func(t *testing.T, s *session, c *ideClient) {
				s.cmd("set columns=120 lines=30")
				original := strings.Repeat("wide ", 60) + "\n" + numberedLines(40)
				path := s.writeFile("wide.txt", original)
				s.cmd("edit " + path)
				tab := tabName("wide.txt", 13)
				answer := c.OpenDiff(path, replaceLines(original, map[int]string{35: "changed"}), tab)
				s.waitViews(1)
				if layout == "vertical" {
					if folded := luaValue[int](s, `return vim.fn.foldclosed(1)`); folded != 1 {
						t.Fatalf("line 1 is not folded (foldclosed %d)", folded)
					}
				}
				screen := strings.Join(s.screen(), "\n")
				for _, want := range []string{":w", "accept", ":q", "reject"} {
					if !strings.Contains(screen, want) {
						t.Fatalf("the screen lacks the hint's %q:\n%s", want, screen)
					}
				}
				s.cmd("q")
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
				// The window the view used has its own status line (and winbar) back.
				eventually(t, "the view gone", func() bool { return len(s.views()) == 0 })
				global := luaValue[string](s, `return vim.api.nvim_eval("&g:statusline") .. "|" .. (vim.fn.has("nvim-0.8") == 1 and vim.api.nvim_eval("&g:winbar") or "")`)
				local := luaValue[string](s, `return vim.api.nvim_eval("&l:statusline") .. "|" .. (vim.fn.has("nvim-0.8") == 1 and vim.api.nvim_eval("&l:winbar") or "")`)
				if global != "|" || local != "|" {
					t.Fatalf("status line and winbar after the view: global %q, window %q", global, local)
				}
			})
		})
	}
}
