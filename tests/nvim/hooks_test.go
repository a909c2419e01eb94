//go:build unix

package nvimtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
func preToolUse(cwd, path string) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": "s1", "prompt_id": "p1", "cwd": cwd, "permission_mode": "auto",
		"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "toolu_guard",
		"tool_input": map[string]any{"file_path": path, "old_string": "a", "new_string": "b"},
	})
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

// TestGuardFindsNeovimThroughNVIM: Claude Code runs in the terminal of a Neovim
// (which sets $NVIM), here one without the plugin's bridge.
func TestGuardFindsNeovimThroughNVIM(t *testing.T) {
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
	start := time.Now()
	exec.Command(testenv.Binary, "version").Run()
	startup := time.Since(start) // a -race build takes a second to start
	eachStarted(t, nil, func(t *testing.T, s *session) {
		a := s.writeFile("a.txt", "a\n")
		if err := syscall.Kill(s.pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		r := s.runHook(preToolUse(s.ws, a))
		syscall.Kill(s.pid, syscall.SIGCONT)
		if r.took > 2*time.Second+startup {
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
