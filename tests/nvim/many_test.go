//go:build unix

package nvimtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Many Neovims in one project (SPEC section 13): each is told apart in Claude Code's
// /ide list, `claude --ide` finds exactly one of them, each guards its unsaved
// buffers, and an edit history removed and made again while they run is followed at
// once, as the user's.

// hookEdit has Claude Code's hooks record an Edit of path that replaces old with
// new, as in auto mode, without making the store first: the hook makes it when
// there is none (SPEC section 7).
func (s *session) hookEdit(path, old, new, prompt string) {
	s.t.Helper()
	s.agentCalls++
	before := testenv.ReadFile(s.t, path)
	if !strings.Contains(before, old) {
		s.t.Fatalf("%s does not hold %q", path, old)
	}
	event := func(name string) string {
		b, _ := json.Marshal(map[string]any{
			"session_id": "s1", "prompt_id": prompt, "cwd": s.ws, "permission_mode": "auto",
			"hook_event_name": name, "tool_name": "Edit", "tool_use_id": fmt.Sprintf("toolu_h%d", s.agentCalls),
			"tool_input":    map[string]any{"file_path": path, "old_string": old, "new_string": new},
			"tool_response": map[string]any{"filePath": path, "oldString": old, "newString": new, "originalFile": before},
		})
		return string(b)
	}
	if r := s.runHook(event("PreToolUse")); r.code != 0 || r.stdout != "" {
		s.t.Fatalf("PreToolUse: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(before, old, new, 1)), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if r := s.runHook(event("PostToolUse")); r.code != 0 || r.stderr != "" {
		s.t.Fatalf("PostToolUse: exit %d, %q", r.code, r.stderr)
	}
}

// luaErrors are the errors Neovim reported since the last call (v:errmsg), which a
// failing scheduled callback of the plugin sets.
func (s *session) luaErrors() string {
	s.t.Helper()
	return luaValue[string](s, `local e = vim.v.errmsg; vim.v.errmsg = ""; return e`)
}

// .mcp removed while two Neovims show its history: the signs go and the review list
// says there is no history, without a Lua error. The next agent edit makes a new
// store: it is the user's (not "not yours"), and its edit shows at once in both
// Neovims' signs and the list, and is decided from there.
func TestStoreRemovedAndMadeAgain(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		other := s.another(nil)
		path := s.writeFile("a.txt", "one\ntwo\nthree\nfour\n")
		s.cmd("edit " + path)
		other.cmd("edit " + path)
		s.hookEdit(path, "two", "TWO", "p1")
		for _, n := range []*session{s, other} {
			n.waitBuffer(path, "one\nTWO\nthree\nfour\n")
			n.waitHunks(path, "change 2-2", "2:McpDiffChange")
		}
		s.cmd("McpDiffStatus")
		first := s.historyEntries()[0].EditID
		s.waitListLine(first[:8], "pending", "a.txt")
		s.luaErrors()

		if err := os.RemoveAll(filepath.Join(s.ws, ".mcp")); err != nil {
			t.Fatal(err)
		}
		s.waitListLine("No agent edits recorded in " + s.ws)
		s.waitHunks(path, "", "")
		other.waitHunks(path, "", "")
		if e := s.luaErrors(); e != "" {
			t.Fatalf("removing .mcp gave the error %q", e)
		}

		s.hookEdit(path, "four", "FOUR", "p2")
		second := s.historyEntries()[0].EditID
		s.waitListLine(second[:8], "pending", "a.txt")
		for _, n := range []*session{s, other} {
			n.waitBuffer(path, "one\nTWO\nthree\nFOUR\n")
			n.waitHunks(path, "change 4-4", "4:McpDiffChange")
		}
		if text := strings.Join(s.listLines(), "\n"); strings.Contains(text, "not yours") || strings.Contains(text, first[:8]) {
			t.Fatalf("the new store is listed as foreign, or the old edit is still there:\n%s", text)
		}
		// A decision from the list acts on the new store.
		s.cursorTo(s.waitListLine(second[:8]))
		s.input("r")
		s.waitListLine(second[:8], "rejected")
		for _, n := range []*session{s, other} {
			n.waitBuffer(path, "one\nTWO\nthree\nfour\n")
			n.waitHunks(path, "", "")
			if e := n.luaErrors(); e != "" {
				t.Fatalf("the new store gave the error %q", e)
			}
		}
	})
}

// another starts one more Neovim with the plugin in s's workspace, with its HOME and
// Claude Code config (so their lock files lie side by side), and waits until its
// bridge has written its lock file.
func (s *session) another(opts options) *session {
	s.t.Helper()
	o := &session{t: s.t, nvim: s.nvim, home: s.home, config: s.config, ws: s.ws}
	env := testenv.Env(append(testenv.HomeVars(o.home), "CLAUDE_CONFIG_DIR="+o.config, "TERM=xterm-256color")...)
	o.v = testenv.EmbedNeovim(s.t, o.nvim, o.ws, env, "-u", "NONE")
	if err := o.v.Call("getpid", &o.pid); err != nil {
		s.t.Fatalf("getpid: %v", err)
	}
	s.t.Cleanup(o.close)
	o.setup(opts)
	o.waitAttached()
	return o
}

// waitLock waits until s's lock file has this ideName and these workspaceFolders.
func (s *session) waitLock(what, name string, folders ...string) {
	s.t.Helper()
	lock := s.waitAttached().Lock
	var got lockFile
	defer func() {
		if s.t.Failed() {
			s.t.Logf("the lock file of Neovim %d: %+v", s.pid, got)
		}
	}()
	eventually(s.t, what, func() bool {
		got = readLock(s.t, lock)
		return got.IDEName == name && reflect.DeepEqual(got.WorkspaceFolders, folders)
	})
}

// Two Neovims in one project are told apart in Claude Code's /ide list (their lock
// files' ideName: the file each has open and its pid), and exactly one lock file
// lists the project folder, which `claude --ide` connects to: the Neovim started or
// focused last. The other lists the file it has open there ("[No Name]" before it
// opened one). Once one quits, the other is alone again.
func TestTwoNeovimsInOneProjectAreToldApart(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, a *session) {
		main := a.writeFile("main.go", "package main\n")
		a.cmd("edit " + main)
		a.waitLock("the lock file of a Neovim alone", "Neovim", a.ws)

		b := a.another(nil)
		a.waitLock("the older Neovim to give the project up", fmt.Sprintf("Neovim (main.go, pid %d)", a.pid), main)
		b.waitLock("the newer Neovim to hold it", fmt.Sprintf("Neovim (pid %d)", b.pid), b.ws)
		wantHealthInfo(t, a.checkhealth(), "1 other Neovim(s) run mcpdiff in this project",
			fmt.Sprintf(`/ide names this one "Neovim (main.go, pid %d)"`, a.pid), "connects to another one")
		a.cmd("tabclose")

		a.cmd("doautocmd FocusGained") // the user went back to the first one
		a.waitLock("the focused Neovim to take the project", fmt.Sprintf("Neovim (main.go, pid %d)", a.pid), a.ws)
		b.waitLock("the other, without a file, to list a name no folder has",
			fmt.Sprintf("Neovim (pid %d)", b.pid), filepath.Join(b.ws, "[No Name]"))
		wantHealthInfo(t, a.checkhealth(), "connects to this one")
		a.cmd("tabclose")
		readme := b.writeFile("README.md", "# p\n")
		b.cmd("edit " + readme)
		b.waitLock("the other's lock file to follow its buffer", fmt.Sprintf("Neovim (README.md, pid %d)", b.pid), readme)

		// In a subfolder, the other gives it up whenever it was used: a cwd there would
		// find both, and the outer folder serves it too.
		sub := filepath.Join(b.ws, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		b.cmd("cd " + sub)
		b.cmd("doautocmd FocusGained")
		b.waitLock("a Neovim in a subfolder of another's", fmt.Sprintf("Neovim (%s, pid %d)", readme, b.pid), filepath.Join(sub, "[No Name]"))
		a.waitLock("the outer one to keep its folder", fmt.Sprintf("Neovim (main.go, pid %d)", a.pid), a.ws)

		b.close()
		a.waitLock("the first Neovim alone again", "Neovim", a.ws)
	})
}

// Each of two Neovims in one project guards its unsaved buffers: Claude Code's
// PreToolUse hook asks both, whichever lists the project in its lock file, and when
// they disagree about a file (one holds it with unsaved changes, the other as it
// is on disk), the one with unsaved changes wins.
func TestEachOfTwoNeovimsGuardsItsUnsavedBuffers(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, a *session) {
		x, y, z := a.writeFile("x.txt", "x\n"), a.writeFile("y.txt", "y\n"), a.writeFile("z.txt", "z\n")
		b := a.another(nil)
		a.editUnsaved(x)
		b.cmd("set hidden")
		b.cmd("edit " + x) // as it is on disk
		b.editUnsaved(y)
		// The one that gave the project up shows another file: its lock file tells
		// Claude Code of that one only.
		a.cmd("set hidden")
		a.cmd("edit " + z)
		a.waitLock("the older Neovim to give the project up", fmt.Sprintf("Neovim (z.txt, pid %d)", a.pid), z)
		for _, c := range []struct {
			path string
			in   *session
		}{{x, a}, {y, b}} {
			reason := denied(t, a.runHook(preToolUse(a.ws, c.path)))
			if !strings.Contains(reason, c.path) || !strings.Contains(reason, "unsaved changes in Neovim") {
				t.Fatalf("the hook's answer for %s (unsaved in Neovim %d): %q", c.path, c.in.pid, reason)
			}
			c.in.waitMessage("Claude Code wanted to write " + c.path + ", which has unsaved changes here")
		}
		if got := testenv.ReadFile(t, x); got != "x\n" || strings.Join(b.bufferLines(x), "\n") != "x" {
			t.Fatalf("x.txt holds %q, its unmodified buffer %q", got, b.bufferLines(x))
		}
	})
}
