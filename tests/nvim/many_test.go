//go:build unix

package nvimtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	before := testReadFile(s.t, path)
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

func testReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// luaErrors are the errors Neovim reported since the last call (v:errmsg), which a
// failing scheduled callback of the plugin sets.
func (s *session) luaErrors() string {
	s.t.Helper()
	return luaValue[string](s, `local e = vim.v.errmsg; vim.v.errmsg = ""; return e`)
}

// .mcp removed while Neovim shows its history: the signs go and the review list says
// there is no history, without a Lua error. The next agent edit makes a new store:
// it is the user's (not "not yours"), and its edit shows at once in the signs and
// the list, and is decided from there.
func TestStoreRemovedAndMadeAgain(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		path := s.writeFile("a.txt", "one\ntwo\nthree\nfour\n")
		s.cmd("edit " + path)
		s.hookEdit(path, "two", "TWO", "p1")
		s.waitBuffer(path, "one\nTWO\nthree\nfour\n")
		s.waitHunks(path, "change 2-2", "2:McpDiffChange")
		s.cmd("McpDiffStatus")
		first := s.historyEntries()[0].EditID
		s.waitListLine(first[:8], "pending", "a.txt")
		s.luaErrors()

		if err := os.RemoveAll(filepath.Join(s.ws, ".mcp")); err != nil {
			t.Fatal(err)
		}
		s.waitListLine("No agent edits recorded in " + s.ws)
		s.waitHunks(path, "", "")
		if e := s.luaErrors(); e != "" {
			t.Fatalf("removing .mcp gave the error %q", e)
		}

		s.hookEdit(path, "four", "FOUR", "p2")
		second := s.historyEntries()[0].EditID
		s.waitListLine(second[:8], "pending", "a.txt")
		s.waitBuffer(path, "one\nTWO\nthree\nFOUR\n")
		s.waitHunks(path, "change 4-4", "4:McpDiffChange")
		if text := strings.Join(s.listLines(), "\n"); strings.Contains(text, "not yours") || strings.Contains(text, first[:8]) {
			t.Fatalf("the new store is listed as foreign, or the old edit is still there:\n%s", text)
		}
		// A decision from the list acts on the new store.
		s.cursorTo(s.waitListLine(second[:8]))
		s.input("r")
		s.waitListLine(second[:8], "rejected")
		s.waitBuffer(path, "one\nTWO\nthree\nfour\n")
		s.waitHunks(path, "", "")
		if e := s.luaErrors(); e != "" {
			t.Fatalf("the new store gave the error %q", e)
		}
	})
}
