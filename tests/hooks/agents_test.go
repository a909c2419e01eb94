package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// `mcpdiff hooks ... --agent NAME` and `mcpdiff hook --agent NAME` as a user and the
// agents run them: each agent's files merged, idempotent, and restored by uninstall;
// its gates named; hostile settings files refused; Copilot CLI never refused by a
// failing hook.

// agentEnv puts every agent's home inside the test's home.
func (w *ws) agentEnv() []string {
	home := filepath.Join(filepath.Dir(w.dir), "home")
	return append(testenv.HomeVars(home), "CODEX_HOME="+filepath.Join(home, ".codex"), "COPILOT_HOME="+filepath.Join(home, ".copilot"))
}

func (w *ws) agentHooks(args ...string) (string, string, int) {
	return testenv.Run(w.t, w.command(w.agentEnv(), append([]string{"hooks"}, args...)...))
}

func (w *ws) home(rel string) string {
	return filepath.Join(filepath.Dir(w.dir), "home", filepath.FromSlash(rel))
}

func readOr(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "<none>"
	}
	return string(data)
}

// TestAgentHooksInstallUninstall: for every agent and scope, install merges into what
// is there, a second install changes nothing, status says installed, and uninstall
// gives back every file byte for byte (or removes the files it made).
func TestAgentHooksInstallUninstall(t *testing.T) {
	t.Parallel()
	type file struct{ path, before string }
	cases := []struct {
		agent, scope string
		files        func(w *ws) []file // the files install touches, with what the user had
		wantIn       []string           // what the first file holds after install
	}{
		{"codex", "user", func(w *ws) []file {
			return []file{{w.home(".codex/hooks.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}` + "\n"},
				{w.home(".codex/config.toml"), "model = \"gpt-5.5\"\n\n[projects.\"/x\"]\ntrust_level = \"trusted\"\n"}}
		}, []string{`"PreToolUse"`, `"^apply_patch$"`, `hook --agent codex`, `"UserPromptSubmit"`}},
		{"codex", "project", func(w *ws) []file {
			return []file{{w.Path(".codex/hooks.json"), ""}, {w.home(".codex/config.toml"), ""}}
		}, []string{`hook --agent codex`}},
		{"gemini", "user", func(w *ws) []file {
			return []file{{w.home(".gemini/settings.json"), `{"security": {"auth": {"selectedType": "gemini-api-key"}}}` + "\n"}}
		}, []string{`"BeforeTool"`, `"^(write_file|replace)$"`, `"timeout": 10000`, `"BeforeAgent"`, `hook --agent gemini`}},
		{"gemini", "project", func(w *ws) []file { return []file{{w.Path(".gemini/settings.json"), ""}} }, []string{`"AfterTool"`}},
		{"copilot", "user", func(w *ws) []file { return []file{{w.home(".copilot/hooks/mcpdiff.json"), ""}} },
			[]string{`"version": 1`, `"bash":`, `hook --agent copilot --event preToolUse`, `--event postToolUse`, `--event userPromptSubmitted`}},
		{"copilot", "project", func(w *ws) []file { return []file{{w.Path(".github/hooks/mcpdiff.json"), ""}} }, []string{`"preToolUse"`}},
		{"cursor", "user", func(w *ws) []file {
			return []file{{w.home(".cursor/hooks.json"), `{"version": 1, "hooks": {"afterFileEdit": [{"command": "prettier"}]}}` + "\n"}}
		}, []string{`"preToolUse"`, `"afterFileEdit"`, `"beforeSubmitPrompt"`, `hook --agent cursor`, `"prettier"`}},
		{"cursor", "project", func(w *ws) []file { return []file{{w.Path(".cursor/hooks.json"), ""}} }, []string{`"postToolUse"`}},
		{"opencode", "user", func(w *ws) []file { return []file{{w.home(".config/opencode/plugin/mcpdiff.js"), ""}} },
			[]string{`"tool.execute.before"`, `spawnSync`, `timeout: 2000`, testenv.Binary}},
		{"opencode", "project", func(w *ws) []file {
			return []file{{w.Path("opencode.json"), `{"$schema": "https://opencode.ai/config.json", "plugin": ["opencode-wakatime"]}` + "\n"}}
		}, []string{`"opencode-wakatime"`, `"file://` + "HOME/.local/share/mcpdiff/opencode/mcpdiff.js"}},
	}
	for _, c := range cases {
		t.Run(c.agent+"-"+c.scope, func(t *testing.T) {
			w := newWS(t)
			files := c.files(w)
			for i, f := range files {
				if strings.HasPrefix(f.before, "{") { // as the agents write their files
					var b bytes.Buffer
					if err := json.Indent(&b, []byte(f.before), "", "  "); err != nil {
						t.Fatal(err)
					}
					files[i].before = strings.TrimSpace(b.String()) + "\n"
					f = files[i]
				}
				if f.before != "" {
					testenv.WriteFile(t, f.path, f.before)
				}
			}
			out, errOut, code := w.agentHooks("install", "--agent", c.agent, "--scope", c.scope)
			if code != 0 {
				t.Fatalf("install: exit %d %q %q", code, out, errOut)
			}
			installed := readOr(files[0].path)
			// What install says it ran is each of the commands it installed.
			if c.agent == "copilot" && (!strings.Contains(out, "--event preToolUse;") || !strings.Contains(out, "--event userPromptSubmitted)")) {
				t.Errorf("install names only some of its commands: %q", out)
			}
			for _, want := range c.wantIn {
				want = strings.ReplaceAll(want, "HOME/", w.home("")+"/")
				if !strings.Contains(installed, want) {
					t.Errorf("%s after install lacks %s:\n%s", files[0].path, want, installed)
				}
			}
			if f := files[0]; f.before != "" && c.agent != "opencode" {
				var before, after map[string]any
				_ = json.Unmarshal([]byte(f.before), &before)
				_ = json.Unmarshal([]byte(installed), &after)
				for k := range before {
					if _, ok := after[k]; !ok {
						t.Errorf("install dropped %q from %s", k, f.path)
					}
				}
			}
			var states []string
			for _, f := range files {
				states = append(states, readOr(f.path))
			}
			if out, _, code := w.agentHooks("install", "--agent", c.agent, "--scope", c.scope); code != 0 || !strings.Contains(out, "already") {
				t.Errorf("second install: exit %d %q", code, out)
			}
			for i, f := range files {
				if readOr(f.path) != states[i] {
					t.Errorf("the second install changed %s", f.path)
				}
			}
			out, _, _ = w.agentHooks("status", "--agent", c.agent)
			if !strings.Contains(out, "installed: ") {
				t.Errorf("status after install:\n%s", out)
			}
			if out, errOut, code := w.agentHooks("status", "--agent", c.agent, "--scope", c.scope); code != 0 || !strings.Contains(out, "installed: ") {
				t.Errorf("status --scope %s after install: exit %d %q %q", c.scope, code, out, errOut)
			}
			if out, errOut, code := w.agentHooks("uninstall", "--agent", c.agent, "--scope", c.scope); code != 0 || !strings.Contains(out, "removed") {
				t.Fatalf("uninstall: exit %d %q %q", code, out, errOut)
			}
			for _, f := range files {
				want := f.before
				if want == "" {
					want = "<none>"
				}
				if got := readOr(f.path); got != want {
					t.Errorf("%s after uninstall:\n%s\nwant:\n%s", f.path, got, want)
				}
			}
		})
	}
}

// TestCodexTrustEntries: the trusted_hash entries are the SHA-256 of the hook group
// as Codex computes it, keyed by the hooks file's path, event and place; a
// reinstall with another binary rewrites them; uninstall removes only them.
func TestCodexTrustEntries(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	if _, errOut, code := w.agentHooks("install", "--agent", "codex"); code != 0 {
		t.Fatal(errOut)
	}
	config := readOr(w.home(".codex/config.toml"))
	hooksFile := w.home(".codex/hooks.json")
	group := map[string]any{"event_name": "pre_tool_use", "matcher": "^apply_patch$",
		"hooks": []any{map[string]any{"async": false, "command": testenv.Binary + " hook --agent codex", "timeout": 10, "type": "command"}}}
	canon, _ := json.Marshal(group)
	sum := sha256.Sum256(canon)
	want := `[hooks.state."` + hooksFile + `:pre_tool_use:0:0"]` + "\ntrusted_hash = \"sha256:" + hex.EncodeToString(sum[:]) + `"`
	if !strings.Contains(config, want) || strings.Count(config, "trusted_hash") != 3 {
		t.Fatalf("config.toml:\n%s\nwant among three entries:\n%s", config, want)
	}
	out, _, _ := w.agentHooks("status", "--agent", "codex")
	if !strings.Contains(out, "active:") || strings.Contains(out, "closed:") {
		t.Fatalf("status:\n%s", out)
	}
	// A project install: Codex loads .codex/ only in a trusted project; status says so
	// and names the command that opens it; install does not open it.
	if _, errOut, code := w.agentHooks("install", "--agent", "codex", "--scope", "project"); code != 0 {
		t.Fatal(errOut)
	}
	out, _, _ = w.agentHooks("status", "--agent", "codex")
	if !strings.Contains(out, "closed: Codex loads "+w.Path(".codex/hooks.json")+" only in a trusted project") || !strings.Contains(out, "run `codex` in "+w.dir) {
		t.Fatalf("status of an untrusted project:\n%s", out)
	}
	if strings.Contains(readOr(w.home(".codex/config.toml")), "trust_level") {
		t.Fatal("install trusted the project itself")
	}
	for _, scope := range []string{"project", "user"} {
		if _, errOut, code := w.agentHooks("uninstall", "--agent", "codex", "--scope", scope); code != 0 {
			t.Fatal(errOut)
		}
	}
	if _, err := os.Stat(w.home(".codex/config.toml")); err == nil {
		t.Fatalf("config.toml left after uninstall:\n%s", readOr(w.home(".codex/config.toml")))
	}
}

// TestGateStatus: Copilot CLI's trusted folders and Gemini CLI's folder trust.
func TestGateStatus(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	for _, a := range []string{"copilot", "gemini"} {
		if _, errOut, code := w.agentHooks("install", "--agent", a, "--scope", "project"); code != 0 {
			t.Fatal(errOut)
		}
	}
	out, _, _ := w.agentHooks("status", "--agent", "copilot")
	if !strings.Contains(out, "closed: Copilot CLI loads "+w.Path(".github/hooks")+" only in a trusted folder") {
		t.Fatalf("copilot status:\n%s", out)
	}
	testenv.WriteFile(t, w.home(".copilot/config.json"), `{"trustedFolders": ["`+w.dir+`"]}`)
	if out, _, _ = w.agentHooks("status", "--agent", "copilot"); strings.Contains(out, "closed:") || !strings.Contains(out, "active:") {
		t.Fatalf("copilot status in a trusted folder:\n%s", out)
	}
	if out, _, _ = w.agentHooks("status", "--agent", "gemini"); strings.Contains(out, "closed:") {
		t.Fatalf("gemini status without folder trust:\n%s", out)
	}
	testenv.WriteFile(t, w.home(".gemini/settings.json"), `{"security": {"folderTrust": {"enabled": true}}}`)
	out, _, _ = w.agentHooks("status", "--agent", "gemini")
	if !strings.Contains(out, "folder trust is on and "+w.dir+" is not trusted") || !strings.Contains(out, "run `gemini` in "+w.dir) {
		t.Fatalf("gemini status in an untrusted folder:\n%s", out)
	}
	out, _, _ = w.agentHooks("status", "--agent", "all", "--json")
	var reports []map[string]any
	if err := json.Unmarshal([]byte(out), &reports); err != nil {
		t.Fatalf("status --agent all --json: %v\n%s", err, out)
	}
}

// TestHostileSettingsFiles: a project's settings file that is a symlink out of the
// project, or a .claude (.codex) folder that is one, is refused naming the link; a
// 10 MB file and a deeply nested one are refused quickly with a clear error; nothing
// is written anywhere.
func TestHostileSettingsFiles(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	outside := testenv.TempDir(t)
	mine := filepath.Join(outside, "settings.json")
	testenv.WriteFile(t, mine, `{"mine": true}`+"\n")
	check := func(name string, args []string, link string) {
		t.Helper()
		out, errOut, code := w.agentHooks(args...)
		if code != 1 || !strings.Contains(errOut, link) || !strings.Contains(errOut, "outside the project") {
			t.Errorf("%s: exit %d %q %q; want a refusal naming %s", name, code, out, errOut, link)
		}
		if got := readOr(mine); got != `{"mine": true}`+"\n" {
			t.Fatalf("%s changed the file outside the project: %q", name, got)
		}
	}
	if err := os.Symlink(mine, w.Path(".claude/settings.local.json")); err != nil {
		os.MkdirAll(w.Path(".claude"), 0o755)
		if err := os.Symlink(mine, w.Path(".claude/settings.local.json")); err != nil {
			t.Fatal(err)
		}
	}
	check("settings.local.json linked out", []string{"install"}, w.Path(".claude/settings.local.json"))
	check("uninstall through it", []string{"uninstall"}, w.Path(".claude/settings.local.json"))
	os.RemoveAll(w.Path(".claude"))
	if err := os.Symlink(outside, w.Path(".claude")); err != nil {
		t.Fatal(err)
	}
	check(".claude linked out", []string{"install", "--scope", "project"}, w.Path(".claude"))
	if err := os.Symlink(outside, w.Path(".codex")); err != nil {
		t.Fatal(err)
	}
	check(".codex linked out", []string{"install", "--agent", "codex", "--scope", "project"}, w.Path(".codex"))
	os.Remove(w.Path(".claude"))
	// A link's target is data from the repository: printed escaped, never as escape
	// sequences for the terminal (a new title, a cleared screen, a forged line).
	os.MkdirAll(w.Path(".claude"), 0o755)
	if err := os.Symlink("/tmp/\x1b]0;owned\a\x9b2J\nforged", w.Path(".claude/settings.local.json")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"install"}, {"uninstall"}, {"status"}} {
		out, errOut, _ := w.agentHooks(args...)
		if i := strings.IndexFunc(strings.TrimSuffix(out+errOut, "\n"), func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }); i >= 0 ||
			strings.Contains(out+errOut, "\x9b") || strings.Contains(out+errOut, "\nforged") {
			t.Errorf("%v printed a link's target raw: %q %q", args, out, errOut)
		}
	}
	os.RemoveAll(w.Path(".claude"))

	// 10 MB of nesting: refused by size, at once, without a crash.
	big := strings.Repeat(`{"a":`, 1<<20) + "1" + strings.Repeat("}", 1<<20)
	big = big + strings.Repeat(" ", 10<<20-len(big))
	w.Write(".claude/settings.json", big)
	start := time.Now()
	_, errOut, code := w.agentHooks("install", "--scope", "project")
	if code != 1 || !strings.Contains(errOut, "settings.json") || !strings.Contains(errOut, "MB") || time.Since(start) > testenv.Scaled(10*time.Second) {
		t.Errorf("10 MB settings file: exit %d %q after %v", code, errOut, time.Since(start))
	}
	// 20 KB of nesting: refused by depth; the file stays as it was.
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	w.Write(".claude/settings.json", `{"x": `+deep+`}`)
	_, errOut, code = w.agentHooks("install", "--scope", "project")
	if code != 1 || !strings.Contains(errOut, "nested too deeply") {
		t.Errorf("deeply nested settings file: exit %d %q", code, errOut)
	}
	if got := w.Read(".claude/settings.json"); got != `{"x": `+deep+`}` {
		t.Error("a refused settings file changed")
	}
	// Nesting within the limit is written back in linear size.
	nested := strings.Repeat(`{"a":`, 60) + "1" + strings.Repeat("}", 60)
	w.Write(".claude/settings.json", `{"x": `+nested+`}`)
	if _, errOut, code := w.agentHooks("install", "--scope", "project"); code != 0 {
		t.Fatalf("nesting within the limit: %q", errOut)
	}
	if n := len(w.Read(".claude/settings.json")); n > 200<<10 {
		t.Errorf("the settings file grew to %d bytes", n)
	}
}

// TestCopilotHookNeverFails: Copilot CLI refuses every edit when a hook fails, so
// `mcpdiff hook --agent copilot` exits 0 whatever it is given, saying why on stderr.
func TestCopilotHookNeverFails(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	w.Write("a.txt", "a\n")
	run := func(input string, args ...string) (string, string, int) {
		cmd := w.command(w.agentEnv(), append([]string{"hook", "--agent", "copilot"}, args...)...)
		cmd.Stdin = strings.NewReader(input)
		return testenv.Run(t, cmd)
	}
	pre := `{"sessionId":"s","timestamp":1,"cwd":"` + w.dir + `","toolName":"edit","toolArgs":{"path":"` + w.Path("a.txt") + `","old_str":"a","new_str":"b"}}`
	for _, c := range []struct {
		input string
		args  []string
	}{
		{"{", []string{"--event", "preToolUse"}},
		{pre, []string{"--event", "preToolUse", "--bogus"}},
		{pre, []string{"--event"}},
		{"", []string{"--event", "postToolUse"}},
		{`{"toolName":"edit","toolArgs":{}}`, []string{"--event", "preToolUse"}},
	} {
		out, errOut, code := run(c.input, c.args...)
		if code != 0 || out != "" || errOut == "" {
			t.Errorf("%v %q: exit %d, stdout %q, stderr %q; want 0, nothing, a message", c.args, c.input, code, out, errOut)
		}
	}
	// A read-only store: the write goes on, nothing is recorded, exit 0.
	if out, errOut, code := run(pre, "--event", "preToolUse"); code != 0 || out != "" {
		t.Fatalf("pre: %d %q %q", code, out, errOut)
	}
	if err := exec.Command("chattr", "+i", w.Path(".mcp/edit_history/logs")).Run(); err == nil {
		defer exec.Command("chattr", "-i", w.Path(".mcp/edit_history/logs")).Run()
		w.Write("a.txt", "b\n")
		post := strings.Replace(pre, `"timestamp":1`, `"timestamp":2,"toolResult":{"resultType":"success"}`, 1)
		if out, errOut, code := run(post, "--event", "postToolUse"); code != 0 || out != "" || !strings.Contains(errOut, "not recorded") {
			t.Errorf("post with a read-only store: exit %d %q %q", code, out, errOut)
		}
	}
}

// TestTitlesInStatusAndShow: a conversation's title (its prompt's first line) shows
// in `mcpdiff status` (a last column) and `mcpdiff show`, and its id may be shortened.
func TestTitlesInStatusAndShow(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	w.Write("a.txt", "a\n")
	run := func(input string) {
		cmd := w.command(w.agentEnv(), "hook", "--agent", "gemini")
		cmd.Stdin = strings.NewReader(input)
		if out, errOut, code := testenv.Run(t, cmd); code != 0 || out != "" || errOut != "" {
			t.Fatalf("hook: exit %d %q %q", code, out, errOut)
		}
	}
	run(`{"session_id":"g","cwd":"` + w.dir + `","hook_event_name":"BeforeAgent","prompt":"Make a louder\nplease"}`)
	tool := `"tool_name":"write_file","tool_input":{"file_path":"` + w.Path("a.txt") + `","content":"A\n"}`
	run(`{"session_id":"g","cwd":"` + w.dir + `","hook_event_name":"BeforeTool",` + tool + `}`)
	w.Write("a.txt", "A\n")
	run(`{"session_id":"g","cwd":"` + w.dir + `","hook_event_name":"AfterTool",` + tool + `,"tool_response":{}}`)
	out, _, code := testenv.Run(t, w.command(w.agentEnv(), "status"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasSuffix(lines[0], "TITLE") || !strings.HasSuffix(lines[1], "Make a louder") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	var entries []history.Entry
	out, _, _ = testenv.Run(t, w.command(w.agentEnv(), "status", "--json"))
	if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries) != 1 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	conv := entries[0].ConversationID
	if !strings.Contains(lines[1], conv[:len("gemini_")+4]) {
		t.Fatalf("status shows no id of conversation %s:\n%s", conv, lines[1])
	}
	out, _, code = testenv.Run(t, w.command(w.agentEnv(), "show", conv[:12]))
	if code != 0 || !strings.Contains(out, "prompt: Make a louder\n") || !strings.Contains(out, "+A") {
		t.Fatalf("show %s: exit %d\n%s", conv[:12], code, out)
	}
}
