//go:build unix

// Package nvimtest drives the whole Neovim half of mcpdiff end to end: a real
// headless Neovim running the Lua plugin from this checkout, the real `mcpdiff nvim`
// bridge it starts, and a WebSocket client that talks to the bridge exactly as
// Claude Code does. The user's side is driven through Neovim's RPC (commands, keys).
//
// Every test runs on each Neovim in $MCPDIFF_NVIMS (colon-separated; default
// /usr/bin/nvim and ~/.cache/nvim-0.10/bin/nvim when present). $MCPDIFF_BIN names a
// prebuilt binary; otherwise TestMain builds one.
package nvimtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
	nvimrpc "github.com/neovim/go-client/nvim"
)

// waitLimit bounds every wait; reaching it is a failure, never a pace.
var waitLimit = testenv.WaitLimit

// repoRoot is the checkout: the plugin's runtimepath entry.
var repoRoot = testenv.RepoRoot()

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Suite{})
}

// eachNvim runs fn as a subtest per Neovim binary.
func eachNvim(t *testing.T, fn func(t *testing.T, nvimBin string)) {
	t.Helper()
	testenv.EachNeovim(t, fn)
}

// eachStarted runs fn on a session of each Neovim, started with opts.
func eachStarted(t *testing.T, opts options, fn func(t *testing.T, s *session)) {
	t.Helper()
	eachNvim(t, func(t *testing.T, nv string) {
		fn(t, startNvim(t, nv, opts))
	})
}

// eventually polls cond until it holds, failing the test after waitLimit.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, cond)
}

// session is one headless Neovim with the plugin, in its own HOME, config and
// workspace folders.
type session struct {
	t      *testing.T
	v      *nvimrpc.Nvim
	nvim   string
	home   string
	config string // $CLAUDE_CONFIG_DIR
	ws     string // the workspace: Neovim's cwd
	pid    int    // Neovim's pid
	closed bool

	agentCalls int // tool calls agentEdit made, for their ids
}

// options are extra setup() options; "bin" defaults to the binary under test.
type options map[string]any

// startNvim starts Neovim, loads the plugin and calls setup(opts). Unless
// opts["auto_start"] is false it waits until the bridge has written its lock file.
func startNvim(t *testing.T, nvimBin string, opts options) *session {
	t.Helper()
	s := newSession(t, nvimBin)
	s.setup(opts)
	if opts["auto_start"] != false {
		s.waitAttached()
	}
	return s
}

func newSession(t *testing.T, nvimBin string) *session {
	t.Helper()
	base := t.TempDir()
	s := &session{t: t, nvim: nvimBin, home: filepath.Join(base, "home"), config: filepath.Join(base, "claude"), ws: filepath.Join(base, "ws")}
	for _, d := range []string{s.home, s.config, s.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := filepath.EvalSymlinks(s.ws)
	if err != nil {
		t.Fatal(err)
	}
	s.ws = ws
	testenv.ShareKey(t, s.home) // the stores tests write in process are Neovim's user's too
	env := testenv.Env(append(testenv.HomeVars(s.home),
		"CLAUDE_CONFIG_DIR="+s.config, "TERM=xterm-256color")...)
	s.v = testenv.EmbedNeovim(t, nvimBin, s.ws, env, "-u", "NONE")
	if err := s.v.Call("getpid", &s.pid); err != nil {
		t.Fatalf("getpid: %v", err)
	}
	t.Cleanup(s.close)
	return s
}

// initLua puts the checkout on the runtimepath, records notifications instead of
// showing them, and calls setup.
const initLua = `
local root, opts = ...
vim.opt.rtp:prepend(root)
vim.cmd("runtime plugin/mcpdiff.lua")
_G.test_messages = {}
vim.notify = function(msg, level)
  table.insert(_G.test_messages, { msg = msg, level = level or vim.log.levels.INFO })
end
require("mcpdiff").setup(opts)
`

func (s *session) setup(opts options) {
	s.t.Helper()
	lua := map[string]any{"bin": testenv.Binary}
	for k, v := range opts {
		lua[k] = v
	}
	if lua["bin"] == nil {
		delete(lua, "bin")
	}
	s.lua(initLua, nil, repoRoot, lua)
}

// lua runs a Lua chunk in Neovim (its arguments are `...`).
func (s *session) lua(code string, result any, args ...any) {
	s.t.Helper()
	if err := s.v.ExecLua(code, result, args...); err != nil {
		s.t.Fatalf("lua: %v\n%s", err, code)
	}
}

// luaValue runs Lua code in Neovim and returns what it returns, decoded as a T.
func luaValue[T any](s *session, code string, args ...any) T {
	s.t.Helper()
	var v T
	s.lua(code, &v, args...)
	return v
}

// cmd runs an Ex command.
func (s *session) cmd(command string) {
	s.t.Helper()
	if err := s.v.Command(command); err != nil {
		s.t.Fatalf(":%s: %v", command, err)
	}
}

// input types keys as the user would (processed asynchronously by Neovim).
func (s *session) input(keys string) {
	s.t.Helper()
	if _, err := s.v.Input(keys); err != nil {
		s.t.Fatalf("input %q: %v", keys, err)
	}
}

// bridgeInfo is what the plugin knows about its running bridge.
type bridgeInfo struct {
	Port    int    `msgpack:"port"`
	Lock    string `msgpack:"lock"`
	Token   string `msgpack:"token"`
	Version string `msgpack:"version"`
	JobPID  int    `msgpack:"job_pid"`
}

func (s *session) bridge() (info bridgeInfo, ok bool) {
	s.t.Helper()
	s.lua(`
local b = require("mcpdiff.bridge")
local info = b.info()
if not info then return { port = 0 } end
return { port = info.port, lock = info.lock, token = info.token, version = info.version, job_pid = b.job_pid() }`, &info)
	return info, info.Port != 0
}

// waitAttached waits until the bridge reported its port and its lock file exists.
func (s *session) waitAttached() bridgeInfo {
	s.t.Helper()
	var info bridgeInfo
	eventually(s.t, "the bridge to attach and write its lock file", func() bool {
		var ok bool
		info, ok = s.bridge()
		if !ok {
			return false
		}
		_, err := os.Stat(info.Lock)
		return err == nil
	})
	return info
}

// lockFile is the lock file as Claude Code reads it.
type lockFile struct {
	PID              int      `json:"pid"`
	WorkspaceFolders []string `json:"workspaceFolders"`
	IDEName          string   `json:"ideName"`
	Transport        string   `json:"transport"`
	AuthToken        string   `json:"authToken"`
}

func readLock(t *testing.T, path string) lockFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read lock file: %v", err)
	}
	var l lockFile
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("lock file %s: %v\n%s", path, err, data)
	}
	return l
}

// cdToSubfolder makes the folder sub of the workspace and has Neovim :cd into it,
// waiting until the lock file (at lock) names it as the workspace.
func (s *session) cdToSubfolder(lock string) {
	s.t.Helper()
	sub := filepath.Join(s.ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		s.t.Fatal(err)
	}
	s.cmd("cd " + sub)
	eventually(s.t, "the lock file to follow :cd", func() bool {
		l := readLock(s.t, lock)
		return len(l.WorkspaceFolders) > 0 && l.WorkspaceFolders[0] == sub
	})
}

// lockFiles lists the *.lock files of the session's lock directory.
func (s *session) lockFiles() []string {
	matches, _ := filepath.Glob(filepath.Join(s.config, "ide", "*.lock"))
	return matches
}

type message struct {
	Msg   string `msgpack:"msg"`
	Level int    `msgpack:"level"`
}

// messages returns the notifications the plugin showed so far.
func (s *session) messages() []message {
	s.t.Helper()
	return luaValue[[]message](s, `return _G.test_messages`)
}

// waitMessages waits for the plugin to show a message and returns all so far.
func (s *session) waitMessages() []message {
	s.t.Helper()
	var msgs []message
	eventually(s.t, "a message from the plugin", func() bool {
		msgs = s.messages()
		return len(msgs) > 0
	})
	return msgs
}

// writeFile writes a workspace file and returns its absolute path.
func (s *session) writeFile(name, content string) string {
	s.t.Helper()
	path := filepath.Join(s.ws, name)
	testenv.WriteFile(s.t, path, content)
	return path
}

// close quits Neovim and waits for the bridge process to end, showing the bridge's
// log when the test failed.
func (s *session) close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.t.Failed() {
		var log []string
		_ = s.v.ExecLua(`local b = package.loaded["mcpdiff.bridge"]; return b and b.stderr() or {}`, &log)
		s.t.Logf("bridge log:\n%s", strings.Join(log, "\n"))
	}
	testenv.QuitNeovim(s.t, s.v)
}

func writeString(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o644)
}

func itoa(n int) string { return fmt.Sprint(n) }
