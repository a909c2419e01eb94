//go:build unix

package nvimtest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

func portClosed(port int) bool {
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), testenv.Scaled(time.Second))
	if err != nil {
		return true
	}
	conn.Close()
	return false
}

func TestLockFile(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		info := s.waitAttached()
		if info.Lock != filepath.Join(s.config, "ide", strconv.Itoa(info.Port)+".lock") {
			t.Fatalf("lock file %s, want it in $CLAUDE_CONFIG_DIR/ide named after port %d", info.Lock, info.Port)
		}
		lock := readLock(t, info.Lock)
		if lock.PID != s.pid || lock.Transport != "ws" || lock.IDEName != "Neovim" || lock.AuthToken != info.Token ||
			len(lock.WorkspaceFolders) == 0 || lock.WorkspaceFolders[0] != s.ws {
			t.Fatalf("lock file %+v: want Neovim's pid %d, ws transport and the cwd %s first", lock, s.pid, s.ws)
		}
		if st, _ := os.Stat(info.Lock); st.Mode().Perm() != 0o600 {
			t.Fatalf("lock file mode %v, want 0600", st.Mode().Perm())
		}
		if info.Version != mcpdiff.Version {
			t.Fatalf("the bridge reported version %q", info.Version)
		}
		// :cd moves the workspace, so `claude --ide` started there finds this Neovim.
		s.cdToSubfolder(info.Lock)
	})
}

func TestStopCommand(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		// No selection tracking: its autocmds go with the client, which is no leak.
		s, c := connected(t, nv, options{"track_selection": false})
		info, _ := s.bridge()
		path := s.writeFile("hello.txt", "hello\n")
		before := s.snapshot()
		answer := c.OpenDiff(path, "edited\n", tabName("hello.txt", 1))
		s.waitViews(1)
		s.cmd("McpDiffStop")
		// :McpDiffStop returns once the bridge is gone: no waiting needed.
		if _, err := os.Stat(info.Lock); !os.IsNotExist(err) {
			t.Fatalf("lock file still there after :McpDiffStop (%v)", err)
		}
		if !portClosed(info.Port) {
			t.Fatalf("port %d still open after :McpDiffStop", info.Port)
		}
		if testenv.ProcessAlive(info.JobPID) {
			t.Fatalf("bridge process %d still runs", info.JobPID)
		}
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tabName("hello.txt", 1))
		s.expectNoLeaks(before)
		if msgs := s.messages(); len(msgs) != 0 {
			t.Fatalf("a deliberate stop showed messages: %+v", msgs)
		}
		// And it starts again.
		s.cmd("McpDiffStart")
		s.waitAttached()
	})
}

func TestRestartAfterBridgeKilled(t *testing.T) {
	t.Parallel()
	eachConnected(t, options{"track_selection": false}, func(t *testing.T, s *session, c *ideClient) {
		info, _ := s.bridge()
		path := s.writeFile("hello.txt", "hello\n")
		before := s.snapshot()
		c.OpenDiff(path, "edited\n", tabName("hello.txt", 1))
		s.waitViews(1)
		if err := syscall.Kill(info.JobPID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		msgs := s.waitMessages()
		if len(msgs) != 1 || !strings.Contains(msgs[0].Msg, "exited unexpectedly") || !strings.Contains(msgs[0].Msg, ":McpDiffStart") {
			t.Fatalf("messages = %+v, want one that says the bridge died and how to restart", msgs)
		}
		if _, err := os.Stat(info.Lock); !os.IsNotExist(err) {
			t.Fatalf("the dead bridge's lock file is still there (%v)", err)
		}
		s.expectNoLeaks(before)

		s.cmd("McpDiffStart")
		again := s.waitAttached()
		if again.Port != info.Port || again.Token != info.Token {
			t.Fatalf("restarted on port %d, want the previous port %d and token", again.Port, info.Port)
		}
		// Claude Code reconnects with what it read from the old lock file.
		c2 := connect(t, info.Port, info.Token)
		answer := c2.OpenDiff(path, "edited\n", tabName("hello.txt", 2))
		s.waitViews(1)
		s.cmd("w")
		expectTexts(t, "openDiff", c2.Texts(answer, "openDiff"), "FILE_SAVED", "edited\n")
		if msgs := s.messages(); len(msgs) != 1 {
			t.Fatalf("messages after the restart: %+v", msgs)
		}
	})
}

func TestNeovimKilledEndsBridge(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		info := s.waitAttached()
		if err := syscall.Kill(s.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the bridge to exit after Neovim died", func() bool { return !testenv.ProcessAlive(info.JobPID) })
		if _, err := os.Stat(info.Lock); !os.IsNotExist(err) {
			t.Fatalf("lock file left behind by the bridge of a killed Neovim (%v)", err)
		}
		if !portClosed(info.Port) {
			t.Fatalf("port %d still open", info.Port)
		}
	})
}

func TestQuitWithPendingDiff(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		info, _ := s.bridge()
		path := s.writeFile("hello.txt", "hello\n")
		tab := tabName("hello.txt", 1)
		answer := c.OpenDiff(path, "edited\n", tab)
		s.waitViews(1)
		s.input(":qa!<CR>") // VimLeavePre
		expectTexts(t, "openDiff", c.Texts(answer, "openDiff"), "DIFF_REJECTED", tab)
		eventually(t, "Neovim and the bridge to exit", func() bool {
			return !testenv.ProcessAlive(s.pid) && !testenv.ProcessAlive(info.JobPID)
		})
		if _, err := os.Stat(info.Lock); !os.IsNotExist(err) {
			t.Fatalf("lock file left after quitting (%v)", err)
		}
	})
}

func TestVersionMismatch(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s := newSession(t, nv)
		// The plugin's version, as lua/mcpdiff/version.lua would say it.
		s.lua(`vim.opt.rtp:prepend(...); package.loaded["mcpdiff.version"] = "0.0.9"`, nil, repoRoot)
		s.setup(nil)
		msgs := s.waitMessages()
		want := fmt.Sprintf("mcpdiff: bin/mcpdiff is version %s but the Lua plugin is 0.0.9: rebuild it with `make` in %s", mcpdiff.Version, repoRoot)
		if len(msgs) != 1 || msgs[0].Msg != want {
			t.Fatalf("messages = %+v, want %q", msgs, want)
		}
		eventually(t, "the mismatched bridge to stop", func() bool {
			return len(s.lockFiles()) == 0
		})
	})
}

func TestMissingBinary(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		t.Run("configured", func(t *testing.T) {
			s := newSession(t, nv)
			s.setup(options{"bin": "/nonexistent/mcpdiff"})
			msgs := s.waitMessages()
			want := "mcpdiff: the binary /nonexistent/mcpdiff (option `bin`) is missing or not executable"
			if len(msgs) != 1 || msgs[0].Msg != want {
				t.Fatalf("messages = %+v, want %q", msgs, want)
			}
		})
		t.Run("not built", func(t *testing.T) {
			// A plugin checkout where `make` never ran.
			root := t.TempDir()
			for _, dir := range []string{"lua", "plugin"} {
				if err := os.Symlink(filepath.Join(repoRoot, dir), filepath.Join(root, dir)); err != nil {
					t.Fatal(err)
				}
			}
			s := newSession(t, nv)
			s.lua(`
local root = ...
vim.opt.rtp:prepend(root)
_G.test_messages = {}
vim.notify = function(msg, level) table.insert(_G.test_messages, { msg = msg, level = level }) end
require("mcpdiff").setup({})`, nil, root)
			msgs := s.waitMessages()
			want := fmt.Sprintf("mcpdiff: the binary %s/bin/mcpdiff is missing: run `make` in %s", root, root)
			if len(msgs) != 1 || msgs[0].Msg != want {
				t.Fatalf("messages = %+v, want %q", msgs, want)
			}
			var running bool
			s.lua(`return require("mcpdiff.bridge").running()`, &running)
			if running {
				t.Fatal("a bridge runs without a binary")
			}
		})
	})
}

func TestSetupValidation(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s := newSession(t, nv)
		s.setup(options{"auto_start": false, "colour": "red", "diff": map[string]any{"layot": "x"}})
		msgs := s.messages()
		want := "mcpdiff: unknown option(s) ignored: colour, diff.layot (see :help mcpdiff-config)"
		if len(msgs) != 1 || msgs[0].Msg != want {
			t.Fatalf("messages = %+v, want %q", msgs, want)
		}
		var ok bool
		s.lua(`_G.test_messages = {}; return require("mcpdiff").setup({ diff = { layout = "diagonal" } })`, &ok)
		msgs = s.messages()
		if ok || len(msgs) != 1 || !strings.Contains(msgs[0].Msg, "diff.layout") || !strings.Contains(msgs[0].Msg, "vertical, horizontal") {
			t.Fatalf("invalid layout: setup returned %v, messages %+v", ok, msgs)
		}
		if files := s.lockFiles(); len(files) != 0 {
			t.Fatalf("auto_start = false started the bridge: %v", files)
		}
		// Idempotent: setup again starts the bridge once.
		s.lua(`require("mcpdiff").setup({ bin = ... }); require("mcpdiff").setup({ bin = ... })`, nil, testenv.Binary)
		s.waitAttached()
		if files := s.lockFiles(); len(files) != 1 {
			t.Fatalf("lock files after two setup() calls: %v", files)
		}
	})
}

// A keymap option is a key or false: an empty string is refused by setup() with the
// option's name, rather than breaking every diff view (a buffer map of "" is an
// error) or the global maps.
func TestSetupRefusesAnEmptyKey(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s := newSession(t, nv)
		s.setup(options{"auto_start": false})
		for _, key := range []string{"accept", "reject", "accept_hunk", "reject_hunk", "next_hunk", "prev_hunk", "next_pending", "prev_pending", "preview_pending"} {
			var ok bool
			s.lua(`_G.test_messages = {}; return require("mcpdiff").setup({ auto_start = false, keymaps = { [...] = "" } })`, &ok, key)
			msgs := s.messages()
			if ok || len(msgs) != 1 || !strings.Contains(msgs[0].Msg, "keymaps."+key) || !strings.Contains(msgs[0].Msg, "or false") {
				t.Fatalf("keymaps.%s = \"\": setup returned %v, messages %+v", key, ok, msgs)
			}
		}
	})
}

// The commands of :McpDiffClaude and :McpDiffAgent are refused by setup() when they
// are no command (an empty string, a number): :McpDiffAgent stopped with a Lua stack
// trace on them.
func TestSetupRefusesBadCommands(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s := newSession(t, nv)
		s.setup(options{"auto_start": false})
		for _, tt := range []struct {
			terminal map[string]any
			option   string
		}{
			{map[string]any{"cmd": ""}, "terminal.cmd"},
			{map[string]any{"agents": map[string]any{"codex": 5}}, "terminal.agents"},
			{map[string]any{"agents": map[string]any{"gemini": ""}}, "terminal.agents"},
		} {
			var ok bool
			s.lua(`_G.test_messages = {}; return require("mcpdiff").setup({ auto_start = false, terminal = ... })`, &ok, tt.terminal)
			msgs := s.messages()
			if ok || len(msgs) != 1 || !strings.Contains(msgs[0].Msg, "invalid setup() option: "+tt.option) {
				t.Fatalf("terminal = %v: setup returned %v, messages %+v", tt.terminal, ok, msgs)
			}
		}
		s.lua(`_G.test_messages = {}`, nil)
		s.cmd("McpDiffAgent codex") // the defaults stand: says codex is not on PATH
		if msgs := s.messages(); len(msgs) != 1 || !strings.Contains(msgs[0].Msg, "codex") {
			t.Fatalf(":McpDiffAgent codex after the refused setups: %+v", msgs)
		}
	})
}

func TestHealth(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		s.cmd("checkhealth mcpdiff")
		var lines []string
		s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
		text := strings.Join(lines, "\n")
		for _, want := range []string{"mcpdiff: binary", mcpdiff.Version, "listening on 127.0.0.1", "lock file", "Claude Code",
			"mcpdiff: Claude Code hooks", "Claude Code started with :McpDiffClaude gets the hooks", "hooks install"} {
			if !strings.Contains(text, want) {
				t.Fatalf(":checkhealth mcpdiff lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "ERROR") {
			t.Fatalf(":checkhealth mcpdiff reports an error:\n%s", text)
		}
		// Once installed for claude started anywhere in the workspace, it says so.
		if out, err := s.command("hooks", "install").CombinedOutput(); err != nil {
			t.Fatalf("hooks install: %v %s", err, out)
		}
		s.cmd("tabnew")
		s.cmd("checkhealth mcpdiff")
		s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
		text = strings.Join(lines, "\n")
		local := filepath.Join(s.ws, ".claude", "settings.local.json")
		if !strings.Contains(text, "hooks installed in "+local) || !strings.Contains(text, "active for a claude started anywhere in "+s.ws) {
			t.Fatalf(":checkhealth mcpdiff after hooks install:\n%s", text)
		}
	})
}

// fakeClaude is a script standing in for claude: it writes its environment and
// its arguments (NUL-separated), then exits.
func fakeClaude(t *testing.T) (script, envFile, argsFile string) {
	dir := t.TempDir()
	envFile, argsFile = filepath.Join(dir, "env.txt"), filepath.Join(dir, "args")
	script = filepath.Join(dir, "fake-claude")
	body := "#!/bin/sh\nenv > " + envFile + ".tmp\nprintf '%s\\0' \"$@\" > " + argsFile + "\nmv " + envFile + ".tmp " + envFile + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, envFile, argsFile
}

// claudeRun waits for the fake claude to run and returns its environment and
// arguments.
func claudeRun(t *testing.T, envFile, argsFile string) (map[string]string, []string) {
	var data []byte
	eventually(t, "the fake claude to write its environment", func() bool {
		var err error
		data, err = os.ReadFile(envFile)
		return err == nil
	})
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	args, _ := os.ReadFile(argsFile)
	return env, strings.Split(strings.TrimSuffix(string(args), "\x00"), "\x00")
}

func TestClaudeTerminalEnvironment(t *testing.T) {
	t.Parallel()
	settings, err := exec.Command(testenv.Binary, "hooks", "settings").Output()
	if err != nil {
		t.Fatal(err)
	}
	eachNvim(t, func(t *testing.T, nv string) {
		script, envFile, argsFile := fakeClaude(t)
		s := newSession(t, nv)
		s.lua(`vim.env.no_proxy = "example.com,localhost"; vim.env.NO_PROXY = nil`, nil)
		s.setup(options{"terminal": map[string]any{"cmd": script, "args": []string{"--permission-mode", "default"}}})
		info := s.waitAttached()
		s.cmd("McpDiffClaude --resume")
		env, args := claudeRun(t, envFile, argsFile)
		want := map[string]string{
			"CLAUDE_CODE_SSE_PORT":   strconv.Itoa(info.Port),
			"ENABLE_IDE_INTEGRATION": "true",
			"FORCE_CODE_TERMINAL":    "true",
			"no_proxy":               "example.com,localhost,127.0.0.1,::1",
			"NO_PROXY":               "localhost,127.0.0.1,::1",
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s = %q, want %q", k, env[k], v)
			}
		}
		// The hooks that record Claude Code's own edits come first, as --settings.
		wantArgs := []string{"--settings", string(settings), "--permission-mode", "default", "--resume"}
		if strings.Join(args, "|") != strings.Join(wantArgs, "|") {
			t.Errorf("arguments %q, want %q", args, wantArgs)
		}
	})
}

// TestClaudeTerminalWithoutHooks: terminal.hooks = false, or settings of the user's
// own on the command line, pass no hooks (the latter says so).
func TestClaudeTerminalWithoutHooks(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		script, envFile, argsFile := fakeClaude(t)
		s := startNvim(t, nv, options{"terminal": map[string]any{"cmd": script, "hooks": false}})
		s.cmd("McpDiffClaude")
		if _, args := claudeRun(t, envFile, argsFile); len(args) != 1 || args[0] != "" {
			t.Errorf("terminal.hooks = false: arguments %q", args)
		}
		// Until it has exited, :McpDiffClaude would show it rather than start another.
		s.waitTerm("the fake claude to exit", func(st termState) bool { return len(st.Terms) == 0 })
		os.Remove(envFile)
		s.lua(`require("mcpdiff.config").values.terminal.hooks = true`, nil)
		s.cmd("McpDiffClaude --settings /my/settings.json")
		if _, args := claudeRun(t, envFile, argsFile); strings.Join(args, " ") != "--settings /my/settings.json" {
			t.Errorf("with the user's --settings: arguments %q", args)
		}
		s.waitTerm("the fake claude to exit", func(st termState) bool { return len(st.Terms) == 0 })
		found := false
		for _, m := range s.messages() {
			found = found || strings.Contains(m.Msg, "no mcpdiff hooks")
		}
		if !found {
			t.Errorf("no warning that the hooks were not passed: %v", s.messages())
		}
		// A binary whose `hooks settings` fails: the warning carries its message.
		failing := filepath.Join(t.TempDir(), "mcpdiff")
		if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'hooks settings: out of cheese' >&2\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(envFile)
		s.lua(`require("mcpdiff.config").values.bin = ...`, nil, failing)
		s.cmd("McpDiffClaude")
		claudeRun(t, envFile, argsFile)
		found = false
		for _, m := range s.messages() {
			found = found || strings.Contains(m.Msg, "will not be recorded: hooks settings: out of cheese")
		}
		if !found {
			t.Errorf("the warning does not say why the hooks settings failed: %v", s.messages())
		}
	})
}

// TestQuitRightAfterStart: `nvim +qa` with setup() in the config quits while the
// bridge's start is still scheduled; that must be silent and leave no lock file.
func TestQuitRightAfterStart(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nvimBin string) {
		base := t.TempDir()
		config := filepath.Join(base, "claude")
		initFile := filepath.Join(base, "init.lua")
		initCode := fmt.Sprintf("vim.opt.rtp:prepend(%q)\nrequire(\"mcpdiff\").setup({ bin = %q })\n", repoRoot, testenv.Binary)
		if err := os.WriteFile(initFile, []byte(initCode), 0o644); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			cmd := exec.Command(nvimBin, "--headless", "-u", initFile, "-i", "NONE", "-n", "+qa")
			cmd.Dir = base
			cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+config, "HOME="+base)
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Contains(string(out), "mcpdiff") {
				t.Fatalf("nvim +qa: %v\n%s", err, out)
			}
		}
		if locks, _ := filepath.Glob(filepath.Join(config, "ide", "*.lock")); len(locks) > 0 {
			t.Errorf("lock files left behind: %v", locks)
		}
	})
}

// The lock file does not wait for Neovim to answer: the plugin hands the bridge what
// it needs when it starts it, so Claude Code finds a Neovim that is busy right
// after its start-up (plugins loading, a slow first redraw).
func TestLockFileIsWrittenWhileNeovimIsBusy(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		base := t.TempDir()
		config := filepath.Join(base, "claude")
		cmd := exec.Command(nv, "--headless", "-u", "NONE", "-i", "NONE", "-n",
			"--cmd", "set rtp^="+repoRoot,
			"-c", fmt.Sprintf("lua require('mcpdiff').setup({ bin = %q })", testenv.Binary),
			// Busy (not :sleep, which still answers RPC requests) from just after the
			// bridge's job started, on the first turn of the event loop.
			"-c", "lua vim.schedule(function() local t = os.clock() while os.clock() - t < 30 do end end)")
		cmd.Env = testenv.Env("HOME="+base, "CLAUDE_CONFIG_DIR="+config, "XDG_STATE_HOME="+filepath.Join(base, "state"))
		cmd.Dir = base
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		var lock map[string]any
		eventually(t, "a lock file while Neovim is busy", func() bool {
			files, _ := filepath.Glob(filepath.Join(config, "ide", "*.lock"))
			if len(files) != 1 {
				return false
			}
			data, err := os.ReadFile(files[0])
			return err == nil && json.Unmarshal(data, &lock) == nil
		})
		if pid, _ := lock["pid"].(float64); int(pid) != cmd.Process.Pid {
			t.Fatalf("the lock file names pid %v, Neovim is %d", lock["pid"], cmd.Process.Pid)
		}
		if folders, _ := lock["workspaceFolders"].([]any); len(folders) == 0 || folders[0] != base {
			t.Fatalf("the lock file's workspaceFolders: %v, want %s first", lock["workspaceFolders"], base)
		}
	})
}
