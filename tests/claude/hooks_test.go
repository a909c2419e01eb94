//go:build unix

package claude

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Claude Code's own edits, recorded through its hooks (`mcpdiff hook`), with the real
// CLI in the modes where it writes files itself.

// hookSettings is what `mcpdiff hooks settings` prints: the JSON :McpDiffClaude passes.
func hookSettings(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(testenv.Binary, "hooks", "settings").Output()
	if err != nil {
		t.Fatalf("mcpdiff hooks settings: %v", err)
	}
	return string(out)
}

// cli runs the mcpdiff CLI in the workspace.
func (w *world) cli(args ...string) (string, string, int) {
	cmd := exec.Command(testenv.Binary, args...)
	cmd.Dir = w.ws
	cmd.Env = w.env()
	return testenv.Run(w.t, cmd)
}

// logEntry is an entry of `mcpdiff status --json`.
type logEntry struct {
	EditID         string  `json:"edit_id"`
	ConversationID string  `json:"conversation_id"`
	ToolCallIndex  int     `json:"tool_call_index"`
	Operation      string  `json:"operation"`
	FilePath       string  `json:"file_path"`
	ToolName       string  `json:"tool_name"`
	Status         string  `json:"status"`
	HashBefore     *string `json:"hash_before"`
	HashAfter      *string `json:"hash_after"`
	Source         string  `json:"source"`
	Title          string  `json:"conversation_title"`
}

func (w *world) status() []logEntry {
	w.t.Helper()
	out, errOut, code := w.cli("status", "--json")
	var entries []logEntry
	if code != 0 || json.Unmarshal([]byte(out), &entries) != nil {
		w.t.Fatalf("mcpdiff status --json: exit %d %q %q", code, out, errOut)
	}
	return entries
}

func deref(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

// unsavedEdit is the world of a refused edit: the newest Neovim, running mcpdiff,
// holds a.txt ("one\ntwo\n") with its first line changed and unsaved ("mine,
// unsaved"), and the model answers the prompt "edit a" by reading a.txt and changing
// "two" to "TWO". It returns the world, that Neovim, its IDE port and the model's API.
func unsavedEdit(t *testing.T) (*world, *nvimrpc.Nvim, int, *scriptAPI) {
	t.Helper()
	bins := testenv.Neovims(t)
	w := newWorld(t)
	a := w.write("a.txt", "one\ntwo\n")
	v, port := w.startNeovim(bins[len(bins)-1])
	if err := v.Command("edit " + a); err != nil {
		t.Fatal(err)
	}
	if err := v.ExecLua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine, unsaved" })`, nil); err != nil {
		t.Fatal(err)
	}
	api := newScriptAPI(t)
	api.script("edit a",
		call{"Read", map[string]any{"file_path": a}},
		call{"Edit", map[string]any{"file_path": a, "old_string": "two", "new_string": "TWO"}},
	)
	return w, v, port, api
}

func (w *world) write(name, content string) string {
	w.t.Helper()
	p := filepath.Join(w.ws, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) read(name string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(w.ws, name))
	return string(data), err == nil
}

// twoPrompts scripts the scenario of the hook tests: prompt 1 edits a.txt twice (lines
// apart, so that either edit can be rejected alone) and
// creates c.txt, prompt 2 edits b.txt.
func twoPrompts(w *world, api *scriptAPI) {
	a, b := w.write("a.txt", "one\ntwo\nthree\nfour\n"), w.write("b.txt", "alpha\nbeta\n")
	api.script("first prompt",
		call{"Read", map[string]any{"file_path": a}},
		call{"Edit", map[string]any{"file_path": a, "old_string": "two", "new_string": "TWO"}},
		call{"Edit", map[string]any{"file_path": a, "old_string": "four", "new_string": "FOUR"}},
		call{"Write", map[string]any{"file_path": filepath.Join(w.ws, "c.txt"), "content": "created\n"}},
	)
	api.script("second prompt",
		call{"Read", map[string]any{"file_path": b}},
		call{"Edit", map[string]any{"file_path": b, "old_string": "beta", "new_string": "BETA"}},
	)
}

// checkTwoPrompts checks the history of twoPrompts, then rejects the first edit
// (the second stays) and the created file (it goes).
func checkTwoPrompts(t *testing.T, w *world) {
	entries := w.status()
	type want struct{ file, op, tool, before, after string }
	wants := []want{
		{"a.txt", "edit", "Edit", testenv.SHA256("one\ntwo\nthree\nfour\n"), testenv.SHA256("one\nTWO\nthree\nfour\n")},
		{"a.txt", "edit", "Edit", testenv.SHA256("one\nTWO\nthree\nfour\n"), testenv.SHA256("one\nTWO\nthree\nFOUR\n")},
		{"c.txt", "create", "Write", "none", testenv.SHA256("created\n")},
		{"b.txt", "edit", "Edit", testenv.SHA256("alpha\nbeta\n"), testenv.SHA256("alpha\nBETA\n")},
	}
	if len(entries) != len(wants) {
		t.Fatalf("%d entries, want %d: %+v", len(entries), len(wants), entries)
	}
	for i, want := range wants {
		e := entries[i]
		if e.FilePath != filepath.Join(w.ws, want.file) || e.Operation != want.op || e.ToolName != want.tool ||
			deref(e.HashBefore) != want.before || deref(e.HashAfter) != want.after || e.Source != "claude-code" || e.Status != "pending" {
			t.Errorf("entry %d: %+v; want %+v", i, e, want)
		}
	}
	// Each prompt's conversation carries its title, from the UserPromptSubmit hook.
	if entries[0].Title != "first prompt" || entries[2].Title != "first prompt" || entries[3].Title != "second prompt" {
		t.Errorf("titles %q %q | %q; want each prompt's", entries[0].Title, entries[2].Title, entries[3].Title)
	}
	if c := entries[0].ConversationID; entries[1].ConversationID != c || entries[2].ConversationID != c || entries[3].ConversationID == c {
		t.Errorf("conversations %s %s %s | %s: want one per prompt", c, entries[1].ConversationID, entries[2].ConversationID, entries[3].ConversationID)
	}
	if entries[0].ToolCallIndex != 0 || entries[1].ToolCallIndex != 1 || entries[2].ToolCallIndex != 2 || entries[3].ToolCallIndex != 0 {
		t.Errorf("tool_call_index %d %d %d | %d", entries[0].ToolCallIndex, entries[1].ToolCallIndex, entries[2].ToolCallIndex, entries[3].ToolCallIndex)
	}
	if _, errOut, code := w.cli("reject", entries[0].EditID); code != 0 {
		t.Fatalf("reject the first edit: %s", errOut)
	}
	if got, _ := w.read("a.txt"); got != "one\ntwo\nthree\nFOUR\n" {
		t.Fatalf("a.txt after rejecting its first edit: %q; want the second edit kept", got)
	}
	if _, errOut, code := w.cli("reject", entries[2].EditID); code != 0 {
		t.Fatalf("reject the create: %s", errOut)
	}
	if _, exists := w.read("c.txt"); exists {
		t.Fatal("c.txt is still there after rejecting its creation")
	}
}

func TestRealClaudeCodeHooksRecordEdits(t *testing.T) {
	t.Parallel()
	requireTools(t)
	for _, mode := range []string{"auto", "acceptEdits"} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t)
			api := newScriptAPI(t)
			twoPrompts(w, api)
			args := []string{"--settings", hookSettings(t)}
			if mode != "auto" { // auto is what 2.1.330 starts in without a flag
				args = append(args, "--permission-mode", mode)
			}
			tm := w.startClaude(api.URL(), 0, args...)
			for _, prompt := range []string{"first prompt", "second prompt"} {
				eventually(t, "Claude Code's prompt", func() bool { return promptReady(tm.screen()) }, tm.screen)
				tm.typeLine(prompt)
				eventually(t, "the model's 'done' to "+prompt, func() bool { return api.finished(prompt) }, tm.screen)
			}
			footer := map[string]string{"auto": "auto mode on", "acceptEdits": "accept edits on"}[mode]
			if !strings.Contains(tm.screen(), footer) {
				t.Fatalf("Claude Code is not in %s mode:\n%s", mode, tm.screen())
			}
			checkTwoPrompts(t, w)
		})
	}
}

// TestRealClaudeCodeGuardOutsideNeovim: Claude Code in another terminal; the Neovim
// running mcpdiff in the workspace holds unsaved changes of a.txt. The edit is denied,
// the agent says why, and the file and the buffer stay as they are.
func TestRealClaudeCodeGuardOutsideNeovim(t *testing.T) {
	t.Parallel()
	requireTools(t)
	w, v, _, api := unsavedEdit(t)
	tm := w.startClaude(api.URL(), 0, "--settings", hookSettings(t))
	eventually(t, "Claude Code's prompt", func() bool { return promptReady(tm.screen()) }, tm.screen)
	tm.typeLine("edit a")
	eventually(t, "the model's 'done'", func() bool { return api.finished("edit a") }, tm.screen)
	if !api.received("unsaved changes in Neovim") {
		t.Fatalf("the model did not hear why the edit was refused:\n%s%s", tm.screen(), neovimState(v))
	}
	// The terminal redraws after the model's answer: wait for it. The screen wraps long
	// lines, so compare words.
	eventually(t, "the refusal's reason on Claude Code's screen", func() bool {
		return strings.Contains(strings.Join(strings.Fields(tm.screen()), " "), "unsaved changes in Neovim")
	}, tm.screen)
	if got, _ := w.read("a.txt"); got != "one\ntwo\n" {
		t.Fatalf("a.txt was written: %q", got)
	}
	var lines []string
	v.ExecLua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	if strings.Join(lines, "|") != "mine, unsaved|two" {
		t.Fatalf("the buffer changed: %q", lines)
	}
	if n := recorded(w.ws); n != 0 {
		t.Fatalf("%d entries recorded for a refused edit", n)
	}
}

// TestRealClaudeCodeInNeovimTerminal: :McpDiffClaude starts claude in Neovim's own
// terminal with the hooks; its edits are recorded, and an edit of a buffer with
// unsaved changes is refused.
func TestRealClaudeCodeInNeovimTerminal(t *testing.T) {
	t.Parallel()
	requireTools(t)
	for _, bin := range testenv.Neovims(t) {
		t.Run(nvimVersion(bin), func(t *testing.T) {
			w := newWorld(t)
			a, b := w.write("a.txt", "one\ntwo\n"), w.write("b.txt", "keep\n")
			api := newScriptAPI(t)
			api.script("edit both",
				call{"Read", map[string]any{"file_path": a}},
				call{"Edit", map[string]any{"file_path": a, "old_string": "two", "new_string": "TWO"}},
				call{"Read", map[string]any{"file_path": b}},
				call{"Edit", map[string]any{"file_path": b, "old_string": "keep", "new_string": "lost"}},
			)
			env := map[string]string{}
			for _, e := range claudeEnv(api.URL()) {
				k, v, _ := strings.Cut(e, "=")
				env[k] = v
			}
			v, _ := w.startNeovim(bin, map[string]any{"terminal": map[string]any{"cmd": claudeBin, "env": env, "split": "tab"}})
			if err := v.Command("edit " + b); err != nil {
				t.Fatal(err)
			}
			v.ExecLua(`vim.api.nvim_buf_set_lines(0, 0, -1, false, { "typed" })`, nil)
			if err := v.Command("McpDiffClaude"); err != nil {
				t.Fatal(err)
			}
			term := neovimTerminal(t, v)
			eventually(t, "Claude Code's prompt in Neovim's terminal", func() bool { return promptReady(term.screen()) }, term.screen)
			term.typeLine("edit both")
			eventually(t, "the model's 'done'", func() bool { return api.finished("edit both") }, term.screen)
			if got, _ := w.read("a.txt"); got != "one\nTWO\n" {
				t.Fatalf("a.txt: %q", got)
			}
			if got, _ := w.read("b.txt"); got != "keep\n" || !api.received("unsaved changes in Neovim") {
				t.Fatalf("b.txt (unsaved changes in Neovim) was written, or the model was not told: %q", got)
			}
			entries := w.status()
			if len(entries) != 1 || entries[0].FilePath != a || entries[0].Source != "claude-code" || deref(entries[0].HashAfter) != testenv.SHA256("one\nTWO\n") {
				t.Fatalf("entries %+v; want the edit of a.txt", entries)
			}
		})
	}
}

// neovimTerminal is claude running in a terminal buffer of Neovim.
type nvimTerm struct {
	t   *testing.T
	v   *nvimrpc.Nvim
	buf int
	job int
}

func neovimTerminal(t *testing.T, v *nvimrpc.Nvim) *nvimTerm {
	term := &nvimTerm{t: t, v: v}
	eventually(t, "the terminal of :McpDiffClaude", func() bool {
		var r []int
		v.ExecLua(`for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.bo[b].buftype == "terminal" then return { b, vim.b[b].terminal_job_id } end
end
return { 0, 0 }`, &r)
		term.buf, term.job = r[0], r[1]
		return term.buf != 0
	}, nil)
	// Before Neovim quits and the temp folders go: claude writes into its config
	// folder until it has exited.
	var pid int
	v.ExecLua(`return vim.fn.jobpid(...)`, &pid, term.job)
	t.Cleanup(func() { stopGroup(pid) })
	return term
}

func (n *nvimTerm) screen() string {
	var lines []string
	n.v.ExecLua(`return vim.api.nvim_buf_get_lines(..., 0, -1, false)`, &lines, n.buf)
	return strings.Join(lines, "\n")
}

// typeLine types text into the prompt, waits until it shows there, then sends Enter
// until the prompt is empty again (as tmuxClaude.typeLine does).
func (n *nvimTerm) typeLine(text string) {
	n.t.Helper()
	n.v.ExecLua(`vim.api.nvim_chan_send(...)`, nil, n.job, text)
	eventually(n.t, "the typed prompt to show", func() bool { return promptHolds(n.screen(), text) }, n.screen)
	pressUntil(n.t, func() { n.v.ExecLua(`vim.api.nvim_chan_send(...)`, nil, n.job, "\r") }, "Enter to submit the prompt",
		func() bool { return !promptHolds(n.screen(), text) }, n.screen)
}
