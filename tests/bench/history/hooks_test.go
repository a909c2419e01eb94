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
