//go:build unix

package nvimtest

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// recordEdit records, in the session's workspace, that path went from before to
// after (already on disk) in conversation conv, and returns the edit id.
func (s *session) recordEdit(conv, path, before, after string) string {
	s.t.Helper()
	if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.initStore()
	rec := history.NewDiffRecorder([]string{s.ws})
	if err := rec.RecordAccepted(conv, path, []byte(before), true, []byte(after)); err != nil {
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
	})
}

func TestHistoryRejectAfterOutsideChange(t *testing.T) {
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
		if e := entries[0]; e.FilePath != path || e.Source != "ide" || e.Status != "pending" {
			t.Fatalf("recorded %+v", e)
		}
	})
}

// A file that differs from its history is reported by the review list and by
// :checkhealth, with the way out.
func TestFileThatDiffersFromItsHistoryIsReported(t *testing.T) {
	eachStarted(t, options{"auto_start": false}, func(t *testing.T, s *session) {
		path := s.writeFile("dir/hello.txt", "a\n")
		s.recordEdit("conv_1_dd", path, "a\n", "b\n")
		if err := os.WriteFile(path, []byte("b\nby hand\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want := "dir/hello.txt differs from its recorded state"
		s.cmd("McpDiffStatus")
		var lines []string
		eventually(t, "the review list to warn about the file", func() bool {
			s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
			return strings.Contains(strings.Join(lines, "\n"), "Conversation conv_1_dd")
		})
		text := strings.Join(lines, "\n")
		if !strings.Contains(text, "Warning: "+want) || !strings.Contains(text, "mcpdiff accept --force --file dir/hello.txt") {
			t.Fatalf("the review list does not warn about the file:\n%s", text)
		}
		s.cmd("checkhealth mcpdiff")
		s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
		text = strings.Join(lines, "\n")
		if !strings.Contains(text, want) || !strings.Contains(text, "WARNING") {
			t.Fatalf(":checkhealth mcpdiff does not warn about the file:\n%s", text)
		}
	})
}
