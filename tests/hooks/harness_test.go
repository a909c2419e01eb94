// Package hooks holds the end-to-end tests of `mcpdiff hook` and `mcpdiff hooks`: the
// binary runs as Claude Code runs it, one process per hook event with the event on
// stdin, against real files in temp folders; many at once, killed halfway, or
// facing a locked or read-only store. (The real Claude Code CLI drives the same
// binary in tests/claude.)
package hooks

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Suite{}) }

// ws is a temp workspace; HOME and CLAUDE_CONFIG_DIR point into it, so no real
// settings or lock files are read.
type ws struct {
	testenv.Dir
	t   *testing.T
	dir string
	env []string
}

func newWS(t *testing.T) *ws {
	t.Helper()
	base := testenv.TempDir(t)
	w := &ws{t: t, dir: filepath.Join(base, "project")}
	w.Dir = testenv.Dir{TB: t, Root: w.dir}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = testenv.Env("HOME="+filepath.Join(base, "home"), "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"))
	return w
}

// event is a hook input as Claude Code 2.1.330 sends it (see
// internal/agenthooks/testdata for recorded ones).
func (w *ws) event(name, session, prompt, toolUseID, rel string) string {
	ev := map[string]any{
		"session_id": session, "transcript_path": "/dev/null", "cwd": w.dir, "prompt_id": prompt,
		"permission_mode": "auto", "hook_event_name": name, "tool_name": "Edit", "tool_use_id": toolUseID,
		"tool_input": map[string]any{"file_path": w.Path(rel), "old_string": "a", "new_string": "b", "replace_all": false},
	}
	if name == "PostToolUse" {
		ev["tool_response"] = map[string]any{"filePath": w.Path(rel), "originalFile": "a\n", "structuredPatch": []any{}, "userModified": false}
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

// hook runs `mcpdiff hook` with input on stdin.
func (w *ws) hook(input string, env ...string) (stdout, stderr string, code int) {
	cmd := w.command(env, "hook")
	cmd.Stdin = strings.NewReader(input)
	return testenv.Run(w.t, cmd)
}

func (w *ws) command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(testenv.Binary, args...)
	cmd.Dir = w.dir
	cmd.Env = append(append([]string{}, w.env...), env...)
	return cmd
}

// edit runs one Edit as Claude Code does: PreToolUse, the write, PostToolUse.
func (w *ws) edit(session, prompt, toolUseID, rel, after string) {
	w.t.Helper()
	if out, errOut, code := w.hook(w.event("PreToolUse", session, prompt, toolUseID, rel)); code != 0 || out != "" {
		w.t.Errorf("PreToolUse of %s: exit %d, stdout %q, stderr %q", rel, code, out, errOut)
		return
	}
	w.Write(rel, after)
	if out, errOut, code := w.hook(w.event("PostToolUse", session, prompt, toolUseID, rel)); code != 0 || out != "" {
		w.t.Errorf("PostToolUse of %s: exit %d, stdout %q, stderr %q", rel, code, out, errOut)
	}
}

// store opens the workspace's edit history.
func (w *ws) store() *history.Store {
	w.t.Helper()
	return testenv.OpenStore(w.t, w.dir)
}

func (w *ws) entries() []*history.Entry {
	w.t.Helper()
	return testenv.Entries(w.t, w.dir)
}
