//go:build unix

package nvimtest

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Pending edits of the history in file buffers (signs, hunks(), navigation,
// preview, decisions by line), the live review list and the quickfix list.

type hunk struct {
	EditID         string   `msgpack:"edit_id"`
	ConversationID string   `msgpack:"conversation_id"`
	Start          int      `msgpack:"start_line"`
	End            int      `msgpack:"end_line"`
	Kind           string   `msgpack:"kind"`
	Block          int      `msgpack:"block"`
	Old            []string `msgpack:"old_lines"`
}

// hunks is require("mcpdiff").hunks() of the buffer of path.
func (s *session) hunks(path string) []hunk {
	s.t.Helper()
	return luaValue[[]hunk](s, `return require("mcpdiff").hunks(vim.fn.bufnr(...))`, path)
}

// hunkText sums up hunks as "kind start-end" per hunk.
func hunkText(hs []hunk) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s %d-%d", h.Kind, h.Start, h.End))
	}
	return strings.Join(parts, ", ")
}

// signs lists the signs mcpdiff placed in the buffer of path as "line:name".
func (s *session) signs(path string) string {
	s.t.Helper()
	var out []string
	s.lua(`
local placed = vim.fn.sign_getplaced(vim.fn.bufnr(...), { group = "mcpdiff_pending" })[1].signs
local out = {}
for _, p in ipairs(placed) do table.insert(out, p.lnum .. ":" .. p.name) end
table.sort(out, function(a, b) return tonumber(a:match("%d+")) < tonumber(b:match("%d+")) end)
return out`, &out, path)
	return strings.Join(out, " ")
}

// waitHunks waits until the buffer of path shows these hunks and signs.
func (s *session) waitHunks(path, hunks, signs string) {
	s.t.Helper()
	var gotH, gotS string
	defer func() {
		if s.t.Failed() {
			s.t.Logf("hunks %q, signs %q", gotH, gotS)
		}
	}()
	eventually(s.t, "hunks "+hunks+" and signs "+signs, func() bool {
		gotH, gotS = hunkText(s.hunks(path)), s.signs(path)
		return gotH == hunks && gotS == signs
	})
}

// waitBuffer waits until the buffer of path holds content (reloaded from disk).
func (s *session) waitBuffer(path, content string) {
	s.t.Helper()
	eventually(s.t, "the buffer of "+path+" to hold its new content", func() bool {
		return strings.Join(s.bufferLines(path), "\n")+"\n" == content
	})
}

// openEdited writes name with before, opens it, records an edit to after and waits
// until the buffer shows it with these hunks and signs. It returns the path and the
// edit's id.
func (s *session) openEdited(name, before, after, conv, hunks, signs string) (string, string) {
	s.t.Helper()
	path := s.writeFile(name, before)
	s.cmd("edit " + path)
	id := s.recordEdit(conv, path, before, after)
	s.waitBuffer(path, after)
	s.waitHunks(path, hunks, signs)
	return path, id
}

func (s *session) cli(args ...string) (string, int) {
	s.t.Helper()
	out, errOut, code := testenv.Run(s.t, s.command(args...))
	return out + errOut, code
}

func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func replaceLines(content string, with map[int]string) string {
	ls := strings.SplitAfter(content, "\n")
	for n, w := range with {
		ls[n-1] = w + "\n"
	}
	return strings.Join(ls, "")
}

// An edit recorded by anyone while the file is open reloads its buffer and shows
// its hunks in the sign column; a decision takes them away.
func TestPendingEditsShowInTheBuffer(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		before := numberedLines(10)
		path := s.writeFile("a.txt", before)
		s.cmd("edit " + path)
		s.waitHunks(path, "", "")

		// Line 3 changed, a line added after 6, line 9 removed.
		after := strings.Replace(replaceLines(before, map[int]string{3: "three"}), "line 6\n", "line 6\nnew\n", 1)
		after = strings.Replace(after, "line 9\n", "", 1)
		id := s.recordEdit("conv_1_aa", path, before, after)
		s.waitBuffer(path, after)
		s.waitHunks(path, "change 3-3, add 7-7, delete 9-9", "3:McpDiffChange 7:McpDiffAdd 9:McpDiffDelete")
		hs := s.hunks(path)
		if hs[0].EditID != id || hs[0].ConversationID != "conv_1_aa" || !reflect.DeepEqual(hs[0].Old, []string{"line 3"}) || hs[2].Block != 3 || !reflect.DeepEqual(hs[2].Old, []string{"line 9"}) {
			t.Fatalf("hunks: %+v", hs)
		}

		// The CLI accepts the edit: nothing is pending any more.
		if out, code := s.cli("accept", id); code != 0 {
			t.Fatalf("accept: %s", out)
		}
		s.waitHunks(path, "", "")

		// With signs off, hunks() still answers.
		s.lua(`require("mcpdiff").setup({ bin = ..., signs = false })`, nil, testenv.Binary)
		next := replaceLines(after, map[int]string{1: "one"})
		s.recordEdit("conv_1_ab", path, after, next)
		eventually(t, "the hunk of the second edit", func() bool { return hunkText(s.hunks(path)) == "change 1-1" })
		if got := s.signs(path); got != "" {
			t.Fatalf("signs = false, yet signs %q", got)
		}
		var hl string
		s.lua(`return vim.fn.execute("highlight McpDiffSignAdd")`, &hl)
		if !strings.Contains(hl, "links to") {
			t.Fatalf("McpDiffSignAdd is not linked by default: %q", hl)
		}
	})
}

// The sign column has one sign per line: two pending changes shown on one line (here
// lines removed at the top and lines removed below line 1) place one sign there.
func TestOneSignPerLine(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		path := s.writeFile("a.txt", "1\n2\n3\n4\n")
		s.recordEdit("conv_1_os", path, "1\n2\n3\n4\n", "2\n4\n")
		s.cmd("edit " + path)
		eventually(t, "the two deletions in hunks() and the signs", func() bool {
			return hunkText(s.hunks(path)) == "delete 1-1, delete 1-1" && s.signs(path) != ""
		})
		if got := s.signs(path); got != "1:McpDiffDelete" {
			t.Fatalf("signs %q, want one on line 1 (hunks %s)", got, hunkText(s.hunks(path)))
		}
	})
}

// setup() called again with signs = false takes the signs away at once, and signs =
// true puts them back, without waiting for the next change of the history.
func TestSetupAgainTogglesTheSigns(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		path, _ := s.openEdited("a.txt", "1\n2\n", "1\nX\n", "conv_1_st", "change 2-2", "2:McpDiffChange")
		s.lua(`require("mcpdiff").setup({ bin = ..., signs = false })`, nil, testenv.Binary)
		if got := s.signs(path); got != "" {
			t.Fatalf("after setup() with signs = false: signs %q", got)
		}
		s.lua(`require("mcpdiff").setup({ bin = ..., signs = true })`, nil, testenv.Binary)
		if got := s.signs(path); got != "2:McpDiffChange" {
			t.Fatalf("after setup() with signs = true: signs %q", got)
		}
	})
}

// Unsaved changes above a hunk move it in hunks() (the file on disk is unchanged).
func TestHunksFollowUnsavedChanges(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		before := numberedLines(6)
		path, _ := s.openEdited("a.txt", before, replaceLines(before, map[int]string{4: "four"}), "conv_1_ac", "change 4-4", "4:McpDiffChange")
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 0, false, { "typed", "here" })`, nil)
		if got := hunkText(s.hunks(path)); got != "change 6-6" {
			t.Fatalf("after two lines typed above: %q", got)
		}
	})
}

// :[range]McpDiffReject takes out the pending changes of those lines only, part of
// an edit; status says "partly rejected"; accepting the edit puts it back.
func TestRejectAndAcceptByLines(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		before := numberedLines(10)
		after := replaceLines(before, map[int]string{2: "two", 8: "eight"})
		path, id := s.openEdited("a.txt", before, after, "conv_1_ba", "change 2-2, change 8-8", "2:McpDiffChange 8:McpDiffChange")

		s.cmd("7,9McpDiffReject")
		want := replaceLines(before, map[int]string{2: "two"})
		eventually(t, "line 8 back on disk and in the buffer", func() bool {
			return testenv.ReadFile(t, path) == want && strings.Join(s.bufferLines(path), "\n")+"\n" == want
		})
		s.waitMessage("lines 7-9 of a.txt: rejected 1 edit (1 change)")
		s.waitHunks(path, "change 2-2", "2:McpDiffChange")
		if out, _ := s.cli("status"); !strings.Contains(out, "partly rejected") {
			t.Fatalf("status:\n%s", out)
		}

		// Nothing pending there now: said so, nothing done.
		s.cmd("8McpDiffReject")
		s.waitMessage("no pending change on line 8 of a.txt")

		// Accepting by lines marks that change accepted: no sign left.
		s.cmd("2McpDiffAccept")
		s.waitHunks(path, "", "")
		if testenv.ReadFile(t, path) != want {
			t.Fatal("accepting a pending change rewrote the file")
		}
		// The whole edit accepted puts the rejected line back.
		s.cmd("McpDiffAccept " + id)
		eventually(t, "the rejected change put back", func() bool {
			return testenv.ReadFile(t, path) == after && strings.Join(s.bufferLines(path), "\n")+"\n" == after
		})
	})
}

// A reject of a file with unsaved changes here is refused and changes nothing.
func TestRejectRefusedWithUnsavedChanges(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		before := numberedLines(5)
		after := replaceLines(before, map[int]string{3: "three"})
		path, id := s.openEdited("a.txt", before, after, "conv_1_bb", "change 3-3", "3:McpDiffChange")
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine" })`, nil)
		for i, command := range []string{"McpDiffReject", "3McpDiffReject", "McpDiffReject " + id} {
			s.cmd(command)
			eventually(t, "the refusal of :"+command, func() bool {
				n := 0
				for _, m := range s.messages() {
					if strings.Contains(m.Msg, "a.txt has unsaved changes in Neovim: save (:w) or discard (:e!) them in Neovim first") {
						n++
					}
				}
				return n == i+1
			})
		}
		if testenv.ReadFile(t, path) != after {
			t.Fatal("a refused reject changed the file")
		}
		if got := s.bufferLines(path); got[0] != "mine" || got[2] != "three" {
			t.Fatalf("the buffer lost its unsaved changes: %q", got)
		}
		if e := s.historyEntries(); e[0].Status != "pending" {
			t.Fatalf("the edit is %s", e[0].Status)
		}
	})
}

// A reject refused because later edits changed the same lines names them and
// offers to reject them too.
func TestRejectOffersTheLaterEditsInTheWay(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		for _, yes := range []bool{false, true} {
			s := startNvim(t, nv, nil)
			v0 := numberedLines(5)
			path := s.writeFile("a.txt", v0)
			v1 := replaceLines(v0, map[int]string{2: "two"})
			id1 := s.recordEdit("conv_1_bc", path, v0, v1)
			v2 := replaceLines(v1, map[int]string{2: "TWO"})
			id2 := s.recordEdit("conv_1_bc", path, v1, v2)
			v3 := replaceLines(v2, map[int]string{3: "three"}) // a neighbour: not in the way
			s.recordEdit("conv_1_bc", path, v2, v3)
			s.lua(`_G.asked = nil
local answer = ...
require("mcpdiff.history").confirm_later = function(q) _G.asked = q; return answer end`, nil, yes)
			s.cmd("McpDiffReject " + id1)
			var asked string
			eventually(t, "the question", func() bool {
				s.lua(`return _G.asked or ""`, &asked)
				return asked != ""
			})
			if !strings.Contains(asked, id2[:8]) || !strings.Contains(asked, "1 later edit") {
				t.Fatalf("asked %q", asked)
			}
			if yes {
				eventually(t, "both rejected", func() bool { return testenv.ReadFile(t, path) == replaceLines(v0, map[int]string{3: "three"}) })
			} else {
				s.waitMessage("reject cancelled")
				if testenv.ReadFile(t, path) != v3 {
					t.Fatal("declined, yet the file changed")
				}
			}
			s.close()
		}
	})
}

// ]h and [h move between pending hunks; the preview shows the edit, its
// conversation and the original lines.
func TestNavigateAndPreviewHunks(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s := startNvim(t, nv, nil)
		before := numberedLines(20)
		_, id := s.openEdited("a.txt", before, replaceLines(before, map[int]string{5: "five", 15: "fifteen"}), "conv_1_bd",
			"change 5-5, change 15-15", "5:McpDiffChange 15:McpDiffChange")
		cursor := func() int {
			var l int
			s.lua(`return vim.api.nvim_win_get_cursor(0)[1]`, &l)
			return l
		}
		s.input("]h")
		eventually(t, "]h to line 5", func() bool { return cursor() == 5 })
		s.input("]h")
		eventually(t, "]h to line 15", func() bool { return cursor() == 15 })
		s.input("[h")
		eventually(t, "[h back to line 5", func() bool { return cursor() == 5 })
		s.cmd("McpDiffNextPending")
		if cursor() != 15 {
			t.Fatalf(":McpDiffNextPending went to %d", cursor())
		}
		s.cmd("McpDiffPrevHunk") // the name before 0.3 still works
		if cursor() != 5 {
			t.Fatalf(":McpDiffPrevHunk went to %d", cursor())
		}
		s.cmd("McpDiffNextPending")
		s.cmd("McpDiffPreviewPending")
		var lines []string
		s.lua(`
for _, w in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(w).relative ~= "" then
    return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)
  end
end
return {}`, &lines)
		text := strings.Join(lines, "\n")
		for _, want := range []string{"edit " + id[:8], "conversation conv_1_bd", "-line 15"} {
			if !strings.Contains(text, want) {
				t.Fatalf("the preview lacks %q:\n%s", want, text)
			}
		}
		// A keymap the user has is never replaced.
		s2 := startNvim(t, nv, options{"auto_start": false, "keymaps": map[string]any{"next_pending": "]x"}})
		s2.cmd("nnoremap ]y :echo 'mine'<CR>")
		s2.lua(`require("mcpdiff").setup({ bin = ..., auto_start = false, keymaps = { next_pending = "]y" } })`, nil, testenv.Binary)
		var rhs string
		s2.lua(`return vim.fn.maparg("]y", "n")`, &rhs)
		if !strings.Contains(rhs, "mine") {
			t.Fatalf("]y was replaced: %q", rhs)
		}
	})
}

// setup() called again applies the new global keys: a key set to false or moved
// elsewhere is no longer mapped by mcpdiff, while a mapping the user made since is
// left alone.
func TestSetupAgainMovesTheGlobalKeys(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s := startNvim(t, nv, options{"auto_start": false, "keymaps": map[string]any{"preview_pending": "gp"}})
		maps := func() map[string]string {
			return luaValue[map[string]string](s, `
local out = {}
for _, k in ipairs({ "]h", "[h", "]p", "gp" }) do out[k] = vim.fn.maparg(k, "n", false, true).desc or "" end
return out`)
		}
		if m := maps(); m["]h"] == "" || m["[h"] == "" || m["gp"] == "" {
			t.Fatalf("after setup(): %q", m)
		}
		s.cmd("nnoremap gp :echo 'mine'<CR>")
		s.lua(`require("mcpdiff").setup({ bin = ..., auto_start = false, keymaps = { next_pending = false, prev_pending = "]p", preview_pending = false } })`, nil, testenv.Binary)
		m := maps()
		if m["]h"] != "" || m["[h"] != "" || !strings.HasPrefix(m["]p"], "mcpdiff: ") {
			t.Fatalf("after setup() with next_pending = false, prev_pending = \"]p\": %q", m)
		}
		if rhs := luaValue[string](s, `return vim.fn.maparg("gp", "n")`); !strings.Contains(rhs, "mine") {
			t.Fatalf("the user's gp was taken away: %q", rhs)
		}
	})
}

// :McpDiffQuickfix lists one entry per pending hunk, across files.
func TestQuickfixListsEveryPendingHunk(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		a0, b0 := numberedLines(10), numberedLines(4)
		a := s.writeFile("a.txt", a0)
		b := s.writeFile("sub/b.txt", b0)
		s.recordEdit("conv_1_be", a, a0, replaceLines(a0, map[int]string{2: "two", 9: "nine"}))
		idB := s.recordEdit("conv_1_be", b, b0, replaceLines(b0, map[int]string{4: "four"}))
		s.cmd("McpDiffQuickfix")
		var items []struct {
			Lnum int    `msgpack:"lnum"`
			Text string `msgpack:"text"`
			Name string `msgpack:"name"`
		}
		s.lua(`
local out = {}
for _, it in ipairs(vim.fn.getqflist()) do
  table.insert(out, { lnum = it.lnum, text = it.text, name = vim.api.nvim_buf_get_name(it.bufnr) })
end
return out`, &items)
		if len(items) != 3 || items[0].Name != a || items[0].Lnum != 2 || items[1].Lnum != 9 || items[2].Name != b || items[2].Lnum != 4 || !strings.Contains(items[2].Text, idB[:8]) {
			t.Fatalf("quickfix: %+v", items)
		}
	})
}

// listLines returns the lines of the review buffer.
func (s *session) listLines() []string {
	s.t.Helper()
	return luaValue[[]string](s, `
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(b):match("mcpdiff://status$") then
    return vim.api.nvim_buf_get_lines(b, 0, -1, false)
  end
end
return {}`)
}

// waitListLine waits for a line of the review list holding all of want, and
// returns its number.
func (s *session) waitListLine(want ...string) int {
	s.t.Helper()
	var n int
	var last []string
	defer func() {
		if s.t.Failed() {
			s.t.Logf("the list:\n%s", strings.Join(last, "\n"))
		}
	}()
	eventually(s.t, "a line of the list with "+strings.Join(want, ", "), func() bool {
		last = s.listLines()
		for i, l := range last {
			all := true
			for _, w := range want {
				all = all && strings.Contains(l, w)
			}
			if all {
				n = i + 1
				return true
			}
		}
		return false
	})
	return n
}

func (s *session) cursorTo(line int) {
	s.t.Helper()
	s.lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 })`, nil, line)
}

// The list follows the store by itself, whoever changes it, and its keys decide
// edits and whole conversations, show diffs inline and open files at the edit.
func TestReviewListFollowsTheStoreAndItsKeysWork(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		a0 := numberedLines(12)
		path := s.writeFile("a.txt", a0)
		a1 := replaceLines(a0, map[int]string{9: "nine", 10: "ten"})
		id1 := s.recordEdit("conv_1_ca", path, a0, a1)
		s.cmd("McpDiffStatus")
		s.waitListLine(id1[:8], "pending", "openDiff", "+2 −2", "a.txt")
		s.waitListLine("Keys:", "= diff inline", "o open file", "A/R accept/reject conversation")
		s.waitListLine("Conversation conv_1_ca (1)", "1 pending")

		// Another process records and decides: the list follows.
		a2 := strings.Replace(a1, "line 2\n", "line 2\nadded\n", 1)
		id2 := s.recordEdit("conv_1_ca", path, a1, a2)
		s.waitListLine(id2[:8], "pending", "+1 −0")
		if out, code := s.cli("reject", id2); code != 0 {
			t.Fatalf("reject: %s", out)
		}
		s.waitListLine(id2[:8], "rejected")

		// = shows the diff under the edit; again hides it.
		line := s.waitListLine(id1[:8])
		s.cursorTo(line)
		s.input("=")
		s.waitListLine("+nine")
		if got := s.listLines()[line]; !strings.HasPrefix(strings.TrimSpace(got), "edit "+id1) {
			t.Fatalf("the inline diff should start under the edit, found %q", got)
		}
		s.input("=")
		eventually(t, "the inline diff to go", func() bool { return !strings.Contains(strings.Join(s.listLines(), "\n"), "+nine") })

		// o opens the file at the edit.
		s.cursorTo(s.waitListLine(id1[:8]))
		s.input("o")
		eventually(t, "the file open at line 9", func() bool {
			var name string
			var l int
			s.lua(`return vim.api.nvim_buf_get_name(0)`, &name)
			s.lua(`return vim.api.nvim_win_get_cursor(0)[1]`, &l)
			return name == path && l == 9
		})

		// R rejects the whole conversation, A accepts it (puts everything back): each
		// asks first, as the conversation has two edits, and acts only on a yes.
		s.cmd("McpDiffStatus")
		s.lua(`_G.asked = {}
require("mcpdiff.review").confirm = function(question) table.insert(_G.asked, question); return false end`, nil)
		s.cursorTo(s.waitListLine("Conversation conv_1_ca"))
		s.input("R")
		s.waitMessage("reject of conversation conv_1_ca cancelled")
		if asked := luaValue[[]string](s, `return _G.asked`); len(asked) != 1 || asked[0] != "Reject all 2 edits of conversation conv_1_ca?" {
			t.Fatalf("R asked %q", asked)
		}
		if testenv.ReadFile(t, path) != a1 || s.historyEntries()[0].Status != "pending" {
			t.Fatal("R answered no changed the file or the history")
		}
		s.lua(`require("mcpdiff.review").confirm = function(question) table.insert(_G.asked, question); return true end`, nil)
		s.input("R")
		eventually(t, "the conversation rejected", func() bool { return testenv.ReadFile(t, path) == a0 })
		s.waitListLine(id1[:8], "rejected")
		s.cursorTo(s.waitListLine(id1[:8]))
		s.input("A")
		eventually(t, "the conversation accepted", func() bool { return testenv.ReadFile(t, path) == a2 })
		s.waitListLine("Conversation conv_1_ca (2)", "2 accepted")
		if asked := luaValue[[]string](s, `return _G.asked`); len(asked) != 3 || asked[2] != "Accept all 2 edits of conversation conv_1_ca?" {
			t.Fatalf("A asked %q", asked)
		}
	})
}

// A/R ask about the conversation as the history holds it when the key is pressed:
// with no bridge running, nothing redraws the list as edits arrive, and the key
// decides every edit of the conversation, drawn or not.
func TestConversationKeysAskAboutTheHistoryAsItIsNow(t *testing.T) {
	t.Parallel()
	eachStarted(t, options{"auto_start": false}, func(t *testing.T, s *session) {
		a0 := numberedLines(12)
		path := s.writeFile("a.txt", a0)
		a1 := replaceLines(a0, map[int]string{3: "three"})
		id1 := s.recordEdit("conv_1_st", path, a0, a1)
		s.cmd("McpDiffStatus")
		line := s.waitListLine("Conversation conv_1_st (1)")
		a2 := replaceLines(a1, map[int]string{9: "nine"})
		id2 := s.recordEdit("conv_1_st", path, a1, a2)
		s.lua(`_G.asked = {}
require("mcpdiff.review").confirm = function(question) table.insert(_G.asked, question); return false end`, nil)
		s.cursorTo(line)
		s.input("R")
		s.waitMessage("reject of conversation conv_1_st cancelled")
		if asked := luaValue[[]string](s, `return _G.asked`); len(asked) != 1 || asked[0] != "Reject all 2 edits of conversation conv_1_st?" {
			t.Fatalf("R asked %q", asked)
		}
		s.waitListLine(id2[:8], "pending")
		if testenv.ReadFile(t, path) != a2 {
			t.Fatal("R answered no changed the file")
		}
		for _, e := range s.historyEntries() {
			if e.Status != "pending" {
				t.Fatalf("R answered no decided %s: %+v", id1, e)
			}
		}
	})
}

// A decision in one Neovim shows in another on the same workspace: its buffer is
// reloaded and its signs and list follow.
func TestTwoNeovimsOnOneWorkspace(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s1 := startNvim(t, nv, nil)
		s2 := startNvim(t, nv, nil)
		defer func() {
			if t.Failed() {
				for i, s := range []*session{s1, s2} {
					t.Logf("messages of Neovim %d: %+v", i+1, s.messages())
				}
			}
		}()
		s2.cmd("cd " + s1.ws)
		before := numberedLines(8)
		path := s1.writeFile("a.txt", before)
		after := replaceLines(before, map[int]string{2: "two", 7: "seven"})
		s1.cmd("edit " + path)
		s2.cmd("edit " + path)
		id := s1.recordEdit("conv_1_cb", path, before, after)
		s2.cmd("McpDiffStatus")
		s2.cmd("wincmd p")
		for _, s := range []*session{s1, s2} {
			s.waitBuffer(path, after)
			s.waitHunks(path, "change 2-2, change 7-7", "2:McpDiffChange 7:McpDiffChange")
		}
		s1.cmd("7McpDiffReject")
		want := replaceLines(before, map[int]string{2: "two"})
		s2.waitBuffer(path, want)
		s2.waitHunks(path, "change 2-2", "2:McpDiffChange")
		s2.waitListLine(id[:8], "partly rejected")
	})
}

// A reject started in Neovim finishes when Neovim quits meanwhile: the file and the
// history agree.
func TestNeovimClosedWhileARejectRuns(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		before := numberedLines(3000)
		path := s.writeFile("a.txt", before)
		after := replaceLines(before, map[int]string{100: "changed"})
		id := s.recordEdit("conv_1_cc", path, before, after)
		s.cmd("edit " + path)
		s.cmd("McpDiffReject")
		s.close()
		eventually(t, "the reject to finish", func() bool {
			e := s.historyEntries()
			return len(e) == 1 && e[0].Status == "rejected" && testenv.ReadFile(t, path) == before
		})
		if out, code := s.cli("reject", id); code != 0 || !strings.Contains(out, "already rejected") {
			t.Fatalf("the history and the file disagree: %d %s", code, out)
		}
	})
}

// A range reject of a file changed or deleted outside the history shows the
// difference and asks before discarding it.
func TestRangeRejectOfAFileChangedOutside(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		before := numberedLines(6)
		after := replaceLines(before, map[int]string{2: "two", 5: "five"})
		path, id := s.openEdited("a.txt", before, after, "conv_1_cd", "change 2-2, change 5-5", "2:McpDiffChange 5:McpDiffChange")
		outside := after + "typed elsewhere\n"
		if err := writeString(path, outside); err != nil {
			t.Fatal(err)
		}
		s.cmd("edit!")
		// The reload redraws the buffer: its hunks come back from the bridge.
		s.waitHunks(path, "change 2-2, change 5-5", "2:McpDiffChange 5:McpDiffChange")
		s.lua(`_G.asked = nil
require("mcpdiff.history").confirm = function(q) _G.asked = q; return true end`, nil)
		s.cmd("5McpDiffReject")
		eventually(t, "the forced reject", func() bool {
			return testenv.ReadFile(t, path) == replaceLines(before, map[int]string{2: "two"})
		})
		var asked string
		s.lua(`return _G.asked or ""`, &asked)
		if !strings.Contains(asked, "Discard those outside changes") {
			t.Fatalf("asked %q", asked)
		}

		// Deleted outside: the whole edit's reject brings the file back, once allowed.
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		s.cmd("McpDiffReject " + id)
		eventually(t, "the file back without the edit", func() bool {
			b, err := os.ReadFile(path)
			return err == nil && string(b) == before
		})

		s.cmd("McpDiffReject deadbeef")
		s.waitMessage(`unknown id "deadbeef"`)
	})
}

// A store of 10,000 entries lists in full, and follows a change like a small one.
func TestReviewListOfTenThousandEntries(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		convs, err := testenv.WriteStore(s.ws, 100, 100)
		if err != nil {
			t.Fatal(err)
		}
		s.cmd("McpDiffStatus")
		eventually(t, "10,000 edits listed", func() bool {
			n := 0
			for _, l := range s.listLines() {
				if strings.Contains(l, "edit_file") {
					n++
				}
			}
			return n == 10000
		})
		s.waitListLine("Conversation "+convs[99]+" (100)", "10 pending, 90 accepted")
		// The CLI accepts a whole conversation meanwhile: the list follows.
		if out, code := s.cli("accept", "--conv", convs[0]); code != 0 {
			t.Fatalf("accept --conv: %s", out)
		}
		s.waitListLine("Conversation "+convs[0]+" (100)", "100 accepted")
	})
}

// In a workspace where no agent edited yet, the list says how edits get there, with
// the bridge (which answers the list) and without it (`mcpdiff status --review`).
func TestReviewListWithoutHistorySaysWhatToDo(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		for _, bridge := range []bool{true, false} {
			s := startNvim(t, nv, options{"auto_start": bridge})
			s.cmd("McpDiffStatus")
			s.waitListLine("No agent edits recorded in "+s.ws+" yet: edits appear here once an agent edits through mcpdiff",
				":McpDiffClaude", "`mcpdiff serve`", "`mcpdiff hooks install`")
			if text := strings.Join(s.listLines(), "\n"); strings.Contains(text, "no edit history found") {
				t.Fatalf("bridge %v: the list shows the raw error:\n%s", bridge, text)
			}
			// Its long lines (this one, the Keys line) wrap between words.
			var wraps bool
			s.lua(`return vim.wo.wrap and vim.wo.linebreak and vim.wo.breakindent`, &wraps)
			if !wraps {
				t.Fatal("the list window lacks 'wrap', 'linebreak' or 'breakindent'")
			}
		}
	})
}

// previewFloat is the text of the preview's float and the screen rows it covers
// (1-based, border included), or nil text when there is none.
type previewFloat struct {
	Lines     []string `msgpack:"lines"`
	Top       int      `msgpack:"top"`
	Bottom    int      `msgpack:"bottom"`
	CursorRow int      `msgpack:"cursor_row"`
}

func (s *session) previewFloat() previewFloat {
	s.t.Helper()
	return luaValue[previewFloat](s, `
vim.cmd("redraw")
local out = { lines = {}, top = 0, bottom = 0,
  cursor_row = vim.fn.win_screenpos(0)[1] + vim.fn.winline() - 1 }
for _, w in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(w).relative ~= "" then
    out.lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)
    local pos = vim.api.nvim_win_get_position(w)
    out.top = pos[1] + 1
    out.bottom = pos[1] + vim.api.nvim_win_get_height(w) + 2
  end
end
return out`)
}

// A second :McpDiffPreviewPending replaces the first preview instead of leaving it
// open for good: one float, and none once the cursor moves, nor its buffer.
func TestPreviewTwiceLeavesOneFloat(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		path, _ := s.openEdited("a.txt", "1\n2\n3\n", "1\nX\n3\n", "conv_1_pt", "change 2-2", "2:McpDiffChange")
		s.waitBuffer(path, "1\nX\n3\n")
		floats := func() int {
			return luaValue[int](s, `local n = 0
for _, w in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(w).relative ~= "" then n = n + 1 end
end
return n`)
		}
		bufs := func() int { return luaValue[int](s, `return #vim.api.nvim_list_bufs()`) }
		before := bufs()
		s.cmd("2")
		s.cmd("McpDiffPreviewPending")
		s.cmd("McpDiffPreviewPending")
		if n := floats(); n != 1 {
			t.Fatalf("after two previews: %d floating windows, want 1", n)
		}
		s.input("k")
		eventually(t, "the preview to close as the cursor moved", func() bool { return floats() == 0 })
		if after := bufs(); after != before {
			t.Fatalf("the previews left %d buffers behind", after-before)
		}
	})
}

// The preview of a line lists every pending change of it, also those a later
// pending edit overwrote, and never covers the line: on the last row of the window
// it opens above it.
func TestPreviewListsEveryPendingChangeBesideItsLine(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		s.cmd("set lines=24 columns=100")
		v0 := numberedLines(40)
		v1 := replaceLines(v0, map[int]string{30: "fifteen"})
		path, e1 := s.openEdited("a.txt", v0, v1, "conv_1_pa", "change 30-30", "30:McpDiffChange")
		v2 := replaceLines(v1, map[int]string{30: "FIFTEEN"})
		e2 := s.recordEdit("conv_2_pa", path, v1, v2)
		v3 := strings.Replace(v2, "line 31\n", "", 1)
		e3 := s.recordEdit("conv_3_pa", path, v2, v3)
		s.waitBuffer(path, v3)
		eventually(t, "the change and the deletion on line 30", func() bool { return hunkText(s.hunks(path)) == "change 30-30, delete 30-30" })

		for _, at := range []string{"zb", "zt"} { // line 30 on the last row, then the first
			s.cmd("normal! 30G" + at)
			s.cmd("McpDiffPreviewPending")
			f := s.previewFloat()
			text := strings.Join(f.Lines, "\n")
			for _, want := range []string{"3 pending changes on line 30", "edit " + e2[:8], "-fifteen",
				"edit " + e1[:8], "under edit " + e2[:8], "-line 30", "edit " + e3[:8], "-line 31"} {
				if !strings.Contains(text, want) {
					t.Fatalf("%s: the preview lacks %q:\n%s", at, want, text)
				}
			}
			if f.Top <= f.CursorRow && f.CursorRow <= f.Bottom {
				t.Fatalf("%s: the preview (rows %d-%d) covers the cursor's row %d", at, f.Top, f.Bottom, f.CursorRow)
			}
			if row := s.screen()[f.CursorRow-1]; !strings.Contains(row, "FIFTEEN") {
				t.Fatalf("%s: the cursor's row shows %q, not its line", at, row)
			}
			s.cmd("normal! k")
			eventually(t, "the preview to close", func() bool { return len(s.previewFloat().Lines) == 0 })
		}
	})
}
