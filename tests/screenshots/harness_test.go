//go:build unix

package screenshots

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// waitLimit bounds every wait; reaching it is a failure, never a pace.
var waitLimit = testenv.Scaled(60 * time.Second)

// tools are the programs the pictures are made with.
type tools struct {
	bin      string // mcpdiff
	nvim     string // Neovim 0.10 or newer: its terminal UI, habamax, 'winbar'
	chromium string
	repo     string // the checkout: the plugin's runtimepath entry
}

// requireTools finds the programs, failing with what to install when one is missing:
// `make screenshots` asked for the pictures, so a missing tool is an error, not a skip.
func requireTools(t *testing.T) tools {
	t.Helper()
	tl := tools{repo: testenv.RepoRoot(), bin: os.Getenv("MCPDIFF_BIN"), nvim: os.Getenv("MCPDIFF_NVIM")}
	if tl.bin == "" {
		var err error
		if tl.bin, err = testenv.BuildBinary(t.TempDir(), testenv.PlainBuild); err != nil {
			t.Fatal(err)
		}
	}
	if found := testenv.FoundNeovims(); tl.nvim == "" && len(found) > 0 {
		tl.nvim = found[len(found)-1] // the newest, as Neovims lists them
	}
	if tl.nvim == "" {
		t.Fatal("no Neovim found: set MCPDIFF_NVIM, or run scripts/nvim-0.10")
	}
	out, err := exec.Command(tl.nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", "echo has('nvim-0.10') | qa!").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("%s is not Neovim 0.10 or newer (%v: %s): set MCPDIFF_NVIM, or run scripts/nvim-0.10", tl.nvim, err, out)
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			tl.chromium = p
			break
		}
	}
	if tl.chromium == "" {
		t.Fatal("chromium is not installed (apt-get install chromium; .ci/run does)")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed (apt-get install tmux; .ci/run does)")
	}
	// Chromium would fall back to another font with other widths: the page size is
	// computed from this font's. The second has the symbols of Claude Code's tab names.
	for font, pkg := range map[string]string{theme.Font: "fonts-dejavu-core", theme.Fallback: "fonts-symbola"} {
		if out, err := exec.Command("fc-match", "-f", "%{family}", font).Output(); err != nil || !strings.Contains(string(out), font) {
			t.Fatalf("the font %q is not installed (fc-match finds %q, %v): apt-get install %s; .ci/run does", font, out, err, pkg)
		}
	}
	return tl
}

// world is a user's machine: a home folder with the project in ~/src/inventory, and
// Claude Code's config folder.
type world struct {
	testenv.Dir
	t      *testing.T
	tl     tools
	base   string
	home   string
	config string // $CLAUDE_CONFIG_DIR: the bridge's lock file goes to its ide/
	ws     string // the project, Neovim's working directory
}

func newWorld(t *testing.T, tl tools, files map[string]string) *world {
	t.Helper()
	base := testenv.TempDir(t)
	w := &world{t: t, tl: tl, base: base, home: filepath.Join(base, "home"), config: filepath.Join(base, "claude")}
	w.ws = filepath.Join(w.home, "src", "inventory")
	w.Dir = testenv.Dir{TB: t, Root: w.ws}
	for _, d := range []string{w.config, w.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		w.Write(name, content)
	}
	return w
}

// env is the environment of every program the world runs: nothing of the real user's.
func (w *world) env() []string {
	return testenv.Env(append(testenv.HomeVars(w.home),
		"CLAUDE_CONFIG_DIR="+w.config, "TZ=UTC", "LANG=C.UTF-8")...)
}

// mcpdiff runs the CLI in the project and returns its stdout.
func (w *world) mcpdiff(stdin string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(w.tl.bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = w.ws, w.env(), strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("mcpdiff %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// claudeWrite is one write of Claude Code's own Edit or Write tool.
type claudeWrite struct {
	tool     string // "Edit" or "Write"
	file     string
	old, new string // Edit: old_string and new_string; Write: new is the content
}

// claude makes Claude Code's writes of one prompt the way Claude Code does in its
// auto mode with mcpdiff's hooks: PreToolUse, the write, PostToolUse.
func (w *world) claude(prompt string, writes ...claudeWrite) {
	w.t.Helper()
	for i, wr := range writes {
		nextSecond()
		path := w.Path(wr.file)
		input := map[string]any{"file_path": path}
		response := map[string]any{"filePath": path}
		before, err := os.ReadFile(path)
		exists := err == nil
		var after string
		switch wr.tool {
		case "Edit":
			if !strings.Contains(string(before), wr.old) {
				w.t.Fatalf("the story's Edit of %s: %q is not in the file", wr.file, wr.old)
			}
			after = strings.Replace(string(before), wr.old, wr.new, 1)
			input["old_string"], input["new_string"], input["replace_all"] = wr.old, wr.new, false
		case "Write":
			after = wr.new
			input["content"] = wr.new
			response["type"] = map[bool]string{true: "update", false: "create"}[exists]
		default:
			w.t.Fatalf("the story uses Claude Code's Edit and Write, not %s", wr.tool)
		}
		event := func(name string) string {
			ev := map[string]any{
				"session_id": "6391e023-b508-45eb-a8dc-b28416ca99d9", "prompt_id": prompt, "cwd": w.ws,
				"permission_mode": "auto", "hook_event_name": name, "tool_name": wr.tool, "tool_input": input,
				"tool_use_id": fmt.Sprintf("toolu_%02d", i),
			}
			if name == "PostToolUse" {
				ev["tool_response"] = response
			}
			data, _ := json.Marshal(ev)
			return string(data)
		}
		w.mcpdiff(event("PreToolUse"), "hook")
		w.Write(wr.file, after)
		w.mcpdiff(event("PostToolUse"), "hook")
	}
}

// nextSecond waits for the clock's next second. Edits are shown to the second, and
// the pictures give each one its own fixed time (see masks): edits made within one
// second could not be told apart on the screen.
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second).Sub(now))
}

// mcpEdit makes one edit_file call through `mcpdiff serve`, as any MCP client on
// stdio does.
func (w *world) mcpEdit(client, conv, file, old, new string) {
	w.t.Helper()
	nextSecond()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.tl.bin, "serve", "--root", w.ws)
	cmd.Dir, cmd.Env = w.ws, w.env()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	send := func(msg map[string]any) {
		msg["jsonrpc"] = "2.0"
		data, _ := json.Marshal(msg)
		if _, err := stdin.Write(append(data, '\n')); err != nil {
			w.t.Fatalf("mcpdiff serve: %v\n%s", err, stderr.String())
		}
	}
	await := func(id int) json.RawMessage {
		for lines.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(lines.Bytes(), &m) == nil && m.ID != nil && *m.ID == id {
				if m.Error != nil {
					w.t.Fatalf("mcpdiff serve answered %s", lines.Bytes())
				}
				return m.Result
			}
		}
		w.t.Fatalf("mcpdiff serve ended before answering request %d: %v\n%s", id, lines.Err(), stderr.String())
		return nil
	}
	send(map[string]any{"id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": client, "version": "1.0.0"}}})
	await(0)
	send(map[string]any{"method": "notifications/initialized"})
	send(map[string]any{"id": 1, "method": "tools/call", "params": map[string]any{"name": "edit_file", "arguments": map[string]any{
		"path": file, "old_string": old, "new_string": new, "mcp_conversation_id": conv}}})
	var result struct {
		IsError bool `json:"isError"`
	}
	if raw := await(1); json.Unmarshal(raw, &result) != nil || result.IsError {
		w.t.Fatalf("edit_file %s failed: %s", file, raw)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		w.t.Fatalf("mcpdiff serve: %v\n%s", err, stderr.String())
	}
}

// entry is what the pictures need of a history entry (`mcpdiff status --json`).
type entry struct {
	EditID    string `json:"edit_id"`
	Conv      string `json:"conversation_id"`
	Timestamp string `json:"timestamp"`
	Seq       int64  `json:"seq"`
	FilePath  string `json:"file_path"`
	ToolName  string `json:"tool_name"`
}

func (w *world) entries() []entry {
	w.t.Helper()
	var es []entry
	if err := json.Unmarshal([]byte(w.mcpdiff("", "status", "--json")), &es); err != nil {
		w.t.Fatal(err)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Seq < es[j].Seq })
	return es
}

// masks are the replacements that make the pictures the same on every run: each
// edit id (whole and as shown, its first 8 characters) and each time shown (in local
// time, which is UTC here as in the log) become fixed ones in the same order, edits
// 40 s apart and a new conversation 7 min after the last edit.
func masks(t *testing.T, es []entry) [][2]string {
	t.Helper()
	at := time.Date(2026, 11, 20, 9, 41, 0, 0, time.UTC)
	var out [][2]string
	for i, e := range es {
		if i > 0 {
			step := 40 * time.Second
			if e.Conv != es[i-1].Conv {
				step = 7 * time.Minute
			}
			at = at.Add(step)
		}
		sum := sha256.Sum256([]byte(fmt.Sprintf("mcpdiff screenshot edit %d", i)))
		h := hex.EncodeToString(sum[:])
		fake := h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
		out = append(out, [2]string{e.EditID, fake}, [2]string{e.EditID[:8], fake[:8]})
		logged, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil {
			t.Fatalf("edit %s: a log timestamp that is not RFC 3339: %q", e.EditID, e.Timestamp)
		}
		out = append(out, [2]string{logged.UTC().Format(time.DateTime), at.Format(time.DateTime)})
	}
	return out
}

// portMask replaces the bridge's port, which the review list shows.
func (w *world) portMask() [2]string {
	w.t.Helper()
	port := strings.TrimSuffix(filepath.Base(w.lockFile()), ".lock")
	return [2]string{"127.0.0.1:" + port, "127.0.0.1:" + "41027"[:min(len(port), 5)]}
}

// term is Neovim's terminal UI in a tmux pane of a fixed size, driven over RPC.
type term struct {
	w          *world
	tmux       string // tmux's socket
	nv         *nvimrpc.Nvim
	cols, rows int
}

// initLua is the user's init.lua: a colour scheme built into Neovim, line numbers,
// and the plugin from the checkout with setup(opts).
const initLua = `
vim.o.termguicolors = true
vim.o.background = "dark"
vim.cmd.colorscheme("default") -- Neovim 0.10's own dark scheme
vim.o.number = true
vim.o.tabstop = 4
vim.o.shiftwidth = 4
vim.o.linebreak = true
vim.opt.shortmess:append("I")
vim.opt.rtp:prepend(%q)
require("mcpdiff").setup(vim.json.decode(%q))
`

// startNvim runs Neovim on args in the project, in a cols × rows terminal, with
// setup(opts) (opts.bin is the binary under test), and waits for the bridge's lock
// file.
func (w *world) startNvim(cols, rows int, opts map[string]any, args ...string) *term {
	w.t.Helper()
	opts["bin"] = w.tl.bin
	optsJSON, _ := json.Marshal(opts)
	init := filepath.Join(w.base, "init.lua")
	if err := os.WriteFile(init, []byte(fmt.Sprintf(initLua, w.tl.repo, optsJSON)), 0o644); err != nil {
		w.t.Fatal(err)
	}
	conf := filepath.Join(w.base, "tmux.conf")
	// No status line: the pane is the whole picture. tmux-256color has what Neovim's UI
	// uses (italics, true colour through termguicolors).
	if err := os.WriteFile(conf, []byte("set -g default-terminal tmux-256color\nset -g status off\nset -sg escape-time 0\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
	tm := &term{w: w, tmux: filepath.Join(w.base, "tmux.sock"), cols: cols, rows: rows}
	listen := filepath.Join(w.base, "nvim.sock")
	command := []string{"env", "-i"}
	command = append(command, w.env()...)
	command = append(command, w.tl.nvim, "--listen", listen, "-u", init, "-i", "NONE", "-n")
	command = append(command, args...)
	var quoted []string
	for _, a := range command {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	tm.tmuxRun("-f", conf, "new-session", "-d", "-s", "shot", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", w.ws, strings.Join(quoted, " "))
	w.t.Cleanup(tm.close)
	eventually(w.t, "Neovim to listen on "+listen, func() bool {
		nv, err := nvimrpc.Dial(listen)
		if err != nil {
			return false
		}
		tm.nv = nv
		return true
	}, tm.dump)
	eventually(w.t, "the bridge's lock file", func() bool {
		locks, _ := filepath.Glob(filepath.Join(w.config, "ide", "*.lock"))
		return len(locks) == 1
	}, tm.dump)
	return tm
}

func (tm *term) tmuxRun(args ...string) string {
	tm.w.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-u", "-S", tm.tmux}, args...)...)
	cmd.Env = tm.w.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tm.w.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out)
}

// close quits Neovim (which ends the bridge) and tmux.
func (tm *term) close() {
	if tm.nv != nil {
		var pid int
		_ = tm.nv.Call("getpid", &pid)
		_ = tm.nv.Command("qa!")
		tm.nv.Close()
		// Waiting for Neovim to exit, bounded.
		testenv.WithinEvery(waitLimit, 20*time.Millisecond, func() bool { return pid <= 0 || syscall.Kill(pid, 0) != nil })
	}
	cmd := exec.Command("tmux", "-S", tm.tmux, "kill-server")
	cmd.Env = tm.w.env()
	_ = cmd.Run()
}

// cmd runs an Ex command as if typed.
func (tm *term) cmd(command string) {
	tm.w.t.Helper()
	if err := tm.nv.Command(command); err != nil {
		tm.w.t.Fatalf(":%s: %v\n%s", command, err, tm.dump())
	}
}

// lua runs a Lua chunk (its arguments are ...).
func (tm *term) lua(code string, result any, args ...any) {
	tm.w.t.Helper()
	if err := tm.nv.ExecLua(code, result, args...); err != nil {
		tm.w.t.Fatalf("lua: %v\n%s", err, code)
	}
}

// screen captures the pane, with colours.
func (tm *term) screen() *Screen {
	tm.w.t.Helper()
	s, err := Parse(tm.tmuxRun("capture-pane", "-p", "-e", "-N", "-t", "shot"), tm.cols)
	if err != nil {
		tm.w.t.Fatal(err)
	}
	if len(s.Rows) != tm.rows {
		tm.w.t.Fatalf("the capture has %d rows, the pane %d", len(s.Rows), tm.rows)
	}
	return s
}

func (tm *term) dump() string {
	cmd := exec.Command("tmux", "-S", tm.tmux, "capture-pane", "-p", "-t", "shot")
	cmd.Env = tm.w.env()
	out, _ := cmd.CombinedOutput()
	return "screen:\n" + string(out)
}

// settled waits until the screen shows every text in want and has stopped changing
// (the same in two captures in a row, so Neovim finished drawing), and returns it.
func (tm *term) settled(want ...string) *Screen {
	tm.w.t.Helper()
	var s *Screen
	var last string
	eventually(tm.w.t, fmt.Sprintf("the screen to show %q", want), func() bool {
		s = tm.screen()
		for _, text := range want {
			if !s.Contains(text) {
				last = ""
				return false
			}
		}
		now := fmt.Sprint(s.Rows)
		same := now == last
		last = now
		return same
	}, tm.dump)
	return s
}

// ideSession is Claude Code's side of the IDE protocol, found through the lock file
// as the CLI finds it.
type ideSession struct {
	t    *testing.T
	conn *websocket.Conn
	next int
}

// lockFile is the path of the bridge's lock file, <port>.lock.
func (w *world) lockFile() string {
	w.t.Helper()
	locks, _ := filepath.Glob(filepath.Join(w.config, "ide", "*.lock"))
	if len(locks) != 1 {
		w.t.Fatalf("lock files %v, want one", locks)
	}
	return locks[0]
}

func (w *world) connectIDE() *ideSession {
	w.t.Helper()
	lockFile := w.lockFile()
	data, err := os.ReadFile(lockFile)
	if err != nil {
		w.t.Fatal(err)
	}
	var lock struct {
		AuthToken string `json:"authToken"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		w.t.Fatalf("lock file %s: %v", lockFile, err)
	}
	port := strings.TrimSuffix(filepath.Base(lockFile), ".lock")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://127.0.0.1:"+port, &websocket.DialOptions{
		HTTPHeader:   http.Header{"X-Claude-Code-Ide-Authorization": {lock.AuthToken}},
		Subprotocols: []string{"mcp"},
	})
	if err != nil {
		w.t.Fatalf("connect to the bridge on port %s: %v", port, err)
	}
	w.t.Cleanup(func() { conn.CloseNow() })
	s := &ideSession{t: w.t, conn: conn}
	s.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "claude-code", "version": "2.1.330"}})
	s.send(map[string]any{"method": "notifications/initialized"})
	return s
}

func (s *ideSession) send(msg map[string]any) {
	s.t.Helper()
	msg["jsonrpc"] = "2.0"
	data, _ := json.Marshal(msg)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := s.conn.Write(ctx, websocket.MessageText, data); err != nil {
		s.t.Fatalf("send to the bridge: %v", err)
	}
}

// request sends a request and returns its id.
func (s *ideSession) request(method string, params any) int {
	s.t.Helper()
	id := s.next
	s.next++
	s.send(map[string]any{"id": id, "method": method, "params": params})
	return id
}

// await reads until the answer to request id and returns its result.
func (s *ideSession) await(id int) json.RawMessage {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for {
		_, data, err := s.conn.Read(ctx)
		if err != nil {
			s.t.Fatalf("waiting for the bridge's answer to request %d: %v", id, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(data, &m) == nil && m.ID != nil && *m.ID == id && m.Method == "" {
			if m.Result == nil {
				s.t.Fatalf("the bridge answered request %d with %s", id, data)
			}
			return m.Result
		}
	}
}

func (s *ideSession) call(method string, params any) json.RawMessage {
	s.t.Helper()
	return s.await(s.request(method, params))
}

// eventually polls cond until it holds, failing after waitLimit with what show says.
func eventually(t *testing.T, what string, cond func() bool, show func() string) {
	t.Helper()
	if !testenv.WithinEvery(waitLimit, 50*time.Millisecond, cond) {
		t.Fatalf("timed out waiting for %s\n%s", what, show())
	}
}

// theme draws the screens: the fonts of Debian's fonts-dejavu-core and fonts-symbola,
// at a size that stays legible when GitHub scales a picture down to its column.
var theme = Theme{Font: "DejaVu Sans Mono", Fallback: "Symbola", Advance: 1233.0 / 2048, FontSize: 15, LineHeight: 19, Padding: 12}

// scale is Chromium's device scale factor: pictures twice as sharp as the page.
const scale = 2

// render draws the screen to out (a PNG) with headless Chromium, in the colours of
// Neovim's Normal highlight group.
func (tm *term) render(s *Screen, out string) {
	t := tm.w.t
	t.Helper()
	var normal struct {
		FG string `msgpack:"fg"`
		BG string `msgpack:"bg"`
	}
	tm.lua(`local hl = vim.api.nvim_get_hl(0, { name = "Normal", link = false })
return { fg = string.format("#%06x", hl.fg), bg = string.format("#%06x", hl.bg) }`, &normal)
	th := theme
	var err error
	if th.FG, err = Hex(normal.FG); err != nil {
		t.Fatal(err)
	}
	if th.BG, err = Hex(normal.BG); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(tm.w.base, strings.TrimSuffix(filepath.Base(out), ".png")+".html")
	if err := os.WriteFile(page, s.HTML(th), 0o644); err != nil {
		t.Fatal(err)
	}
	w, h := th.Size(s)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	// The flags keep Chromium off the network (it has none here) and out of the user's
	// profile.
	cmd := exec.CommandContext(ctx, tm.w.tl.chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--user-data-dir="+filepath.Join(tm.w.base, "chromium"), "--hide-scrollbars",
		fmt.Sprintf("--force-device-scale-factor=%d", scale), fmt.Sprintf("--window-size=%d,%d", w, h),
		"--screenshot="+out, "file://"+page)
	cmd.Env = tm.w.env()
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, output)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("chromium wrote no picture: %v", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if cfg.Width != w*scale || cfg.Height != h*scale {
		t.Fatalf("%s is %dx%d, want %dx%d", out, cfg.Width, cfg.Height, w*scale, h*scale)
	}
}
