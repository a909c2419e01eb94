//go:build unix

package nvimtest

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// snapshot counts what a diff view may leak.
type snapshot struct {
	Bufs     int    `msgpack:"bufs"`
	Wins     int    `msgpack:"wins"`
	Tabs     int    `msgpack:"tabs"`
	Autocmds int    `msgpack:"autocmds"`
	Augroups string `msgpack:"augroups"`
}

func (s *session) snapshot() snapshot {
	s.t.Helper()
	// The selection tracker's group comes and goes with Claude Code's connection, not
	// with diff views, so it is left out.
	return luaValue[snapshot](s, `
local groups = {}
for _, g in ipairs(vim.split(vim.trim(vim.api.nvim_exec("augroup", true)), "%s+")) do
  if g ~= "mcpdiff_selection" then table.insert(groups, g) end
end
table.sort(groups)
local ok, selection = pcall(vim.api.nvim_get_autocmds, { group = "mcpdiff_selection" })
return {
  bufs = #vim.api.nvim_list_bufs(),
  wins = #vim.api.nvim_list_wins(),
  tabs = #vim.api.nvim_list_tabpages(),
  autocmds = #vim.api.nvim_get_autocmds({}) - (ok and #selection or 0),
  augroups = table.concat(groups, " "),
}`)
}

// expectNoLeaks fails when buffers, windows, tabs, autocmds or augroups differ from before.
func (s *session) expectNoLeaks(before snapshot) {
	s.t.Helper()
	// Teardown after a reject is scheduled on Neovim's loop: wait for it.
	var after snapshot
	if !testenv.Within(waitLimit, func() bool { after = s.snapshot(); return after == before }) {
		s.t.Fatalf("the diff view leaked: before %+v, after %+v", before, after)
	}
}

type viewInfo struct {
	Tab    string `msgpack:"tab"`
	Path   string `msgpack:"path"`
	Status string `msgpack:"status"`
}

func (s *session) views() []viewInfo {
	s.t.Helper()
	return luaValue[[]viewInfo](s, `return require("mcpdiff.diff").list()`)
}

func (s *session) waitViews(n int) []viewInfo {
	s.t.Helper()
	var v []viewInfo
	eventually(s.t, "the diff views to be drawn", func() bool {
		v = s.views()
		return len(v) == n
	})
	return v
}

// connected starts Neovim with the plugin and connects a client; the selection
// tracking the connection switches on is in place before it returns.
// eachConnected runs fn on each Neovim, with the plugin set up with opts and an IDE
// client connected to its bridge.
func eachConnected(t *testing.T, opts options, fn func(t *testing.T, s *session, c *ideClient)) {
	t.Helper()
	eachNvim(t, func(t *testing.T, nv string) {
		s, c := connected(t, nv, opts)
		fn(t, s, c)
	})
}

// subtest runs fn as a subtest of t on a session and client shared by the subtests,
// their failures going to it.
func subtest(t *testing.T, s *session, c *ideClient, name string, fn func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		s.t = t
		c.SetTB(t)
		fn(t)
	})
}

func connected(t *testing.T, nvimBin string, opts options) (*session, *ideClient) {
	t.Helper()
	s := startNvim(t, nvimBin, opts)
	info, _ := s.bridge()
	c := connect(t, info.Port, info.Token)
	eventually(t, "the plugin to see the client", func() bool {
		var n int
		s.lua(`return require("mcpdiff.bridge").clients()`, &n)
		return n == 1
	})
	return s, c
}

func (s *session) currentBufName() string {
	s.t.Helper()
	return luaValue[string](s, `return vim.api.nvim_buf_get_name(0)`)
}

func (s *session) setProposalLines(tab string, lines []string) {
	s.t.Helper()
	s.lua(`
local tab, lines = ...
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.b[b].mcpdiff_tab == tab then
    vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
    return
  end
end
error("no proposal buffer for " .. tab)`, nil, tab, lines)
}

func TestAccept(t *testing.T) {
	t.Parallel()
	const original = "hello world\nsecond line\n"
	tests := []struct {
		name     string
		proposal string
		edit     []string // lines the user puts in the proposal before accepting
		accept   func(s *session)
		want     string
	}{
		{"write", "hello edited\nsecond line\n", nil, func(s *session) { s.cmd("w") }, "hello edited\nsecond line\n"},
		{"command", "hello edited\nsecond line\n", nil, func(s *session) { s.cmd("McpDiffAccept") }, "hello edited\nsecond line\n"},
		{"keymap", "hello edited\nsecond line\n", nil, func(s *session) { s.input(`\da`) }, "hello edited\nsecond line\n"},
		{"CRLF", "hello edited\r\nsecond line\r\n", nil, func(s *session) { s.cmd("w") }, "hello edited\r\nsecond line\r\n"},
		{"no final newline", "hello edited\nsecond line", nil, func(s *session) { s.cmd("w") }, "hello edited\nsecond line"},
		{"BOM", "\uFEFFhello edited\nsecond line\n", nil, func(s *session) { s.cmd("w") }, "\uFEFFhello edited\nsecond line\n"},
		{"user edited", "hello edited\nsecond line\n", []string{"hello mine", "second line", "third"}, func(s *session) { s.cmd("w") }, "hello mine\nsecond line\nthird\n"},
		{"user edited CRLF", "hello edited\r\nsecond line\r\n", []string{"hello mine", "second line"}, func(s *session) { s.cmd("w") }, "hello mine\r\nsecond line\r\n"},
		{"user edited no final newline", "hello edited\nsecond line", []string{"hello mine", "second"}, func(s *session) { s.cmd("w") }, "hello mine\nsecond"},
		{"user edited BOM", "\uFEFFhello edited\n", []string{"hello mine"}, func(s *session) { s.cmd("w") }, "\uFEFFhello mine\n"},
	}
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		for i, tt := range tests {
			subtest(t, s, c, tt.name, func(t *testing.T) {
				path := s.writeFile("hello.txt", original)
				before := s.snapshot()
				tab := tabName("hello.txt", i)
				answer := c.OpenDiff(path, tt.proposal, tab)
				s.waitViews(1)
				if got := s.currentBufName(); !strings.HasSuffix(got, tab+" (proposed)") {
					t.Fatalf("current buffer is %q, want the proposal", got)
				}
				if tt.edit != nil {
					s.setProposalLines(tab, tt.edit)
				}
				tt.accept(s)
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", tt.want)
				if got := testenv.ReadFile(t, path); got != original {
					t.Fatalf("the IDE wrote the file: %q", got)
				}
				// The view stays until the CLI's two close_tabs.
				if v := s.views(); len(v) != 1 || v[0].Status != "accepted" {
					t.Fatalf("views after accept = %+v, want the accepted one", v)
				}
				for range 2 {
					expectTexts(t, "close_tab", c.Texts(c.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab"), "TAB_CLOSED")
				}
				s.expectNoLeaks(before)
			})
		}
	})
}

func TestReject(t *testing.T) {
	t.Parallel()
	const original = "hello world\n"
	tests := []struct {
		name   string
		reject func(s *session)
	}{
		{":q", func(s *session) { s.cmd("q") }},
		{"close the window", func(s *session) { s.input("<C-w>c") }},
		{":bd", func(s *session) { s.cmd("bd") }},
		{":bw!", func(s *session) { s.cmd("bw!") }},
		{"command", func(s *session) { s.cmd("McpDiffReject") }},
		{"keymap", func(s *session) { s.input(`\dq`) }},
		{"tabclose", func(s *session) { s.cmd("tabclose") }},
	}
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		for i, tt := range tests {
			subtest(t, s, c, tt.name, func(t *testing.T) {
				path := s.writeFile("hello.txt", original)
				if tt.name == "tabclose" {
					s.lua(`require("mcpdiff.config").values.diff.open_in_new_tab = true`, nil)
					defer s.lua(`require("mcpdiff.config").values.diff.open_in_new_tab = false`, nil)
				}
				before := s.snapshot()
				tab := tabName("hello.txt", i)
				answer := c.OpenDiff(path, "hello edited\n", tab)
				s.waitViews(1)
				tt.reject(s)
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
				s.expectNoLeaks(before)
				if len(s.views()) != 0 {
					t.Fatalf("views left after reject: %v", s.views())
				}
				if got := testenv.ReadFile(t, path); got != original {
					t.Fatalf("file changed: %q", got)
				}
				// The CLI still sends close_tab twice: harmless.
				for range 2 {
					c.Texts(c.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab")
				}
			})
		}
	})
}

func TestNewFile(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := filepath.Join(s.ws, "sub", "new.txt")
		before := s.snapshot()
		tab := tabName("new.txt", 1)
		answer := c.OpenDiff(path, "brand new\n", tab)
		s.waitViews(1)
		var left struct {
			Name       string `msgpack:"name"`
			Modifiable bool   `msgpack:"modifiable"`
			Readonly   bool   `msgpack:"readonly"`
		}
		s.lua(`
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local b = vim.api.nvim_win_get_buf(w)
  local name = vim.api.nvim_buf_get_name(b)
  if name:find("(NEW FILE)", 1, true) and not name:find("proposed", 1, true) then
    return { name = name, modifiable = vim.bo[b].modifiable, readonly = vim.bo[b].readonly }
  end
end
return { name = "" }`, &left)
		if left.Name != path+" (NEW FILE)" || left.Modifiable || !left.Readonly {
			t.Fatalf("left side = %+v, want a read-only %q placeholder", left, path+" (NEW FILE)")
		}
		if got := s.currentBufName(); !strings.HasSuffix(got, tab+" (NEW FILE - proposed)") {
			t.Fatalf("current buffer %q, want the NEW FILE proposal", got)
		}
		s.cmd("w")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "brand new\n")
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("the IDE created the file (stat: %v)", err)
		}
		c.Texts(c.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab")
		s.expectNoLeaks(before)

		// And rejecting a new file, then proposing it again (claudecode #69).
		for i, reject := range []bool{true, false} {
			tab := tabName("new.txt", 10+i)
			answer := c.OpenDiff(path, "again\n", tab)
			s.waitViews(1)
			if reject {
				s.cmd("q")
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
			} else {
				s.cmd("w")
				expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "FILE_SAVED", "again\n")
				c.Texts(c.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab")
			}
			s.expectNoLeaks(before)
		}
	})
}

// twoFiles is a.txt and b.txt, with a diff of a.txt shown: where the tests of two
// diffs at once start.
type twoFiles struct {
	a, b, tabA, tabB string
	answerA          <-chan rpcMessage // a.txt's diff, proposing "a2\n"
	before           snapshot          // the editor before either diff
}

func (s *session) twoFiles(c *ideClient) twoFiles {
	s.t.Helper()
	f := twoFiles{a: s.writeFile("a.txt", "a\n"), b: s.writeFile("b.txt", "b\n"), tabA: tabName("a.txt", 1), tabB: tabName("b.txt", 2)}
	f.before = s.snapshot()
	f.answerA = c.OpenDiff(f.a, "a2\n", f.tabA)
	s.waitViews(1)
	return f
}

func TestSeveralDiffsAtOnce(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		f := s.twoFiles(c)
		answerB := c.OpenDiff(f.b, "b2\n", f.tabB)
		views := s.waitViews(2)
		if views[0].Path != f.a || views[1].Path != f.b {
			t.Fatalf("views = %+v", views)
		}
		// B is current (its own tab, since A's tab shows a diff); reject it, accept A.
		s.cmd("q")
		expectTexts(t, "openDiff b", c.Texts(answerB, "openDiff b"), "DIFF_REJECTED", f.tabB)
		s.lua(`require("mcpdiff.diff").answer("accept", ...)`, nil, f.tabA)
		expectTexts(t, "openDiff a", c.Texts(f.answerA, "openDiff a"), "FILE_SAVED", "a2\n")
		// B's view is gone, but the server knows it until the CLI closes it.
		expectTexts(t, "closeAllDiffTabs", c.Texts(c.CallTool("closeAllDiffTabs", nil), "closeAllDiffTabs"), "CLOSED_2_DIFF_TABS")
		s.expectNoLeaks(f.before)
	})
}

func TestSameTabNameReplaces(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hello.txt", "hello\n")
		before := s.snapshot()
		tab := tabName("hello.txt", 7)
		first := c.OpenDiff(path, "first\n", tab)
		s.waitViews(1)
		second := c.OpenDiff(path, "second\n", tab)
		expectTexts(t, "first openDiff", c.Texts(first, "first openDiff"), "DIFF_REJECTED", tab)
		// The first answer goes out before its view is replaced: wait for the second.
		eventually(t, "the second proposal to replace the first", func() bool {
			var lines []string
			s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
			return reflect.DeepEqual(lines, []string{"second"})
		})
		if views := s.views(); len(views) != 1 || views[0].Status != "pending" {
			t.Fatalf("after the replacement: views %+v", views)
		}
		s.cmd("w")
		expectTexts(t, "second openDiff", c.Texts(second, "second openDiff"), "FILE_SAVED", "second\n")
		c.Texts(c.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab")
		s.expectNoLeaks(before)
	})
}

// acceptWithWrite proposes contents for path, accepts them with :w in the diff view,
// then does what Claude Code does with the answer: close_tab twice, and only then
// write the accepted text to the file.
func (s *session) acceptWithWrite(c *ideClient, path, contents, tab string) {
	s.t.Helper()
	answer := c.OpenDiff(path, contents, tab)
	s.waitViews(1)
	s.cmd("w")
	text := c.Texts(answer, "openDiff")[1]
	for range 2 {
		c.Texts(c.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab")
	}
	testenv.WriteFile(s.t, path, text)
}

func TestCloseTabAfterAcceptReloadsBuffer(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hello.txt", "hello world\nsecond line\n")
		s.cmd("edit " + path)
		s.cmd("normal! j")
		before := s.snapshot()
		tab := tabName("hello.txt", 3)
		s.acceptWithWrite(c, path, "hello edited\nsecond line\n", tab)
		var lines []string
		eventually(t, "the buffer to show the written file", func() bool {
			s.lua(`return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)`, &lines, path)
			return reflect.DeepEqual(lines, []string{"hello edited", "second line"})
		})
		var cursor []int
		s.lua(`return vim.api.nvim_win_get_cursor(0)`, &cursor)
		if s.currentBufName() != path || cursor[0] != 2 {
			t.Fatalf("after the reload: buffer %q cursor %v, want %s line 2", s.currentBufName(), cursor, path)
		}
		s.expectNoLeaks(before)
	})
}

func TestCloseAllDiffTabsLeavesUserDiffs(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		mine := s.writeFile("mine.txt", "one\ntwo\n")
		other := s.writeFile("other.txt", "one\nthree\n")
		s.cmd("edit " + mine)
		s.cmd("vert diffsplit " + other)
		target := s.writeFile("hello.txt", "hello\n")
		before := s.snapshot()
		tab := tabName("hello.txt", 4)
		answer := c.OpenDiff(target, "hello edited\n", tab)
		s.waitViews(1)
		var tabs int
		s.lua(`return #vim.api.nvim_list_tabpages()`, &tabs)
		if tabs != 2 {
			t.Fatalf("%d tabs: the diff must open in a new tab when the current one shows a diff", tabs)
		}
		expectTexts(t, "closeAllDiffTabs", c.Texts(c.CallTool("closeAllDiffTabs", nil), "closeAllDiffTabs"), "CLOSED_1_DIFF_TABS")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
		s.expectNoLeaks(before)
		var diffWins int
		s.lua(`local n = 0
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do if vim.wo[w].diff then n = n + 1 end end
return n`, &diffWins)
		if diffWins != 2 {
			t.Fatalf("the user's :diffsplit has %d diff windows left, want 2", diffWins)
		}
	})
}

func TestDirtyBufferRefusesDiff(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hello.txt", "hello\n")
		s.cmd("edit " + path)
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, -1, false, { "my unsaved work" })`, nil)
		before := s.snapshot()
		m := c.Await(c.OpenDiff(path, "agent text\n", tabName("hello.txt", 5)), "openDiff")
		if m.Error == nil || m.Error.Code != -32000 || m.Error.Message != "Cannot create diff: file has unsaved changes" ||
			m.Error.Data != "Please save (:w) or discard (:e!) changes to "+path+" before creating diff" {
			t.Fatalf("openDiff on a dirty buffer answered %s", m.Raw)
		}
		var state struct {
			Lines    []string `msgpack:"lines"`
			Modified bool     `msgpack:"modified"`
		}
		s.lua(`return { lines = vim.api.nvim_buf_get_lines(0, 0, -1, false), modified = vim.bo.modified }`, &state)
		if !reflect.DeepEqual(state.Lines, []string{"my unsaved work"}) || !state.Modified {
			t.Fatalf("the dirty buffer was touched: %+v", state)
		}
		if after := s.snapshot(); after != before {
			t.Fatalf("openDiff error left things behind: %+v → %+v", before, after)
		}
	})
}

func TestClientDisconnect(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		f := s.twoFiles(c)
		s.cmd("w") // accept A
		expectTexts(t, "openDiff a", c.Texts(f.answerA, "openDiff a"), "FILE_SAVED", "a2\n")
		c.OpenDiff(f.b, "b2\n", f.tabB)
		s.waitViews(2)
		c.Close()
		// The pending diff goes; the accepted one stays until its file is written.
		eventually(t, "the pending diff to close", func() bool {
			v := s.views()
			return len(v) == 1 && v[0].Tab == f.tabA
		})
		if err := os.WriteFile(f.a, []byte("a2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.expectNoLeaks(f.before)
	})
}

func TestUserAutocmds(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		s.lua(`
_G.events = {}
vim.api.nvim_create_autocmd("User", { pattern = { "McpDiffOpened", "McpDiffClosed" }, callback = function(a)
  local data = a.data or vim.g.mcpdiff_event
  table.insert(_G.events, { event = a.match, tab = data.tab_name, path = data.file_path, reason = data.reason or "" })
end })`, nil)
		path := s.writeFile("hello.txt", "hello\n")
		tab := tabName("hello.txt", 6)
		answer := c.OpenDiff(path, "edited\n", tab)
		s.waitViews(1)
		s.cmd("q")
		c.Texts(answer, "openDiff")
		type event struct {
			Event  string `msgpack:"event"`
			Tab    string `msgpack:"tab"`
			Path   string `msgpack:"path"`
			Reason string `msgpack:"reason"`
		}
		var events []event
		eventually(t, "User McpDiffClosed", func() bool {
			s.lua(`return _G.events`, &events)
			return len(events) == 2
		})
		want := []event{{"McpDiffOpened", tab, path, ""}, {"McpDiffClosed", tab, path, "rejected"}}
		if !reflect.DeepEqual(events, want) {
			t.Fatalf("events = %+v, want %+v", events, want)
		}
	})
}

// The proposal has the file's filetype, also for a new file and where the file has
// no buffer with a filetype yet (this Neovim runs without :filetype on), on every
// Neovim: 0.7's vim.filetype.match sets a buffer's filetype instead of returning it.
func TestProposalHasTheFilesFiletype(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		for i, name := range []string{"old.lua", "new.lua"} {
			path := filepath.Join(s.ws, name)
			if name == "old.lua" {
				path = s.writeFile(name, "x = 1\n")
			}
			tab := tabName(name, 20+i)
			answer := c.OpenDiff(path, "x = 2\n", tab)
			s.waitViews(1)
			if ft := luaValue[string](s, `return vim.bo[...].filetype`, s.proposalBuf(tab)); ft != "lua" {
				t.Errorf("the proposal of %s has the filetype %q, want lua", name, ft)
			}
			s.cmd("McpDiffReject")
			expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
			eventually(t, "the view gone", func() bool { return len(s.views()) == 0 })
		}
	})
}

// A diff never replaces the review list: with the cursor in :McpDiffStatus it opens
// in the editor window beside the list, which stays, as it does beside a sidebar.
func TestDiffLeavesTheReviewListAlone(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		s.cmd("edit " + s.writeFile("other.txt", "o\n"))
		path := s.writeFile("a.txt", "a\n")
		s.cmd("McpDiffStatus")
		s.waitListLine("History")
		tab := tabName("a.txt", 30)
		answer := c.OpenDiff(path, "b\n", tab)
		s.waitViews(1)
		names := func() []string {
			return luaValue[[]string](s, `local out = {}
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  table.insert(out, vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)))
end
return out`)
		}
		if got := names(); !slices.ContainsFunc(got, func(n string) bool { return strings.HasSuffix(n, "mcpdiff://status") }) {
			t.Fatalf("the diff took the review list's window: the windows show %q", got)
		}
		s.cmd("McpDiffReject")
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
	})
}

// A view replaced by a new openDiff of its tab name closes with the reason
// "replaced", as :help McpDiffClosed says, not "closed".
func TestReplacedViewClosesAsReplaced(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		s.lua(`
_G.closed = {}
vim.api.nvim_create_autocmd("User", { pattern = "McpDiffClosed", callback = function(a)
  table.insert(_G.closed, (a.data or vim.g.mcpdiff_event).reason)
end })`, nil)
		path := s.writeFile("hello.txt", "hello\n")
		tab := tabName("hello.txt", 10)
		first := c.OpenDiff(path, "first\n", tab)
		s.waitViews(1)
		second := c.OpenDiff(path, "second\n", tab)
		expectTexts(t, "first openDiff", c.Texts(first, "first openDiff"), "DIFF_REJECTED", tab)
		var reasons []string
		eventually(t, "User McpDiffClosed of the replaced view", func() bool {
			s.lua(`return _G.closed`, &reasons)
			return len(reasons) == 1
		})
		if reasons[0] != "replaced" {
			t.Fatalf("the replaced view closed with the reason %q, want \"replaced\"", reasons[0])
		}
		eventually(t, "the second proposal to be shown", func() bool {
			return reflect.DeepEqual(luaValue[[]string](s, `return vim.api.nvim_buf_get_lines(0, 0, -1, false)`), []string{"second"})
		})
		s.cmd("q")
		expectTexts(t, "second openDiff", c.Texts(second, "second openDiff"), "DIFF_REJECTED", tab)
	})
}

func TestKeepFocus(t *testing.T) {
	t.Parallel()
	eachConnected(t, options{"keep_focus": true}, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hello.txt", "hello\n")
		other := s.writeFile("other.txt", "other\n")
		s.cmd("edit " + other)
		s.cmd("vsplit")
		var win int
		s.lua(`return vim.api.nvim_get_current_win()`, &win)
		answer := c.OpenDiff(path, "edited\n", tabName("hello.txt", 8))
		s.waitViews(1)
		var now int
		s.lua(`return vim.api.nvim_get_current_win()`, &now)
		if now != win {
			t.Fatalf("keep_focus: the current window moved from %d to %d", win, now)
		}
		s.lua(`require("mcpdiff.diff").answer("reject", require("mcpdiff.diff").list()[1].tab)`, nil)
		c.Texts(answer, "openDiff")
	})
}

// With only Claude's terminal on screen the diff makes room instead of replacing it
// (claudecode.nvim #231), and gives the screen back afterwards.
func TestTerminalOnlyWindow(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		diffBesideTerminal(t, s, c, 9, func(tab string) {
			var layout []string
			s.lua(`local out = {}
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local b = vim.api.nvim_win_get_buf(w)
  table.insert(out, vim.bo[b].buftype == "terminal" and "terminal" or vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ":t"))
end
return out`, &layout)
			if len(layout) != 3 || !containsAll(layout, "terminal", "hello.txt", tab+" (proposed)") {
				t.Fatalf("windows = %q, want the terminal, the file and the proposal", layout)
			}
		})
	})
}

// diffBesideTerminal shows a diff of hello.txt (tab number n) while only a terminal
// is on screen, as when Claude Code runs in Neovim's, and checks the windows with
// check; then :q rejects the diff, which leaves nothing behind.
func diffBesideTerminal(t *testing.T, s *session, c *ideClient, n int, check func(tab string)) {
	t.Helper()
	path := s.writeFile("hello.txt", "hello\n")
	s.cmd("terminal cat")
	s.cmd("only")
	before := s.snapshot()
	tab := tabName("hello.txt", n)
	answer := c.OpenDiff(path, "edited\n", tab)
	s.waitViews(1)
	check(tab)
	s.cmd("q")
	expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
	s.expectNoLeaks(before)
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, l := range list {
			if l == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
