//go:build unix

package nvimtest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The unsaved-buffer guard of Claude Code's PreToolUse hook (`mcpdiff hook`), against
// real Neovims: one running the plugin, found through its lock file (Claude Code in
// another terminal), and one found through $NVIM (Claude Code in Neovim's terminal).

// hookResult is what one `mcpdiff hook` process answered.
type hookResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// command runs the binary under test in the workspace, with the session's HOME and
// CLAUDE_CONFIG_DIR (where the lock files are), as Claude Code in another terminal
// would.
func (s *session) command(args ...string) *exec.Cmd {
	cmd := exec.Command(testenv.Binary, args...)
	cmd.Dir = s.ws
	cmd.Env = testenv.Env("HOME="+s.home, "CLAUDE_CONFIG_DIR="+s.config)
	return cmd
}

// runHook runs the binary under test as Claude Code runs its hook, with the
// session's HOME and CLAUDE_CONFIG_DIR (where the lock files are) and env.
func (s *session) runHook(event string, env ...string) hookResult {
	s.t.Helper()
	cmd := s.command("hook")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(event)
	start := time.Now()
	var r hookResult
	r.stdout, r.stderr, r.code = testenv.Run(s.t, cmd)
	r.took = time.Since(start)
	return r
}

// preToolUse is Claude Code's PreToolUse input for an Edit of path.
func preToolUse(cwd, path string) string { return toolUse("PreToolUse", cwd, path, "toolu_guard") }

// toolUse is Claude Code's input for event (PreToolUse or PostToolUse) of the Edit
// of path with the tool_use_id id.
func toolUse(event, cwd, path, id string) string {
	ev := map[string]any{
		"session_id": "s1", "prompt_id": "p1", "cwd": cwd, "permission_mode": "default",
		"hook_event_name": event, "tool_name": "Edit", "tool_use_id": id,
		"tool_input": map[string]any{"file_path": path, "old_string": "a", "new_string": "b"},
	}
	if event == "PostToolUse" {
		ev["tool_response"] = map[string]any{"filePath": path, "originalFile": "a\n", "structuredPatch": []any{}, "userModified": false}
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

// denied returns the reason of a deny answer, or "" when the hook did not deny.
func denied(t *testing.T, r hookResult) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("the hook exited %d (%s); the guard answers with exit 0", r.code, r.stderr)
	}
	if r.stdout == "" {
		return ""
	}
	var answer struct {
		Out struct {
			Event    string `json:"hookEventName"`
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &answer); err != nil || answer.Out.Event != "PreToolUse" || answer.Out.Decision != "deny" {
		t.Fatalf("the hook printed %q; want Claude Code's PreToolUse deny", r.stdout)
	}
	return answer.Out.Reason
}

// editUnsaved opens path in the session's Neovim and changes its buffer.
func (s *session) editUnsaved(path string) {
	s.t.Helper()
	s.cmd("edit " + path)
	s.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "typed, not saved" })`, nil)
}

func (s *session) serverName() string {
	s.t.Helper()
	return luaValue[string](s, `return vim.v.servername`)
}

func TestLockFileNamesNeovimServer(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		info := s.waitAttached()
		data, err := os.ReadFile(info.Lock)
		if err != nil {
			t.Fatal(err)
		}
		var lock struct {
			Server string `json:"nvimServer"`
		}
		if json.Unmarshal(data, &lock) != nil || lock.Server == "" || lock.Server != s.serverName() {
			t.Fatalf("lock file %s; want nvimServer %q", data, s.serverName())
		}
	})
}

// TestGuardFindsNeovimThroughLockFile: Claude Code runs in another terminal, in the
// workspace; the Neovim running mcpdiff there holds unsaved changes of a.txt.
func TestGuardFindsNeovimThroughLockFile(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		a := s.writeFile("a.txt", "a\n")
		b := s.writeFile("b.txt", "b\n")
		s.editUnsaved(a)

		reason := denied(t, s.runHook(preToolUse(s.ws, a)))
		if !strings.Contains(reason, a) || !strings.Contains(reason, "unsaved changes in Neovim") {
			t.Fatalf("deny reason %q; want the file and that it has unsaved changes in Neovim", reason)
		}
		// The refusing Neovim says so too, naming the file and the agent.
		s.waitMessage("Claude Code wanted to write " + a + ", which has unsaved changes here")
		if got := testenv.ReadFile(t, a); got != "a\n" {
			t.Fatalf("the file changed: %q", got)
		}
		var lines []string
		s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
		if len(lines) != 1 || lines[0] != "typed, not saved" {
			t.Fatalf("the buffer changed: %q", lines)
		}
		// Another file, and the same one once saved: allowed (no answer).
		if reason := denied(t, s.runHook(preToolUse(s.ws, b))); reason != "" {
			t.Fatalf("a file without unsaved changes was denied: %q", reason)
		}
		s.cmd("write")
		if reason := denied(t, s.runHook(preToolUse(s.ws, a))); reason != "" {
			t.Fatalf("a saved buffer was denied: %q", reason)
		}
		// A file outside the Neovim's workspace folders is not its business.
		outside := filepath.Join(t.TempDir(), "x.txt")
		os.WriteFile(outside, []byte("x\n"), 0o644)
		s.editUnsaved(outside)
		if reason := denied(t, s.runHook(preToolUse(filepath.Dir(outside), outside))); reason != "" {
			t.Fatalf("a Neovim was asked about a file outside its workspace: %q", reason)
		}
	})
}

// TestServeFindsNeovimThroughLockFile: `mcpdiff serve` started by an MCP client in
// another terminal (no $NVIM) asks the Neovims running mcpdiff as the hook does: a
// file one holds with unsaved changes is refused, and stays as it was; another file
// is written.
func TestServeFindsNeovimThroughLockFile(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		a := s.writeFile("a.txt", "a\n")
		b := s.writeFile("b.txt", "b\n")
		s.editUnsaved(a)
		server := testenv.StartMCP(t, testenv.MCPServer{Args: []string{"serve", "--root", s.ws}, Dir: s.ws,
			Env: append(testenv.HomeVars(s.home), "CLAUDE_CONFIG_DIR="+s.config, "NVIM=")})
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(time.Minute))
		defer cancel()
		res, err := server.Call(ctx, "edit_file", map[string]any{"path": a, "old_string": "a", "new_string": "A"})
		if err != nil || !res.IsError || len(res.Content) == 0 {
			t.Fatalf("edit_file of a file with unsaved changes in Neovim: %v %+v", err, res)
		}
		if text, _ := res.Content[0].(mcp.TextContent); !strings.Contains(text.Text, a+" has unsaved changes in the editor") {
			t.Fatalf("the refusal says %+v", res.Content[0])
		}
		if got := testenv.ReadFile(t, a); got != "a\n" {
			t.Fatalf("a.txt was written over unsaved changes: %q", got)
		}
		if res, err := server.Call(ctx, "edit_file", map[string]any{"path": b, "old_string": "b", "new_string": "B"}); err != nil || res.IsError {
			t.Fatalf("edit_file b.txt: %v %+v", err, res)
		}
		if got := testenv.ReadFile(t, b); got != "B\n" {
			t.Fatalf("b.txt holds %q", got)
		}
	})
}

// TestGuardFindsNeovimThroughNVIM: Claude Code runs in the terminal of a Neovim
// (which sets $NVIM), here one without the plugin's bridge.
func TestGuardFindsNeovimThroughNVIM(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s := newSession(t, nv)
		a := s.writeFile("a.txt", "a\n")
		s.editUnsaved(a)
		reason := denied(t, s.runHook(preToolUse(s.ws, a), "NVIM="+s.serverName()))
		if !strings.Contains(reason, "unsaved changes in Neovim") {
			t.Fatalf("deny reason %q", reason)
		}
		if reason := denied(t, s.runHook(preToolUse(s.ws, a))); reason != "" {
			t.Fatalf("without $NVIM or a lock file a Neovim was found: %q", reason)
		}
	})
}

// TestGuardBusyNeovim: a Neovim that does not answer (busy, or waiting at a prompt:
// here stopped) might hold unsaved changes; the hook gives up within its bound and
// denies, saying why.
func TestGuardBusyNeovim(t *testing.T) {
	t.Parallel()
	limit := testenv.Promised(t, 2*time.Second)
	eachStarted(t, nil, func(t *testing.T, s *session) {
		a := s.writeFile("a.txt", "a\n")
		if err := syscall.Kill(s.pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		r := s.runHook(preToolUse(s.ws, a))
		syscall.Kill(s.pid, syscall.SIGCONT)
		if r.took > limit {
			t.Fatalf("the hook took %v with Neovim not answering", r.took)
		}
		reason := denied(t, r)
		if !strings.Contains(reason, a) || !strings.Contains(reason, "busy, or waiting at a prompt") {
			t.Fatalf("deny reason %q", reason)
		}
	})
}

// TestGuardNeovimGone: a lock file whose Neovim died, and a $NVIM whose socket is
// gone, are not asked; the write goes ahead.
func TestGuardNeovimGone(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s := newSession(t, nv)
		a := s.writeFile("a.txt", "a\n")
		dead := exec.Command("true")
		dead.Run()
		lock, _ := json.Marshal(map[string]any{"pid": dead.Process.Pid, "workspaceFolders": []string{s.ws}, "ideName": "Neovim",
			"transport": "ws", "authToken": "x", "nvimServer": filepath.Join(s.home, "gone.sock")})
		os.MkdirAll(filepath.Join(s.config, "ide"), 0o700)
		os.WriteFile(filepath.Join(s.config, "ide", "1.lock"), lock, 0o600)
		r := s.runHook(preToolUse(s.ws, a), "NVIM="+filepath.Join(s.home, "also-gone.sock"))
		if reason := denied(t, r); reason != "" || r.stderr != "" {
			t.Fatalf("with no Neovim running: reason %q, stderr %q", reason, r.stderr)
		}
	})
}

// TestHookLeavesAcceptedDiffsToTheBridge: Claude Code in its manual mode shows an
// edit as an openDiff; the user accepts it in Neovim, Claude Code writes the file and
// runs its PostToolUse hook. The bridge records that write (accepted, source ide);
// the hook, having asked the Neovim, does not. Every other write the hook records.
func TestHookLeavesAcceptedDiffsToTheBridge(t *testing.T) {
	t.Parallel()
	limit := testenv.Promised(t, 2*time.Second)
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		s.initStore()
		c.Texts(c.CallTool("closeAllDiffTabs", nil), "closeAllDiffTabs") // a new turn
		entriesOf := func(path string) []historyEntry {
			var out []historyEntry
			for _, e := range s.historyEntries() {
				if e.FilePath == path {
					out = append(out, e)
				}
			}
			return out
		}
		hook := func(event, path, id string) hookResult {
			t.Helper()
			r := s.runHook(toolUse(event, s.ws, path, id))
			if r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Fatalf("%s of %s: exit %d, stdout %q, stderr %q", event, path, r.code, r.stdout, r.stderr)
			}
			return r
		}

		subtest(t, s, c, "accepted in Neovim", func(t *testing.T) {
			path := s.writeFile("accepted.txt", "a\n")
			hook("PreToolUse", path, "toolu_accepted")
			// Changed before the diff opens, so that a record by the hook could not pass
			// for the bridge's (the history merges only records of the same change).
			testenv.WriteFile(t, path, "a, changed\n")
			s.acceptWithWrite(c, path, "b\n", tabName("accepted.txt", 1))
			hook("PostToolUse", path, "toolu_accepted")
			var got []historyEntry
			eventually(t, "the bridge's record", func() bool { got = entriesOf(path); return len(got) > 0 })
			if len(got) != 1 || got[0].Source != "ide" || got[0].Status != "accepted" {
				t.Fatalf("the history holds %+v; want one entry, source ide, accepted", got)
			}
			if left, _ := os.ReadDir(filepath.Join(s.ws, ".mcp", "edit_history", "hooks")); len(left) != 0 {
				t.Fatalf("the PreToolUse state was left behind: %v", left)
			}
		})

		subtest(t, s, c, "written without a diff", func(t *testing.T) {
			path := s.writeFile("auto.txt", "a\n")
			hook("PreToolUse", path, "toolu_auto")
			testenv.WriteFile(t, path, "b\n") // Claude Code's auto mode writes at once
			hook("PostToolUse", path, "toolu_auto")
			if got := entriesOf(path); len(got) != 1 || got[0].Source != "claude-code" || got[0].Status != "pending" {
				t.Fatalf("the history holds %+v; want the hook's entry, pending", got)
			}
		})

		subtest(t, s, c, "another text than the accepted one", func(t *testing.T) {
			path := s.writeFile("other.txt", "a\n")
			tab := tabName("other.txt", 2)
			hook("PreToolUse", path, "toolu_other")
			answer := c.OpenDiff(path, "b\n", tab)
			s.waitViews(1)
			s.cmd("w")
			c.Texts(answer, "openDiff")
			c.Texts(c.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab")
			testenv.WriteFile(t, path, "c\n")
			hook("PostToolUse", path, "toolu_other")
			if got := entriesOf(path); len(got) != 1 || got[0].Source != "claude-code" || got[0].Status != "pending" {
				t.Fatalf("the history holds %+v; want the hook's entry of the write it saw", got)
			}
		})

		subtest(t, s, c, "Neovim not answering", func(t *testing.T) {
			path := s.writeFile("busy.txt", "a\n")
			hook("PreToolUse", path, "toolu_busy")
			testenv.WriteFile(t, path, "b\n")
			if err := syscall.Kill(s.pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			r := s.runHook(toolUse("PostToolUse", s.ws, path, "toolu_busy"))
			syscall.Kill(s.pid, syscall.SIGCONT)
			if r.code != 0 || r.stdout != "" || r.took > limit {
				t.Fatalf("PostToolUse with Neovim stopped: exit %d, stdout %q, stderr %q, took %v", r.code, r.stdout, r.stderr, r.took)
			}
			if got := entriesOf(path); len(got) != 1 || got[0].Source != "claude-code" {
				t.Fatalf("the history holds %+v; want the hook's entry", got)
			}
		})
	})
}
