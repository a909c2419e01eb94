//go:build unix

package claude

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRealClaudeCodeManualModeUnsavedBuffer: Claude Code in its manual mode
// (--permission-mode default, each edit a diff in Neovim) edits a file that Neovim
// holds with unsaved changes. With mcpdiff's hooks (as :McpDiffClaude passes them)
// the PreToolUse hook refuses the edit before any diff: Claude Code shows the
// reason as the tool's error, the model hears it, nothing is written. Without them,
// openDiff refuses; Claude Code asks in its terminal instead ("Opened changes in
// Neovim", though none opened), and a yes writes the file under the buffer, which
// keeps the user's text. :help mcpdiff-diff says the same.
func TestRealClaudeCodeManualModeUnsavedBuffer(t *testing.T) {
	t.Parallel()
	requireTools(t)
	for _, hooks := range []bool{true, false} {
		t.Run(map[bool]string{true: "with hooks", false: "without hooks"}[hooks], func(t *testing.T) {
			w, v, port, api := unsavedEdit(t)
			a := filepath.Join(w.ws, "a.txt")
			args := []string{"--permission-mode", "default"}
			if hooks {
				args = append(args, "--settings", hookSettings(t))
			}
			tm := w.startClaude(api.URL(), port, args...)
			eventually(t, "Claude Code's prompt", func() bool { return promptReady(tm.screen()) }, tm.screen)
			tm.typeLine("edit a")
			words := func() string { return strings.Join(strings.Fields(tm.screen()), " ") }
			wantFile := "one\ntwo\n"
			if hooks {
				eventually(t, "the hook's refusal on Claude Code's screen", func() bool {
					return strings.Contains(words(), "Error: PreToolUse:Edit hook error: "+a+" has unsaved changes in Neovim, so it was not written.")
				}, tm.screen)
				eventually(t, "the model's 'done'", func() bool { return api.finished("edit a") }, tm.screen)
				if !api.received("unsaved changes in Neovim") || strings.Contains(tm.screen(), "Do you want to make this edit") {
					t.Fatalf("the model was not told, or Claude Code asked anyway:\n%s", tm.screen())
				}
			} else {
				eventually(t, "Claude Code asking in its terminal", func() bool {
					return strings.Contains(words(), "Do you want to make this edit to a.txt?")
				}, tm.screen)
				tm.press("Enter", "the answer 1. Yes", func() bool { // the question goes once answered
					return !strings.Contains(words(), "Do you want to make this edit to a.txt?")
				})
				eventually(t, "the model's 'done'", func() bool { return api.finished("edit a") }, tm.screen)
				wantFile = "one\nTWO\n"
			}
			var buf struct {
				Lines    []string `msgpack:"lines"`
				Modified bool     `msgpack:"modified"`
				Bufs     int      `msgpack:"bufs"`
			}
			v.ExecLua(`return { lines = vim.api.nvim_buf_get_lines(0, 0, -1, false), modified = vim.bo.modified, bufs = #vim.api.nvim_list_bufs() }`, &buf)
			if strings.Join(buf.Lines, "|") != "mine, unsaved|two" || !buf.Modified || buf.Bufs != 1 {
				t.Fatalf("Neovim's buffers: %+v (a proposal opened, or the buffer changed)%s", buf, neovimState(v))
			}
			if got, _ := w.read("a.txt"); got != wantFile {
				t.Fatalf("a.txt holds %q, want %q", got, wantFile)
			}
		})
	}
}
