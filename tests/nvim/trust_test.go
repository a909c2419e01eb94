//go:build unix

package nvimtest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// A decision never fights the user's own work, and every surface tells the same
// truth: decisions from the shell refuse files a Neovim holds with unsaved changes,
// and a save in Neovim is the user's edit. The history is made as agents make it:
// Claude Code's hooks (`mcpdiff hook`) around each write.

// agentEdit has Claude Code's hooks record a write of after to path, as in auto
// mode: PreToolUse keeps the file, the tool writes it, PostToolUse records it, in
// the conversation of prompt. It returns the new entry's edit id.
func (s *session) agentEdit(path, after, prompt string) string {
	s.t.Helper()
	s.initStore()
	s.agentCalls++
	event := func(name string) string {
		b, _ := json.Marshal(map[string]any{
			"session_id": "s1", "prompt_id": prompt, "cwd": s.ws, "permission_mode": "auto",
			"hook_event_name": name, "tool_name": "Edit", "tool_use_id": fmt.Sprintf("toolu_%d", s.agentCalls),
			"tool_input":    map[string]any{"file_path": path, "old_string": "x", "new_string": "y"},
			"tool_response": map[string]any{"filePath": path},
		})
		return string(b)
	}
	before := len(s.historyEntries())
	if r := s.runHook(event("PreToolUse")); r.code != 0 || r.stdout != "" {
		s.t.Fatalf("PreToolUse: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if r := s.runHook(event("PostToolUse")); r.code != 0 {
		s.t.Fatalf("PostToolUse: exit %d, %q", r.code, r.stderr)
	}
	entries := s.historyEntries()
	if len(entries) != before+1 {
		s.t.Fatalf("the hooks recorded %d entries, want 1", len(entries)-before)
	}
	return entries[len(entries)-1].EditID
}

// historyJSON is `mcpdiff status --json` as it comes: the history a refused
// decision must leave as it was.
func (s *session) historyJSON() string {
	s.t.Helper()
	out, err := s.command("status", "--json").Output()
	if err != nil {
		s.t.Fatalf("status --json: %v", err)
	}
	return string(out)
}

// Every decision from the shell that would write a file a Neovim running mcpdiff
// holds with unsaved changes is refused: exit 1, naming the file and what to do,
// the file, the buffer and the history untouched. Once the buffer is saved, the
// decision goes ahead and the open buffer follows the file.
func TestShellDecisionsRefuseFilesWithUnsavedChanges(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		v0 := numberedLines(6)
		path := s.writeFile("a.txt", v0)
		v1 := replaceLines(v0, map[int]string{3: "three"})
		e1 := s.agentEdit(path, v1, "p1")
		v2 := replaceLines(v1, map[int]string{3: "THREE", 5: "five"})
		e2 := s.agentEdit(path, v2, "p2") // changes e1's line: rejecting e1 needs --with-later
		v3 := replaceLines(v2, map[int]string{6: "six"})
		e3 := s.agentEdit(path, v3, "p3")
		if out, code := s.cli("reject", e3); code != 0 {
			t.Fatalf("reject %s: %s", e3, out)
		}
		s.cmd("edit " + path)
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine, not saved" })`, nil)
		onDisk, history := testenv.ReadFile(t, path), s.historyJSON()
		conv2 := s.historyEntries()[1].ConversationID

		for _, args := range [][]string{
			{"reject", e2},
			{"reject", e1, "--with-later"},
			{"reject", "--conv", conv2},
			{"reject", "--file", "a.txt"},
			{"reject", "--file", "a.txt", "--lines", "5"},
			{"reject", e2 + ":1"},
			{"accept", e3, "--json"}, // a rejected edit comes back: the file is rewritten
		} {
			stdout, stderr, code := testenv.Run(t, s.command(args...))
			if code != 1 {
				t.Fatalf("%v: exit %d, want 1 (refused)\n%s%s", args, code, stdout, stderr)
			}
			msg := stderr
			if args[len(args)-1] == "--json" {
				var res struct{ Kind, Message string }
				if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Kind != "unsaved" {
					t.Fatalf("%v: %q", args, stdout)
				}
				msg = res.Message
			}
			if !strings.Contains(msg, "a.txt has unsaved changes in Neovim: save (:w) or discard (:e!) them in Neovim first") {
				t.Fatalf("%v: the refusal says %q", args, msg)
			}
			if testenv.ReadFile(t, path) != onDisk || s.historyJSON() != history {
				t.Fatalf("%v: a refused decision changed the file or the history", args)
			}
		}
		// restore, which discards a change made outside mcpdiff, too.
		if err := os.WriteFile(path, []byte(onDisk+"by another program\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, code := s.cli("restore", "--file", "a.txt", "--yes"); code != 1 || !strings.Contains(out, "a.txt has unsaved changes in Neovim") {
			t.Fatalf("restore --yes: exit %d\n%s", code, out)
		}
		if testenv.ReadFile(t, path) != onDisk+"by another program\n" {
			t.Fatal("a refused restore changed the file")
		}
		if err := os.WriteFile(path, []byte(onDisk), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := s.bufferLines(path); got[0] != "mine, not saved" {
			t.Fatalf("the buffer lost its unsaved changes: %q", got)
		}

		// The review list's keys go through the same check.
		s.cmd("McpDiffStatus")
		s.cursorTo(s.waitListLine(e2[:8], "pending"))
		s.input("r")
		s.waitMessage("a.txt has unsaved changes in Neovim")
		s.cmd("close")

		// Discarded in Neovim: the decision goes ahead and the buffer shows the result.
		s.cmd("edit!")
		if out, code := s.cli("reject", e2); code != 0 {
			t.Fatalf("reject once the buffer is clean: %s", out)
		}
		if got := testenv.ReadFile(t, path); got != v1 {
			t.Fatalf("after the reject the file holds %q, want %q", got, v1)
		}
		s.waitBuffer(path, v1)
	})
}

// A Neovim started in a subfolder of the project (here moved there by :cd, which
// its lock file follows) edits the project's other files too: a decision from the
// shell and an agent's write both ask it about them.
func TestNeovimInASubfolderIsAsked(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		v0 := numberedLines(4)
		path := s.writeFile("a.txt", v0)
		e1 := s.agentEdit(path, replaceLines(v0, map[int]string{2: "two"}), "p1")
		s.cdToSubfolder(s.waitAttached().Lock)
		s.cmd("edit ../a.txt")
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine, not saved" })`, nil)
		onDisk, history := testenv.ReadFile(t, path), s.historyJSON()

		if out, code := s.cli("reject", e1); code != 1 || !strings.Contains(out, "a.txt has unsaved changes in Neovim") {
			t.Fatalf("reject: exit %d\n%s", code, out)
		}
		if testenv.ReadFile(t, path) != onDisk || s.historyJSON() != history {
			t.Fatal("a refused decision changed the file or the history")
		}
		pre, _ := json.Marshal(map[string]any{
			"session_id": "s1", "cwd": s.ws, "permission_mode": "auto", "hook_event_name": "PreToolUse",
			"tool_name": "Edit", "tool_use_id": "toolu_sub", "tool_input": map[string]any{"file_path": path, "old_string": "x", "new_string": "y"},
		})
		if r := s.runHook(string(pre)); r.code != 0 || !strings.Contains(r.stdout, `"deny"`) || !strings.Contains(r.stdout, "unsaved changes in Neovim") {
			t.Fatalf("PreToolUse: exit %d, %q %q; want a deny", r.code, r.stdout, r.stderr)
		}
		if got := s.bufferLines(path); got[0] != "mine, not saved" {
			t.Fatalf("the buffer lost its unsaved changes: %q", got)
		}
	})
}

// A Neovim that does not answer within a second (busy, or waiting at a prompt:
// here stopped) does not block a decision from the shell, which says so.
func TestShellDecisionGoesOnWhenNeovimDoesNotAnswer(t *testing.T) {
	t.Parallel()
	limit := testenv.Promised(t, 2*time.Second)
	eachStarted(t, nil, func(t *testing.T, s *session) {
		v0 := numberedLines(4)
		path := s.writeFile("a.txt", v0)
		e1 := s.agentEdit(path, replaceLines(v0, map[int]string{2: "two"}), "p1")
		s.cmd("edit " + path)
		if err := syscall.Kill(s.pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		stdout, stderr, code := testenv.Run(t, s.command("reject", e1))
		took := time.Since(began)
		syscall.Kill(s.pid, syscall.SIGCONT)
		if code != 0 || !strings.Contains(stderr, "did not answer within 1s whether it has unsaved changes of "+path) {
			t.Fatalf("reject with Neovim stopped: exit %d\n%s%s", code, stdout, stderr)
		}
		if took > limit {
			t.Fatalf("the reject took %v with Neovim not answering", took)
		}
		if testenv.ReadFile(t, path) != v0 {
			t.Fatal("the reject did not go ahead")
		}
		s.waitBuffer(path, v0) // once Neovim runs again, it follows the store
	})
}

// From the shell of a Neovim without the bridge ($NVIM), a decision asks that
// Neovim too, and its open unmodified buffer is reloaded at once.
func TestShellDecisionAsksTheNeovimOfItsTerminal(t *testing.T) {
	t.Parallel()
	eachStarted(t, options{"auto_start": false}, func(t *testing.T, s *session) {
		v0 := numberedLines(4)
		path := s.writeFile("a.txt", v0)
		e1 := s.agentEdit(path, replaceLines(v0, map[int]string{2: "two"}), "p1")
		s.cmd("edit " + path)
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine" })`, nil)
		cmd := s.command("reject", e1)
		cmd.Env = append(cmd.Env, "NVIM="+s.serverName())
		if _, stderr, code := testenv.Run(t, cmd); code != 1 || !strings.Contains(stderr, "a.txt has unsaved changes in Neovim") {
			t.Fatalf("reject: exit %d, %q", code, stderr)
		}
		s.cmd("edit!")
		cmd = s.command("reject", e1)
		cmd.Env = append(cmd.Env, "NVIM="+s.serverName())
		if _, stderr, code := testenv.Run(t, cmd); code != 0 {
			t.Fatalf("reject: exit %d, %q", code, stderr)
		}
		// Reloaded by the CLI itself: no bridge runs to follow the store.
		if got := strings.Join(s.bufferLines(path), "\n") + "\n"; got != v0 {
			t.Fatalf("the buffer holds %q after the reject, want %q", got, v0)
		}
	})
}

// A save in a Neovim running mcpdiff is the user's edit: recorded at once (source
// user, accepted), never reported as a change made outside mcpdiff, and kept when
// the agent's edit under it is rejected.
func TestSaveInNeovimIsTheUsersEdit(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		v0 := numberedLines(6)
		path := s.writeFile("a.txt", v0)
		v1 := replaceLines(v0, map[int]string{2: "two"})
		agent := s.agentEdit(path, v1, "p1")
		other := s.writeFile("other.txt", "no history\n")

		s.cmd("edit " + path)
		s.waitBuffer(path, v1)
		s.lua(`vim.api.nvim_buf_set_lines(0, 4, 5, false, { "five, mine" })`, nil)
		s.cmd("write")
		var entries []historyEntry
		eventually(t, "the save in the history", func() bool {
			entries = s.historyEntries()
			return len(entries) == 2
		})
		e := entries[1]
		if e.Source != "user" || e.Status != "accepted" || e.FilePath != path || !strings.HasPrefix(e.ConversationID, "user_") {
			t.Fatalf("the save is recorded as %+v", e)
		}
		if _, stderr, code := testenv.Run(t, s.command("status")); code != 0 || stderr != "" {
			t.Fatalf("status after the save: exit %d, %q", code, stderr)
		}
		s.cmd("McpDiffStatus")
		s.waitListLine(e.EditID[:8], "accepted", "save", "a.txt")
		if text := strings.Join(s.listLines(), "\n"); strings.Contains(text, "Info:") || strings.Contains(text, "Warning:") {
			t.Fatalf("the list reports the saved file:\n%s", text)
		}
		s.cmd("close")
		wantHealth(t, s.checkhealth(), "OK", []string{"every recorded file holds what its history says"})

		// Saving again without a change, and saving a file without history: nothing.
		s.cmd("edit " + path)
		s.cmd("write")
		s.cmd("edit " + other)
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, -1, false, { "changed" })`, nil)
		s.cmd("write")
		s.cmd("edit " + path)

		// Rejecting the agent's edit keeps the user's.
		if out, code := s.cli("reject", agent); code != 0 {
			t.Fatalf("reject the agent's edit: %s", out)
		}
		want := replaceLines(v0, map[int]string{5: "five, mine"})
		if got := testenv.ReadFile(t, path); got != want {
			t.Fatalf("after rejecting the agent's edit: %q, want %q", got, want)
		}
		s.waitBuffer(path, want)
		if n := len(s.historyEntries()); n != 2 {
			t.Fatalf("%d entries, want the agent's and the save", n)
		}
	})
}
