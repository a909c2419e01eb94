package history

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Claude Code runs `mcpdiff hook` before and after each of its file edits and waits
// for it: the time one hook process adds to an Edit of a 1,000-line file, PreToolUse
// and PostToolUse each, whole process (start, read the event, act, exit). The goal
// (under 10 ms each on a 2-core machine) is the goal.
const (
	hookReps = 20
	hookGoal = 10 * time.Millisecond
)

// hookWS is a workspace with a 1,000-line file, and Claude Code's inputs for editing it.
type hookWS struct {
	dir, file string
	env       []string
	lines     []string
}

func newHookWS(b *testing.B) *hookWS {
	base := testenv.TempDir(b)
	w := &hookWS{dir: filepath.Join(base, "project")}
	w.file = filepath.Join(w.dir, "big.go")
	for i := range 1000 {
		w.lines = append(w.lines, fmt.Sprintf("\tvalue%04d := compute(%d, \"some text on line %d\") // comment", i, i, i))
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		b.Fatal(err)
	}
	w.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(base, "home"), "CLAUDE_CONFIG_DIR=" + filepath.Join(base, "claude")}
	w.writeFile(b)
	return w
}

func (w *hookWS) content() string { return strings.Join(w.lines, "\n") + "\n" }

func (w *hookWS) writeFile(b *testing.B) {
	if err := os.WriteFile(w.file, []byte(w.content()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// event is Claude Code's input for the n-th Edit (line n changes), as 2.1.330 sends it:
// PostToolUse carries the whole file before the edit and the patch.
func (w *hookWS) event(name string, n int) string {
	line := n % len(w.lines)
	old, edited := w.lines[line], fmt.Sprintf("%s // edit %d", w.lines[line], n)
	ev := map[string]any{
		"session_id": "5e55a4d1-0000-4000-8000-000000000000", "transcript_path": "/dev/null", "cwd": w.dir,
		"prompt_id": "9b0e2f4c-0000-4000-8000-000000000000", "permission_mode": "auto", "effort": map[string]any{"level": "medium"},
		"hook_event_name": name, "tool_name": "Edit", "tool_use_id": fmt.Sprintf("toolu_bench_%d", n),
		"tool_input": map[string]any{"file_path": w.file, "old_string": old, "new_string": edited, "replace_all": false},
	}
	if name == "PostToolUse" {
		ev["duration_ms"] = 3
		ev["tool_response"] = map[string]any{"filePath": w.file, "oldString": old, "newString": edited, "originalFile": w.content(),
			"structuredPatch": []any{map[string]any{"oldStart": line + 1, "oldLines": 1, "newStart": line + 1, "newLines": 1, "lines": []string{"-" + old, "+" + edited}}},
			"userModified":    false, "replaceAll": false}
	}
	data, _ := json.Marshal(ev)
	return string(data)
}

// hook runs one `mcpdiff hook` process and returns how long it took.
func (w *hookWS) hook(b *testing.B, input string, env ...string) time.Duration {
	cmd := exec.Command(testenv.Binary, "hook")
	cmd.Dir, cmd.Env = w.dir, append(slices.Clone(w.env), env...)
	cmd.Stdin = strings.NewReader(input)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil || len(out) != 0 {
		b.Fatalf("mcpdiff hook: %v %s", err, out)
	}
	return took
}

// edit runs the n-th Edit: PreToolUse, the write, PostToolUse; it returns their times.
func (w *hookWS) edit(b *testing.B, n int, env ...string) (pre, post time.Duration) {
	pre = w.hook(b, w.event("PreToolUse", n), env...)
	postInput := w.event("PostToolUse", n)
	line := n % len(w.lines)
	w.lines[line] = fmt.Sprintf("%s // edit %d", w.lines[line], n)
	w.writeFile(b)
	post = w.hook(b, postInput, env...)
	return pre, post
}

// BenchmarkProcessStart is the floor under the hook's figures: starting any process
// (BenchmarkCLIStart has this binary's).
func BenchmarkProcessStart(b *testing.B) {
	var samples []time.Duration
	for range hookReps * b.N {
		samples = append(samples, timed(func() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}))
	}
	report(b, samples)
	record("`/bin/true` (starting any process, for scale)", samples, 0)
}

// BenchmarkEdit1000Lines: a fresh store, twenty edits of one 1,000-line file.
func BenchmarkEdit1000Lines(b *testing.B) {
	for range b.N {
		w := newHookWS(b)
		w.edit(b, 1000) // the store exists from here on, as in any session but its first edit
		var pre, post []time.Duration
		for n := range hookReps {
			p, q := w.edit(b, n)
			pre, post = append(pre, p), append(post, q)
		}
		report(b, pre)
		record("PreToolUse of an Edit, 1,000-line file, no Neovim", pre, hookGoal)
		report(b, post)
		record("PostToolUse of an Edit, 1,000-line file (records it)", post, hookGoal)
	}
}

// BenchmarkEditLongHistory: the same with 1,000 edits of other files already recorded.
func BenchmarkEditLongHistory(b *testing.B) {
	for range b.N {
		w := newHookWS(b)
		other := &hookWS{dir: w.dir, file: filepath.Join(w.dir, "other.go"), env: w.env, lines: slices.Clone(w.lines)}
		other.writeFile(b)
		for n := range 1000 {
			other.edit(b, n)
		}
		var post []time.Duration
		for n := range hookReps {
			_, q := w.edit(b, n)
			post = append(post, q)
		}
		report(b, post)
		record("PostToolUse of an Edit, 1,000-line file, 1,000 edits already recorded", post, hookGoal)
	}
}

// BenchmarkPreWithNeovim: PreToolUse asks a running Neovim (claude in its terminal).
func BenchmarkPreWithNeovim(b *testing.B) {
	nvim := testenv.Neovims(b)[0]
	for range b.N {
		w := newHookWS(b)
		sock := testenv.ListenNeovim(b, nvim, "", nil, w.file).Sock
		w.edit(b, 1000, "NVIM="+sock)
		var pre []time.Duration
		for n := range hookReps {
			p, _ := w.edit(b, n, "NVIM="+sock)
			pre = append(pre, p)
		}
		report(b, pre)
		record("PreToolUse of an Edit, 1,000-line file, asking one Neovim ($NVIM)", pre, hookGoal)
	}
}

// BenchmarkPostWithNeovim: PostToolUse asks a running Neovim with mcpdiff's bridge
// (claude in its terminal) whether the bridge recorded the write (an accepted diff),
// then records it: what every edit costs once such a Neovim runs.
func BenchmarkPostWithNeovim(b *testing.B) {
	nvim := testenv.Neovims(b)[0]
	for range b.N {
		w := newHookWS(b)
		n := testenv.ListenNeovim(b, nvim, w.dir, w.env)
		err := n.ExecLua(`
local root, bin = ...
vim.opt.rtp:prepend(root)
require("mcpdiff").setup({ bin = bin })
return vim.wait(10000, function() return require("mcpdiff.bridge").info() ~= nil end, 1)`, nil, testenv.RepoRoot(), testenv.Binary)
		if err != nil {
			b.Fatalf("start the plugin: %v", err)
		}
		w.edit(b, 1000, "NVIM="+n.Sock)
		var post []time.Duration
		for i := range hookReps {
			_, q := w.edit(b, i, "NVIM="+n.Sock)
			post = append(post, q)
		}
		report(b, post)
		record("PostToolUse of an Edit, 1,000-line file, asking one Neovim's bridge ($NVIM)", post, hookGoal)
	}
}

// agentEvent is one agent's before or after event for the n-th edit of the file (line
// n changes), as each CLI sends it (tests/clients drives the real CLIs).
type agentEvent func(w *hookWS, after bool, n int) (args []string, input string)

var agentEvents = map[string]agentEvent{
	"codex": func(w *hookWS, after bool, n int) ([]string, string) {
		line := n % len(w.lines)
		name := map[bool]string{false: "PreToolUse", true: "PostToolUse"}[after]
		patch := fmt.Sprintf("*** Begin Patch\n*** Update File: big.go\n@@\n-%s\n+%s // edit %d\n*** End Patch\n", w.lines[line], w.lines[line], n)
		ev := map[string]any{"session_id": "019a0000-0000-7000-8000-000000000000", "turn_id": "019a0000-0000-7000-8000-000000000001",
			"transcript_path": nil, "cwd": w.dir, "hook_event_name": name, "model": "gpt-5.5", "permission_mode": "bypassPermissions",
			"tool_name": "apply_patch", "tool_input": map[string]any{"command": patch}, "tool_use_id": fmt.Sprintf("call_%d", n)}
		if after {
			ev["tool_response"] = "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM big.go\n"
		}
		data, _ := json.Marshal(ev)
		return []string{"--agent", "codex"}, string(data)
	},
	"gemini": func(w *hookWS, after bool, n int) ([]string, string) {
		line := n % len(w.lines)
		name := map[bool]string{false: "BeforeTool", true: "AfterTool"}[after]
		ev := map[string]any{"session_id": "5e55a4d1-0000-4000-8000-000000000001", "transcript_path": "/dev/null", "cwd": w.dir,
			"hook_event_name": name, "timestamp": "2026-11-27T10:00:00.000Z", "tool_name": "replace",
			"tool_input": map[string]any{"file_path": w.file, "old_string": w.lines[line], "new_string": fmt.Sprintf("%s // edit %d", w.lines[line], n), "instruction": "edit"}}
		if after {
			ev["tool_response"] = map[string]any{"llmContent": "Successfully modified file", "returnDisplay": map[string]any{"fileName": "big.go"}, "error": nil}
		}
		data, _ := json.Marshal(ev)
		return []string{"--agent", "gemini"}, string(data)
	},
	"opencode": func(w *hookWS, after bool, n int) ([]string, string) {
		line := n % len(w.lines)
		name := map[bool]string{false: "tool.execute.before", true: "tool.execute.after"}[after]
		ev := map[string]any{"hook_event_name": name, "tool": "edit", "sessionID": "ses_bench", "callID": fmt.Sprintf("call_%d", n), "directory": w.dir,
			"args":   map[string]any{"filePath": w.file, "oldString": w.lines[line], "newString": fmt.Sprintf("%s // edit %d", w.lines[line], n)},
			"prompt": map[string]any{"id": "msg_bench", "text": "edit the file"}}
		data, _ := json.Marshal(ev)
		return []string{"--agent", "opencode"}, string(data)
	},
	"copilot": func(w *hookWS, after bool, n int) ([]string, string) {
		line := n % len(w.lines)
		ev := map[string]any{"sessionId": "bd4b40c5-0000-4000-8000-000000000000", "timestamp": 1795778180755, "cwd": w.dir, "toolName": "edit",
			"toolArgs": map[string]any{"path": w.file, "old_str": w.lines[line], "new_str": fmt.Sprintf("%s // edit %d", w.lines[line], n)}}
		event := "preToolUse"
		if after {
			ev["toolResult"] = map[string]any{"resultType": "success", "textResultForLlm": "File edited"}
			event = "postToolUse"
		}
		data, _ := json.Marshal(ev)
		return []string{"--agent", "copilot", "--event", event}, string(data)
	},
	"cursor": func(w *hookWS, after bool, n int) ([]string, string) {
		line := n % len(w.lines)
		name := map[bool]string{false: "preToolUse", true: "postToolUse"}[after]
		ev := map[string]any{"hook_event_name": name, "conversation_id": "conv-bench", "generation_id": "gen-bench", "workspace_roots": []string{w.dir},
			"cwd": w.dir, "tool_name": "StrReplace", "tool_use_id": fmt.Sprintf("tu_%d", n),
			"tool_input": map[string]any{"file_path": w.file, "old_string": w.lines[line], "new_string": fmt.Sprintf("%s // edit %d", w.lines[line], n)}}
		data, _ := json.Marshal(ev)
		return []string{"--agent", "cursor"}, string(data)
	},
}

// agentHook runs one `mcpdiff hook` process with args and returns how long it took.
func (w *hookWS) agentHook(b *testing.B, args []string, input string) time.Duration {
	cmd := exec.Command(testenv.Binary, append([]string{"hook"}, args...)...)
	cmd.Dir, cmd.Env = w.dir, w.env
	cmd.Stdin = strings.NewReader(input)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil || len(out) != 0 {
		b.Fatalf("mcpdiff hook %v: %v %s", args, err, out)
	}
	return took
}

// BenchmarkAgentEdit: each agent's before and after events of an edit of a 1,000-line
// file, whole processes, after a first edit made the store.
func BenchmarkAgentEdit(b *testing.B) {
	for _, name := range []string{"codex", "gemini", "opencode", "copilot", "cursor"} {
		ev := agentEvents[name]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				w := newHookWS(b)
				var pre, post []time.Duration
				for n := range hookReps + 1 {
					preArgs, preIn := ev(w, false, n)
					postArgs, postIn := ev(w, true, n) // the same call's arguments
					p := w.agentHook(b, preArgs, preIn)
					line := n % len(w.lines)
					w.lines[line] = fmt.Sprintf("%s // edit %d", w.lines[line], n)
					w.writeFile(b)
					q := w.agentHook(b, postArgs, postIn)
					if n > 0 { // the first made the store
						pre, post = append(pre, p), append(post, q)
					}
				}
				if got := len(testenv.Entries(b, w.dir)); got != hookReps+1 {
					b.Fatalf("%s: %d entries recorded, want %d", name, got, hookReps+1)
				}
				report(b, pre)
				record(name+": before-event of an edit, 1,000-line file, no Neovim", pre, hookGoal)
				report(b, post)
				record(name+": after-event of an edit, 1,000-line file (records it)", post, hookGoal)
			}
		})
	}
}
