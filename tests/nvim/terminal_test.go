//go:build unix

package nvimtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// :McpDiffClaude's one terminal: shown again rather than started twice, closed with
// its process, named shortly, and narrower while a proposal is open.

// agentScript is a stand-in for claude that runs until told: a line "/exit" ends it
// with 0, "/fail" with 3 after a message.
func agentScript(t *testing.T) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "fake-claude")
	body := "#!/bin/sh\necho \"fake claude $*\"\nwhile read line; do\n  case \"$line\" in\n" +
		"    /exit) exit 0;;\n    /fail) echo 'something broke'; exit 3;;\n  esac\ndone\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// termState is what the screen holds of the agent's terminal.
type termState struct {
	Wins      int      `msgpack:"wins"`     // windows of the current tab
	Terms     []string `msgpack:"terms"`    // names of the terminal buffers, listed or not
	Shown     int      `msgpack:"shown"`    // windows showing a terminal
	Current   string   `msgpack:"current"`  // name of the current window's buffer
	Mode      string   `msgpack:"mode"`     // the mode
	Running   bool     `msgpack:"running"`  // the job of mcpdiff://claude runs
	Lines     []string `msgpack:"lines"`    // the lines of mcpdiff://claude
	Bufs      []string `msgpack:"bufs"`     // names of every buffer
	TermJob   int      `msgpack:"term_job"` // job of mcpdiff://claude
	TermWidth int      `msgpack:"width"`    // width of its window (0: hidden)
}

func (s *session) term() termState {
	s.t.Helper()
	return luaValue[termState](s, `
local api = vim.api
local st = { wins = #api.nvim_tabpage_list_wins(0), terms = {}, shown = 0, bufs = {}, lines = {},
  current = api.nvim_buf_get_name(0), mode = api.nvim_get_mode().mode, running = false, term_job = 0, width = 0 }
for _, b in ipairs(api.nvim_list_bufs()) do
  table.insert(st.bufs, api.nvim_buf_get_name(b))
  if vim.bo[b].buftype == "terminal" then table.insert(st.terms, api.nvim_buf_get_name(b)) end
end
for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
  if vim.bo[api.nvim_win_get_buf(w)].buftype == "terminal" then
    st.shown = st.shown + 1
    st.width = api.nvim_win_get_width(w)
  end
end
local b = vim.fn.bufnr("^mcpdiff://claude$")
if b > 0 then
  st.lines = api.nvim_buf_get_lines(b, 0, -1, false)
  st.term_job = vim.b[b].terminal_job_id or 0
  st.running = vim.fn.jobwait({ st.term_job }, 0)[1] == -1
end
return st`)
}

// waitTerm waits until the terminal's state satisfies cond.
func (s *session) waitTerm(what string, cond func(termState) bool) termState {
	s.t.Helper()
	var st termState
	defer func() {
		if s.t.Failed() {
			s.t.Logf("terminal state: %+v", st)
		}
	}()
	eventually(s.t, what, func() bool { st = s.term(); return cond(st) })
	return st
}

// type sends text and Enter to the agent's terminal.
func (s *session) typeInTerm(text string) {
	s.t.Helper()
	s.lua(`vim.api.nvim_chan_send(vim.b[vim.fn.bufnr("^mcpdiff://claude$")].terminal_job_id, ...)`, nil, text+"\r")
}

func TestClaudeTerminalIsOne(t *testing.T) {
	t.Parallel()
	script := agentScript(t)
	eachStarted(t, options{"terminal": map[string]any{"cmd": script, "hooks": false}}, func(t *testing.T, s *session) {
		file := s.writeFile("a.txt", "a\n")
		s.cmd("edit " + file)
		s.cmd("McpDiffClaude")
		first := s.waitTerm("the agent's terminal", func(st termState) bool {
			return st.Running && strings.Contains(strings.Join(st.Lines, "\n"), "fake claude")
		})
		// A short name, and no buffer left with the long one.
		if first.Wins != 2 || first.Current != "mcpdiff://claude" || len(first.Terms) != 1 || first.Terms[0] != "mcpdiff://claude" {
			t.Fatalf("after :McpDiffClaude: %+v", first)
		}
		for _, b := range first.Bufs {
			if strings.HasPrefix(b, "term://") {
				t.Fatalf("a buffer named %q is left", b)
			}
		}

		// Again from the file: the same terminal gets the cursor, no second one starts.
		s.cmd("wincmd p")
		s.cmd("McpDiffClaude")
		st := s.term()
		if st.Wins != 2 || len(st.Terms) != 1 || st.Current != "mcpdiff://claude" || st.TermJob != first.TermJob || !st.Running {
			t.Fatalf(":McpDiffClaude again: %+v, want the first terminal (job %d) focused", st, first.TermJob)
		}
		// From inside it: hidden, still running; arguments wait for the next start.
		s.cmd("McpDiffClaude --resume")
		st = s.term()
		if st.Wins != 1 || st.Shown != 0 || len(st.Terms) != 1 || !st.Running || st.Current != file {
			t.Fatalf(":McpDiffClaude in its terminal: %+v, want it hidden and running", st)
		}
		s.waitMessage("Claude Code already runs in this Neovim")
		s.cmd("McpDiffClaude")
		if st = s.term(); st.Wins != 2 || st.Current != "mcpdiff://claude" || st.TermJob != first.TermJob {
			t.Fatalf(":McpDiffClaude with it hidden: %+v", st)
		}

		// /exit: its window closes and its buffer goes, in Normal mode.
		s.typeInTerm("/exit")
		// Terminal mode ends on Neovim's next turn after the window closes: wait for both.
		st = s.waitTerm("the terminal to close, in Normal mode", func(st termState) bool {
			return st.Wins == 1 && len(st.Terms) == 0 && st.Mode == "n"
		})
		if st.Current != file {
			t.Fatalf("after /exit: %+v", st)
		}

		// An exit with an error stays on screen, to be read; the next start takes its place.
		s.cmd("McpDiffClaude")
		s.waitTerm("a new terminal", func(st termState) bool {
			return st.Running && strings.Contains(strings.Join(st.Lines, "\n"), "fake claude")
		})
		s.typeInTerm("/fail")
		st = s.waitTerm("the failed agent's message", func(st termState) bool {
			return !st.Running && strings.Contains(strings.Join(st.Lines, "\n"), "[Process exited 3]")
		})
		if st.Wins != 2 || !strings.Contains(strings.Join(st.Lines, "\n"), "something broke") {
			t.Fatalf("after an exit with 3: %+v", st)
		}
		s.cmd("McpDiffClaude")
		st = s.waitTerm("a new terminal in its window", func(st termState) bool { return st.Running })
		if st.Wins != 2 || len(st.Terms) != 1 || st.Terms[0] != "mcpdiff://claude" {
			t.Fatalf("after a start over a failed one: %+v", st)
		}
	})
}

// While a proposal is open the terminal shrinks to terminal.diff_size and the diff
// shares the rest; :q on the proposal gives it back and leaves the cursor in the
// file's window, so the next :e does not replace the terminal.
func TestDiffGetsTheRoomBesideTheTerminal(t *testing.T) {
	t.Parallel()
	script := agentScript(t)
	eachConnected(t, options{"terminal": map[string]any{"cmd": script, "hooks": false}}, func(t *testing.T, s *session, c *ideClient) {
		s.cmd("set columns=200 lines=40")
		path := s.writeFile("hello.txt", "hello\n")
		s.cmd("edit " + path)
		s.cmd("McpDiffClaude")
		s.waitTerm("the agent's terminal", func(st termState) bool { return st.Running && st.TermWidth == 80 })

		tab := tabName("hello.txt", 11)
		answer := c.OpenDiff(path, "edited\n", tab)
		s.waitViews(1)
		widths := func() map[string]int {
			return luaValue[map[string]int](s, `local out = {}
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local b = vim.api.nvim_win_get_buf(w)
  out[vim.bo[b].buftype == "terminal" and "terminal" or vim.b[b].mcpdiff_tab and "proposal" or "file"] = vim.api.nvim_win_get_width(w)
end
return out`)
		}
		w := widths()
		if w["terminal"] != 40 || w["file"] < 79 || w["proposal"] < 79 {
			t.Fatalf("widths with a proposal open: %v; want the terminal at 40 columns (0.2) and the diff sharing the rest", w)
		}

		s.cmd("q")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
		st := s.waitTerm("the terminal's width back", func(st termState) bool { return st.TermWidth == 80 && st.Wins == 2 })
		if st.Current != path {
			t.Fatalf("after :q the cursor is in %q, want the file's window", st.Current)
		}
		other := s.writeFile("other.txt", "other\n")
		s.cmd("edit " + other)
		if st = s.term(); st.Shown != 1 || st.Current != other || !st.Running {
			t.Fatalf(":e after :q: %+v, want the terminal still shown", st)
		}

		// diff_size = false: the terminal keeps its size.
		s.lua(`require("mcpdiff.config").values.terminal.diff_size = false`, nil)
		answer = c.OpenDiff(path, "edited again\n", tabName("hello.txt", 12))
		s.waitViews(1)
		if w := widths(); w["terminal"] != 80 {
			t.Fatalf("widths with diff_size = false: %v", w)
		}
		s.cmd("q")
		c.Texts(answer, "openDiff")
	})
}
