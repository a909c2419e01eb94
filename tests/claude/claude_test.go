//go:build unix

// Package claude runs the real Claude Code CLI (npm @anthropic-ai/claude-code 2.1.330)
// against a real headless Neovim running the plugin from this checkout, with a fake
// Anthropic Messages API on 127.0.0.1: the CLI finds Neovim through the lock file,
// proposes an edit, and the test accepts or rejects it in Neovim the way a user does.
// hooks_test.go runs it with mcpdiff's hooks, in the modes where it writes files itself.
// It drives the real CLI unattended against a fake Messages API on 127.0.0.1.
//
// Skipped, saying why, when the CLI or tmux is missing; .ci/run installs both.
package claude

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

var waitLimit = testenv.Scaled(60 * time.Second)

var (
	repoRoot  = testenv.RepoRoot()
	claudeBin string
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(captureEnv); dir != "" {
		os.Exit(captureHook(dir)) // run by Claude Code as its hook: see fixtures_test.go
	}
	claudeBin = os.Getenv("MCPDIFF_CLAUDE_BIN")
	if claudeBin == "" {
		home, _ := os.UserHomeDir()
		claudeBin = filepath.Join(home, ".cache/mcpdiff/claude-code/node_modules/.bin/claude")
	}
	testenv.Main(m, testenv.Suite{})
}

func requireTools(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(claudeBin); err != nil {
		testenv.SkipWithout(t, fmt.Sprintf("the Claude Code CLI is not installed at %s (npm install @anthropic-ai/claude-code@2.1.330 there, or set MCPDIFF_CLAUDE_BIN; .ci/run does)", claudeBin))
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		testenv.SkipWithout(t, "tmux is not installed (apt-get install tmux; .ci/run does)")
	}
}

func TestRealClaudeCodeAcceptAndReject(t *testing.T) {
	t.Parallel()
	requireTools(t)
	for _, bin := range testenv.Neovims(t) {
		v := nvimVersion(bin)
		t.Run(v+"/accept", func(t *testing.T) { scenario(t, bin, flow{accept: true}) })
		t.Run(v+"/edit then accept", func(t *testing.T) { scenario(t, bin, flow{accept: true, userEdit: true}) })
		t.Run(v+"/reject", func(t *testing.T) { scenario(t, bin, flow{}) })
		t.Run(v+"/new file", func(t *testing.T) { scenario(t, bin, flow{accept: true, newFile: true}) })
		// With the hooks too, an accepted diff is one entry, not two.
		t.Run(v+"/accept with hooks", func(t *testing.T) { scenario(t, bin, flow{accept: true, hooks: true}) })
		t.Run(v+"/new file with hooks", func(t *testing.T) { scenario(t, bin, flow{accept: true, newFile: true, hooks: true}) })
		// A hunk taken back before :w is not in what is written, nor in the history.
		t.Run(v+"/hunk taken back with hooks", func(t *testing.T) { scenario(t, bin, flow{accept: true, hunkBack: true, hooks: true}) })
		t.Run(v+"/reject with hooks", func(t *testing.T) { scenario(t, bin, flow{hooks: true}) })
	}
}

// flow is what the user does with the proposal.
type flow struct {
	accept   bool // :w, else :q
	userEdit bool // change the proposal before accepting
	newFile  bool // Claude Code proposes a new file (Write) instead of an Edit
	hooks    bool // Claude Code runs mcpdiff's hooks as well (they record the same write)
	hunkBack bool // Claude Code rewrites a file in two places; the user takes the first back
}

func nvimVersion(bin string) string {
	return strings.TrimPrefix(testenv.NeovimVersion(bin), "NVIM ")
}

const (
	original   = "hello world\nsecond line\n"
	proposed   = "hello edited\nsecond line\n"
	userEdited = "hello edited\nsecond line\nadded by the user\n"
	newContent = "brand new\n"
	// The two-hunk rewrite of original+"3\n4\n5\n", and what is left once the user
	// takes its first hunk back.
	twoHunks = "hello edited\nsecond line\n3\n4\nfive\n"
	lastHunk = "hello world\nsecond line\n3\n4\nfive\n"
)

// scenario: the user asks Claude Code to edit hello.txt (or to create new.txt); the
// diff opens in Neovim; the user accepts it with :w (or rejects it with :q).
func scenario(t *testing.T, nvimBin string, f flow) {
	w := newWorld(t)
	file := filepath.Join(w.ws, "hello.txt")
	if err := os.WriteFile(file, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	want := proposed
	if f.newFile {
		file, want = filepath.Join(w.ws, "new.txt"), newContent
	}
	if f.hunkBack {
		if err := os.WriteFile(file, []byte(original+"3\n4\n5\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = twoHunks
	}
	api := newScriptAPI(t)
	switch {
	case f.newFile:
		api.script("edit the file", call{"Write", map[string]any{"file_path": file, "content": newContent}})
	case f.hunkBack:
		api.script("edit the file",
			call{"Read", map[string]any{"file_path": file}},
			call{"Write", map[string]any{"file_path": file, "content": twoHunks}})
	default:
		api.script("edit the file",
			call{"Read", map[string]any{"file_path": file}},
			call{"Edit", map[string]any{"file_path": file, "old_string": "hello world", "new_string": "hello edited"}})
	}
	v, port := w.startNeovim(nvimBin)
	args := []string{"--permission-mode", "default"}
	if f.hooks {
		args = append(args, "--settings", hookSettings(t))
	}
	tm := w.startClaude(api.URL(), port, args...)

	// Connected is not enough: Claude Code uses the IDE for diffs only once its MCP
	// handshake is done (initialized, then ide_connected with its pid).
	eventually(t, "Claude Code to finish connecting to Neovim", func() bool {
		var ready bool
		v.ExecLua(`
local st = require("mcpdiff.bridge").status()
for _, c in ipairs(st and st.clients or {}) do
  if c.ready and (c.claudePid or 0) > 0 then return true end
end
return false`, &ready)
		return ready
	}, tm.screen)
	eventually(t, "Claude Code's prompt", func() bool { return promptReady(tm.screen()) }, tm.screen)
	tm.typeLine("edit the file")

	state := func() string { return tm.screen() + neovimState(v) }
	var proposal int
	eventually(t, "the proposed diff to open in Neovim", func() bool {
		v.ExecLua(`
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(b):find("proposed)", 1, true) then return b end
end
return 0`, &proposal)
		return proposal != 0
	}, state)
	var lines []string
	v.ExecLua(`return vim.api.nvim_buf_get_lines(..., 0, -1, false)`, &lines, proposal)
	if strings.Join(lines, "\n")+"\n" != want {
		t.Fatalf("the proposal shows %q", lines)
	}
	if f.userEdit {
		v.ExecLua(`vim.api.nvim_buf_set_lines(..., -1, -1, false, { "added by the user" })`, nil, proposal)
		want = userEdited
	}

	// Do what the user does, in the proposal's window.
	var win int
	v.ExecLua(`return vim.fn.bufwinid(...)`, &win, proposal)
	if err := v.SetCurrentWindow(nvimrpc.Window(win)); err != nil {
		t.Fatal(err)
	}
	if f.hunkBack {
		if err := v.Command("1McpDiffReject"); err != nil {
			t.Fatal(err)
		}
		want = lastHunk
	}
	if f.accept {
		if err := v.Command("write"); err != nil {
			t.Fatal(err)
		}
		eventually(t, "Claude Code to write the accepted text", func() bool {
			b, _ := os.ReadFile(file)
			return string(b) == want
		}, tm.screen)
		eventually(t, "the turn to go on after the edit (the model's 'done')", func() bool { return api.finished("edit the file") }, tm.screen)
		if f.userEdit && !api.received("The user modified your proposed changes") {
			t.Fatal("Claude Code did not tell the model that the user changed the proposal")
		}
		eventually(t, "the accepted diff to be recorded in the edit history", func() bool { return recorded(w.ws) == 1 }, tm.screen)
		// The bridge has recorded it: one entry, the hook having left it to the bridge.
		eventually(t, "the bridge to record the accepted diff", func() bool {
			return strings.Contains(neovimState(v), "recorded the accepted diff")
		}, state)
		// What the user decided is what is recorded: accepted (not pending), by the
		// bridge that accepted it (the hook asked it, and did not record it again),
		// with the bytes written.
		entries := recordedEntries(w.ws)
		if len(entries) != 1 {
			t.Fatalf("an accepted diff is %d entries in the history, want 1", len(entries))
		}
		if e := entries[0]; e.Status != history.Accepted || e.Source != history.SourceIDE || e.HashAfter == nil || *e.HashAfter != testenv.SHA256(want) {
			t.Fatalf("the accepted diff is recorded as %+v, want accepted by the bridge (source ide) with the bytes written (%q)", e, want)
		}
		if out, err := exec.Command(testenv.Binary, "status", "--workspace", w.ws).CombinedOutput(); err != nil || strings.Contains(string(out), "pending") {
			t.Fatalf("status after the accept: %v\n%s", err, out)
		}
		if f.hooks { // both hooks ran: PreToolUse kept the file, PostToolUse took it back
			left, err := os.ReadDir(filepath.Join(w.ws, ".mcp", "edit_history", "hooks"))
			if err != nil || len(left) != 0 {
				t.Fatalf("the hooks did not both run: %v %v", left, err)
			}
		}
		eventually(t, "Neovim's diff view to close", func() bool {
			var n int
			v.ExecLua(`local n = 0
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(b):find("proposed)", 1, true) then n = n + 1 end
end
return n`, &n)
			return n == 0
		}, tm.screen)
		return
	}
	if err := v.Command("quit"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Claude Code to report the rejection", func() bool {
		return strings.Contains(tm.screen(), "Rejected update")
	}, tm.screen)
	if b, _ := os.ReadFile(file); string(b) != original {
		t.Fatalf("a rejected edit changed the file: %q", b)
	}
	if api.finished("edit the file") {
		t.Fatal("the turn went on after a rejection; Claude Code should abort it")
	}
	if n := recorded(w.ws); n != 0 {
		t.Fatalf("a rejected diff was recorded (%d entries)", n)
	}
}

// neovimState describes Neovim's side for a failure message: its buffers, and the
// bridge's status and stderr.
func neovimState(v *nvimrpc.Nvim) string {
	var out string
	v.ExecLua(`
local b = require("mcpdiff.bridge")
local names = {}
for _, buf in ipairs(vim.api.nvim_list_bufs()) do table.insert(names, vim.api.nvim_buf_get_name(buf)) end
return "\nNeovim buffers: " .. vim.inspect(names) .. "\nbridge status: " .. vim.inspect(b.status())
  .. "\nbridge stderr: " .. vim.inspect(b.stderr()) .. "\nerror: " .. tostring(b.last_error())`, &out)
	return out
}

// recorded counts the history entries of the workspace (0 without a store).
func recorded(ws string) int { return len(recordedEntries(ws)) }

// recordedEntries are the history entries of the workspace (none without a store).
func recordedEntries(ws string) []*history.Entry {
	root, err := workspace.OpenRoot(ws)
	if err != nil {
		return nil
	}
	defer root.Close()
	st, err := history.OpenExisting(root)
	if err != nil {
		return nil
	}
	list, err := st.List(history.Filter{})
	if err != nil {
		return nil
	}
	return list.Entries
}

// world is the temporary HOME, Claude config folder and workspace of one scenario.
type world struct {
	t                *testing.T
	home, config, ws string
	extraEnv         []string // more environment for claude
}

func newWorld(t *testing.T) *world {
	base := testenv.TempDir(t)
	w := &world{t: t, home: filepath.Join(base, "home"), config: filepath.Join(base, "claude"), ws: filepath.Join(base, "project")}
	for _, d := range []string{w.home, w.config, w.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The three keys that let the CLI start unattended.
	cfg := map[string]any{
		"hasCompletedOnboarding":   true,
		"hasSeenAutoDefaultNotice": true,
		"hasSeenAutoDefaultNudge":  true,
		"projects":                 map[string]any{w.ws: map[string]any{"hasTrustDialogAccepted": true}},
		"customApiKeyResponses":    map[string]any{"approved": []string{"sk-test-dummy"}, "rejected": []string{}},
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(w.config, ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) env() []string {
	return testenv.Env(append(testenv.HomeVars(w.home),
		"CLAUDE_CONFIG_DIR="+w.config, "TERM=xterm-256color")...)
}

// startNeovim starts a headless Neovim in the workspace with the plugin and returns
// it and the port its bridge listens on.
func (w *world) startNeovim(bin string, opts ...map[string]any) (*nvimrpc.Nvim, int) {
	t := w.t
	v := testenv.EmbedNeovim(t, bin, w.ws, w.env(), "-u", "NONE")
	t.Cleanup(func() { v.Command("qa!"); v.Close() })
	setup := map[string]any{}
	for _, o := range opts {
		for k, v := range o {
			setup[k] = v
		}
	}
	setup["bin"] = testenv.Binary
	err := v.ExecLua(`
local root, opts = ...
vim.opt.rtp:prepend(root)
vim.cmd("runtime plugin/mcpdiff.lua")
require("mcpdiff").setup(opts)`, nil, repoRoot, setup)
	if err != nil {
		t.Fatal(err)
	}
	return v, testenv.WaitBridge(t, v, w.config, waitLimit)
}

// tmuxClaude is claude running in a private tmux server.
type tmuxClaude struct {
	t      *testing.T
	socket string
}

// startClaude runs claude with args in the workspace, connected to the IDE server on
// idePort (0: none).
func (w *world) startClaude(apiURL string, idePort int, args ...string) *tmuxClaude {
	t := w.t
	tm := &tmuxClaude{t: t, socket: fmt.Sprintf("mcpdiff-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	env := append(append(w.env(), claudeEnv(apiURL)...), w.extraEnv...)
	if idePort != 0 {
		env = append(env, fmt.Sprintf("CLAUDE_CODE_SSE_PORT=%d", idePort))
	}
	var quoted []string
	for _, e := range env {
		quoted = append(quoted, shellQuote(e))
	}
	command := "env -i " + strings.Join(quoted, " ") + " " + shellQuote(claudeBin)
	for _, a := range args {
		command += " " + shellQuote(a)
	}
	// "sleep" keeps the pane readable if claude exits, so a failure shows its screen.
	command += "; sleep 600"
	cmd := exec.Command("tmux", "-L", tm.socket, "new-session", "-d", "-s", "S", "-x", "160", "-y", "50", "-c", w.ws, command)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(tm.stop)
	return tm
}

// claudeEnv is what claude needs to talk to the fake API only.
func claudeEnv(apiURL string) []string {
	return []string{"ANTHROPIC_BASE_URL=" + apiURL, "ANTHROPIC_API_KEY=sk-test-dummy",
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
}

// stop kills claude and everything in its pane, and waits until they are gone (they
// write into the config folder that the test then removes).
func (tm *tmuxClaude) stop() {
	out, _ := exec.Command("tmux", "-L", tm.socket, "list-panes", "-F", "#{pane_pid}").Output()
	var pgid int
	fmt.Sscan(strings.TrimSpace(string(out)), &pgid)
	stopGroup(pgid)
	exec.Command("tmux", "-L", tm.socket, "kill-server").Run()
}

// stopGroup kills the process group pgid (a terminal's processes) and waits until
// they are gone.
func stopGroup(pgid int) {
	if pgid <= 0 {
		return
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	// Waiting for the kernel to reap them, bounded.
	testenv.WithinEvery(testenv.Scaled(10*time.Second), 20*time.Millisecond, func() bool { return !groupAlive(pgid) })
}

// groupAlive reports whether any process of process group pgid still exists.
func groupAlive(pgid int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name: state ppid pgrp ...
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 2 && fields[2] == fmt.Sprint(pgid) && fields[0] != "Z" {
			return true
		}
	}
	return false
}

func (tm *tmuxClaude) screen() string {
	out, _ := exec.Command("tmux", "-L", tm.socket, "capture-pane", "-p", "-t", "S").Output()
	return string(out)
}

// typeLine types text into the prompt, waits until it shows there, then presses
// Enter until the prompt is empty again (it was submitted).
func (tm *tmuxClaude) typeLine(text string) {
	tm.t.Helper()
	tm.send("-l", text)
	eventually(tm.t, "the typed prompt to show", func() bool { return promptHolds(tm.screen(), text) }, tm.screen)
	tm.press("Enter", "the prompt to be submitted", func() bool { return !promptHolds(tm.screen(), text) })
}

// press sends key until done holds (pressUntil).
func (tm *tmuxClaude) press(key, effect string, done func() bool) {
	tm.t.Helper()
	pressUntil(tm.t, func() { tm.send(key) }, key+" for "+effect, done, tm.screen)
}

// pressUntil presses a key (press) until done holds. Claude Code drops keys that
// reach a question within a moment of its drawing (its dialogs arm an input grace),
// and how long that moment lasts depends on the machine: a key sent once, as soon as
// the question shows, is lost on some. So the key is sent again each second (scaled)
// until it has had its effect, within waitLimit.
func pressUntil(t *testing.T, press func(), what string, done func() bool, screen func() string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		press()
		if testenv.WithinEvery(testenv.Scaled(time.Second), 50*time.Millisecond, done) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out pressing %s (sent each second)\nClaude Code's screen:\n%s", what, screen())
		}
	}
}

// send sends keys to the pane (tmux send-keys arguments).
func (tm *tmuxClaude) send(keys ...string) {
	tm.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-L", tm.socket, "send-keys", "-t", "S"}, keys...)...).CombinedOutput(); err != nil {
		tm.t.Fatalf("send-keys %q: %v %s", keys, err, out)
	}
}

// promptHolds reports whether Claude Code's prompt box (the line between two rules
// that starts with ❯) holds text; the transcript above shows submitted prompts the
// same way, outside the box.
func promptHolds(screen, text string) bool {
	lines := strings.Split(screen, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i-1], "────") && strings.HasPrefix(lines[i], "❯") {
			return strings.Contains(lines[i], text)
		}
	}
	return false
}

func promptReady(screen string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, "❯") {
			return true
		}
	}
	return false
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// eventually polls cond until it holds; on timeout it fails and shows the screen.
func eventually(t *testing.T, what string, cond func() bool, screen func() string) {
	t.Helper()
	if !testenv.WithinEvery(waitLimit, 50*time.Millisecond, cond) {
		shown := ""
		if screen != nil {
			shown = "\nClaude Code's screen:\n" + screen()
		}
		t.Fatalf("timed out waiting for %s%s", what, shown)
	}
}

// streamAnswer writes one streamed Messages API answer (server-sent events).
func streamAnswer(w http.ResponseWriter, blocks []map[string]any, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	sse := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	sse("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-opus-5-5", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}})
	for i, b := range blocks {
		if b["type"] == "text" {
			sse("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		} else {
			input, _ := json.Marshal(b["input"])
			sse("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sse("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	sse("message_stop", map[string]any{"type": "message_stop"})
	if flusher != nil {
		flusher.Flush()
	}
}
