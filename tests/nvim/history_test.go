//go:build unix

package nvimtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// recordEdit records, in the session's workspace, that path went from before to
// after (already on disk) in conversation conv, as a pending edit of tool openDiff,
// and returns the edit id.
func (s *session) recordEdit(conv, path, before, after string) string {
	s.t.Helper()
	if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.initStore()
	store, err := history.OpenFolder(s.ws)
	if err == nil {
		_, err = store.Record(context.Background(), history.Commit{Conversation: conv, Tool: "openDiff", Source: history.SourceIDE,
			Changes: []history.Change{{Op: history.Edit, Path: path, Before: []byte(before), BeforeExists: true, After: []byte(after)}}})
	}
	if err != nil {
		s.t.Fatalf("record an edit: %v", err)
	}
	entries := s.historyEntries()
	return entries[len(entries)-1].EditID
}

// initStore makes the workspace's store, so that what is recorded goes there
// whatever stray store a folder above (/tmp/.mcp) may hold.
func (s *session) initStore() {
	s.t.Helper()
	root, err := workspace.OpenRoot(s.ws)
	if err == nil {
		_, err = history.Open(root)
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

type historyEntry struct {
	EditID         string `json:"edit_id"`
	ConversationID string `json:"conversation_id"`
	Status         string `json:"status"`
	Operation      string `json:"operation"`
	FilePath       string `json:"file_path"`
	Source         string `json:"source"`
}

func (s *session) historyEntries() []historyEntry {
	s.t.Helper()
	out, err := s.command("status", "--json").Output()
	if err != nil {
		s.t.Fatalf("mcpdiff status --json: %v", err)
	}
	var entries []historyEntry
	if err := json.Unmarshal(out, &entries); err != nil {
		s.t.Fatalf("mcpdiff status --json: %v\n%s", err, out)
	}
	return entries
}

func (s *session) bufferLines(path string) []string {
	s.t.Helper()
	return luaValue[[]string](s, `return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)`, path)
}

func (s *session) waitMessage(contains string) {
	s.t.Helper()
	eventually(s.t, "a message containing "+contains, func() bool {
		for _, m := range s.messages() {
			if strings.Contains(m.Msg, contains) {
				return true
			}
		}
		return false
	})
}

func TestHistoryRejectAndAcceptCommands(t *testing.T) {
	t.Parallel()
	eachStarted(t, options{"auto_start": false}, func(t *testing.T, s *session) {
		path := s.writeFile("hello.txt", "a\n")
		id := s.recordEdit("conv_1_aa", path, "a\n", "b\n")
		s.cmd("edit " + path)

		// No ID in a file buffer: the pending edits of that file.
		s.cmd("McpDiffReject")
		eventually(t, "the file and its buffer to lose the edit", func() bool {
			return testenv.ReadFile(t, path) == "a\n" && reflect.DeepEqual(s.bufferLines(path), []string{"a"})
		})
		s.waitMessage("the pending edits of hello.txt: rejected 1 edit")

		s.cmd("McpDiffAccept " + id)
		eventually(t, "the accepted edit to come back", func() bool {
			return testenv.ReadFile(t, path) == "b\n" && reflect.DeepEqual(s.bufferLines(path), []string{"b"})
		})
		s.waitMessage(id + ": accepted 1 edit")
		if e := s.historyEntries(); len(e) != 1 || e[0].Status != "accepted" {
			t.Fatalf("history after accept: %+v", e)
		}

		// Nothing pending in the file: said so, not "accepted 0 edits"; and a file
		// with no history above it at all is not an error either.
		s.cmd("McpDiffAccept")
		s.waitMessage("the pending edits of hello.txt: none left to accept")
		// A file the history never held: said as a warning, not "accepted 0 edits".
		other := s.writeFile("other.txt", "x\n")
		s.cmd("edit " + other)
		s.cmd("McpDiffAccept")
		s.waitMessage("no edit of this history touches it")
		for _, m := range s.messages() {
			if strings.Contains(m.Msg, "other.txt") && (m.Level != 3 || strings.Contains(m.Msg, "accepted 0")) {
				t.Fatalf("message for a file without history: %+v (want a warning)", m)
			}
		}
		outside := filepath.Join(t.TempDir(), "alone.txt")
		if err := os.WriteFile(outside, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.cmd("edit " + outside)
		s.cmd("McpDiffReject")
		s.waitMessage("alone.txt: none, there is no edit history in ")
	})
}

func TestHistoryRejectAfterOutsideChange(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		for _, discard := range []bool{false, true} {
			s := startNvim(t, nv, options{"auto_start": false})
			path := s.writeFile("hello.txt", "a\n")
			s.recordEdit("conv_1_bb", path, "a\n", "b\n")
			if err := os.WriteFile(path, []byte("b\noutside\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s.cmd("edit " + path)
			s.lua(`_G.asked = nil
local answer = ...
require("mcpdiff.history").confirm = function(question) _G.asked = question; return answer end`, nil, discard)
			s.cmd("McpDiffReject")
			var asked string
			eventually(t, "the question about the outside changes", func() bool {
				s.lua(`return _G.asked or ""`, &asked)
				return asked != ""
			})
			if !strings.Contains(asked, "Discard those outside changes and reject?") {
				t.Fatalf("asked %q", asked)
			}
			if discard {
				eventually(t, "the forced reject", func() bool { return testenv.ReadFile(t, path) == "a\n" })
				eventually(t, "the buffer to reload", func() bool { return reflect.DeepEqual(s.bufferLines(path), []string{"a"}) })
			} else {
				s.waitMessage("reject cancelled: the outside changes were kept")
				if got := testenv.ReadFile(t, path); got != "b\noutside\n" {
					t.Fatalf("declined, yet the file became %q", got)
				}
			}
			s.close()
		}
	})
}

func TestStatusReview(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		info, _ := s.bridge()
		path := s.writeFile("dir/hello.txt", "a\n")
		id := s.recordEdit("conv_1_cc", path, "a\n", "b\n")
		s.cmd("McpDiffStatus")
		editLine := func() (int, []string) {
			var lines []string
			s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
			for i, l := range lines {
				if strings.HasPrefix(strings.TrimSpace(l), id[:8]) {
					return i + 1, lines
				}
			}
			return 0, lines
		}
		var lines []string
		var line int
		eventually(t, "the review buffer to list the edit", func() bool {
			line, lines = editLine()
			return line > 0
		})
		text := strings.Join(lines, "\n")
		for _, want := range []string{"Bridge: listening on 127.0.0.1:" + itoa(info.Port), "Conversation conv_1_cc (1)", "pending", "edit", "dir/hello.txt"} {
			if !strings.Contains(text, want) {
				t.Fatalf("review buffer lacks %q:\n%s", want, text)
			}
		}
		s.lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 })`, nil, line)
		s.input("r")
		eventually(t, "the edit to show as rejected", func() bool {
			l, lines := editLine()
			return l > 0 && strings.Contains(lines[l-1], "rejected")
		})
		if got := testenv.ReadFile(t, path); got != "a\n" {
			t.Fatalf("r in the review left the file %q", got)
		}
		line, _ = editLine()
		s.lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 })`, nil, line)
		s.input("<CR>")
		eventually(t, "the diff of the edit", func() bool {
			var name string
			s.lua(`return vim.api.nvim_buf_get_name(0)`, &name)
			return strings.HasSuffix(name, "mcpdiff://show/"+id)
		})
		var diff []string
		s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &diff)
		if !strings.Contains(strings.Join(diff, "\n"), "+b") {
			t.Fatalf("the diff buffer shows:\n%s", strings.Join(diff, "\n"))
		}
	})
}

func TestAcceptedDiffIsRecorded(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		s.initStore()
		path := s.writeFile("hello.txt", "hello\n")
		c.Texts(c.CallTool("closeAllDiffTabs", nil), "closeAllDiffTabs") // a new turn
		tab := tabName("hello.txt", 1)
		s.acceptWithWrite(c, path, "hello edited\n", tab)
		var entries []historyEntry
		eventually(t, "the accepted diff in the history", func() bool {
			out, err := s.command("status", "--json").Output()
			return err == nil && json.Unmarshal(out, &entries) == nil && len(entries) == 1
		})
		if e := entries[0]; e.FilePath != path || e.Source != "ide" || e.Status != "accepted" {
			t.Fatalf("recorded %+v", e)
		}
		// Accepted once: nothing pending is left to mark in the buffer.
		if hs := luaValue[[]hunk](s, `return require("mcpdiff.bridge").request("mcpdiff_changes", ...)`, path); len(hs) != 0 {
			t.Fatalf("the accepted diff still has pending hunks: %+v", hs)
		}
	})
}

// A file changed outside mcpdiff is reported by `mcpdiff status`, the review list
// (on open, and after <C-l> when the change came while it was open) and
// :checkhealth alike: as information, with the ways out, never as a warning.
func TestFileChangedOutsideIsReportedAlikeEverywhere(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		path := s.writeFile("dir/hello.txt", "a\n")
		s.recordEdit("conv_1_dd", path, "a\n", "b\n")
		want := "dir/hello.txt was changed outside mcpdiff since its last recorded state"
		restore := "`mcpdiff restore --file dir/hello.txt`"
		s.cmd("McpDiffStatus")
		s.waitListLine("Conversation conv_1_dd")
		if text := strings.Join(s.listLines(), "\n"); strings.Contains(text, "Info:") || strings.Contains(text, "Warning:") {
			t.Fatalf("the list reports a file that holds its history:\n%s", text)
		}

		// Changed by another program while the list is open: <C-l> shows it.
		if err := os.WriteFile(path, []byte("b\nby hand\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := testenv.Run(t, s.command("status"))
		if code != 0 || !strings.Contains(errOut, "mcpdiff: info: "+want) || !strings.Contains(errOut, restore) {
			t.Fatalf("status: exit %d, stderr %q", code, errOut)
		}
		s.input("<C-l>")
		line := s.listLines()[s.waitListLine("Info: "+want)-1]
		if !strings.Contains(line, restore) || strings.Contains(line, "--force") {
			t.Fatalf("the list's line: %q", line)
		}
		// Closed and opened again: still there, at once (the bridge keeps the rows).
		s.cmd("close")
		s.cmd("McpDiffStatus")
		s.waitListLine("Info: " + want)
		s.cmd("close")

		// :checkhealth names the binary by its path: no mcpdiff is on this test's PATH.
		lines := s.checkhealth()
		wantHealthInfo(t, lines, want, "`"+testenv.Binary+" restore --file dir/hello.txt`")
		for _, l := range lines {
			if strings.Contains(l, "hello.txt") && (strings.Contains(l, "WARNING") || strings.Contains(l, "ERROR")) {
				t.Fatalf(":checkhealth reports it as %q", l)
			}
		}

		// Put back by hand: gone from all three.
		if err := os.WriteFile(path, []byte("b\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, errOut, _ := testenv.Run(t, s.command("status")); errOut != "" {
			t.Fatalf("status after the file was put back: %q", errOut)
		}
		s.cmd("McpDiffStatus")
		s.waitListLine("Conversation conv_1_dd")
		eventually(t, "the list to drop the info", func() bool { return !strings.Contains(strings.Join(s.listLines(), "\n"), "Info:") })
		wantHealth(t, s.checkhealth(), "OK", []string{"every recorded file holds what its history says"})
	})
}
