//go:build unix

package claude

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The unit tests of internal/agenthooks replay hook inputs recorded from the real
// CLI. TestCaptureHookFixtures records them again (after a Claude Code upgrade), with
// the switch that updates every golden file:
//
//	UPDATE_SNAPSHOTS=1 go test ./tests/claude -run TestCaptureHookFixtures
//
// Claude Code runs this test binary as its hook; the binary saves each input (paths
// replaced by placeholders) and, after each write, the file's bytes.

const (
	captureEnv       = "MCPDIFF_CAPTURE_HOOK_DIR"
	captureWSEnv     = "MCPDIFF_CAPTURE_WS"
	captureConfigEnv = "MCPDIFF_CAPTURE_CONFIG"
	captureHomeEnv   = "MCPDIFF_CAPTURE_HOME"
)

// The placeholders the fixtures hold instead of the temporary folders.
const (
	fixtureWS     = "/WORKSPACE"
	fixtureConfig = "/CLAUDE_CONFIG"
	fixtureHome   = "/HOME"
)

// fixtureFiles are the workspace's files when the scenario starts.
var fixtureFiles = map[string]string{
	"a.txt":    "one\ntwo\nthree\n",
	"b.txt":    "alpha\nbeta\n",
	"crlf.txt": "x\r\ny\r\n",
	"n.ipynb": `{"cells":[{"cell_type":"code","id":"c1","metadata":{},"source":["print(1)\n"],"outputs":[],"execution_count":null}],` +
		`"metadata":{"language_info":{"name":"python"}},"nbformat":4,"nbformat_minor":5}` + "\n",
}

func TestCaptureHookFixtures(t *testing.T) {
	t.Parallel()
	if !testenv.Updating() {
		t.Skip("records hook fixtures: set UPDATE_SNAPSHOTS=1")
	}
	requireTools(t)
	out := filepath.Join(repoRoot, "internal", "agenthooks", "testdata", "session")
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	for name, content := range fixtureFiles {
		for _, dir := range []string{w.ws, filepath.Join(out, "initial")} {
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(w.ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	hook := []map[string]any{{"matcher": "Edit|Write|MultiEdit|NotebookEdit", "hooks": []map[string]any{{"type": "command", "command": shellQuote(self)}}}}
	every := []map[string]any{{"hooks": []map[string]any{{"type": "command", "command": shellQuote(self)}}}}
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": hook, "PostToolUse": hook, "PostToolUseFailure": every, "UserPromptSubmit": every}})
	ws := func(name string) string { return filepath.Join(w.ws, name) }
	api := newScriptAPI(t)
	api.script("first prompt",
		call{"Read", map[string]any{"file_path": ws("a.txt")}},
		call{"Edit", map[string]any{"file_path": ws("a.txt"), "old_string": "two", "new_string": "TWO"}},
		call{"Edit", map[string]any{"file_path": ws("a.txt"), "old_string": "three", "new_string": "THREE"}},
		call{"Write", map[string]any{"file_path": ws("c.txt"), "content": "new file\n"}},
		call{"Read", map[string]any{"file_path": ws("crlf.txt")}},
		call{"Write", map[string]any{"file_path": ws("crlf.txt"), "content": "x\ny\nz\n"}},
		call{"Read", map[string]any{"file_path": ws("n.ipynb")}},
		call{"NotebookEdit", map[string]any{"notebook_path": ws("n.ipynb"), "cell_id": "c1", "new_source": "print(2)"}},
		call{"Write", map[string]any{"file_path": ws("sub/dir/new.txt"), "content": "deep\n"}},
		call{"Read", map[string]any{"file_path": ws("link.txt")}},
		call{"Edit", map[string]any{"file_path": ws("link.txt"), "old_string": "one", "new_string": "ONE"}},
	)
	api.script("second prompt",
		call{"Read", map[string]any{"file_path": ws("b.txt")}},
		call{"Edit", map[string]any{"file_path": ws("b.txt"), "old_string": "beta", "new_string": "BETA"}},
	)
	w.extraEnv = []string{captureEnv + "=" + out, captureWSEnv + "=" + w.ws, captureConfigEnv + "=" + w.config, captureHomeEnv + "=" + w.home}
	tm := w.startClaude(api.URL(), 0, "--settings", string(settings))
	for _, prompt := range []string{"first prompt", "second prompt"} {
		eventually(t, "Claude Code's prompt", func() bool { return promptReady(tm.screen()) }, tm.screen)
		tm.typeLine(prompt)
		eventually(t, "the model's 'done' to "+prompt, func() bool { return api.finished(prompt) }, tm.screen)
	}
	names, _ := filepath.Glob(filepath.Join(out, "*.json"))
	t.Logf("recorded %d hook inputs in %s", len(names), out)
}

// captureHook is this binary run as Claude Code's hook: it saves the input, and after
// a write the file, then exits 0 without an answer.
func captureHook(dir string) int {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		return 1
	}
	text := string(data)
	for env, placeholder := range map[string]string{captureWSEnv: fixtureWS, captureConfigEnv: fixtureConfig, captureHomeEnv: fixtureHome} {
		if v := os.Getenv(env); v != "" {
			text = strings.ReplaceAll(text, v, placeholder)
		}
	}
	var ev struct {
		Name      string `json:"hook_event_name"`
		ToolInput struct {
			FilePath     string `json:"file_path"`
			NotebookPath string `json:"notebook_path"`
		} `json:"tool_input"`
	}
	json.Unmarshal(data, &ev)
	// Claude Code runs the hooks of one session one after another: numbering is safe.
	previous, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	base := filepath.Join(dir, fmt.Sprintf("%02d-%s", len(previous)+1, ev.Name))
	if err := os.WriteFile(base+".json", []byte(text), 0o644); err != nil {
		return 1
	}
	target := ev.ToolInput.FilePath + ev.ToolInput.NotebookPath
	if ev.Name == "PostToolUse" && target != "" {
		if after, err := os.ReadFile(target); err == nil {
			os.WriteFile(base+".after", after, 0o644)
		}
	}
	return 0
}
