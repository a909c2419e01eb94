//go:build unix

package clients

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Every agent's own edits, recorded through its hooks: each real CLI, offline against
// the scripted fake model API, with the hooks put in place by `mcpdiff hooks install
// --agent NAME` alone (for Codex, no bypass flag: its trust entries come from
// install). Two prompts edit a file, create one and edit the first again; the history
// has one entry per file with the right bytes, titles and conversations; rejecting
// the first edit keeps the later one; a write to a file with unsaved changes in a
// headless Neovim is refused, and that Neovim says so.

// agentCLI is how one agent runs in the test.
type agentCLI struct {
	name, pkg, bin, npm string
	source              string // the history's source of its entries
	setup               func(t *testing.T, p *project)
	argv                func(prompt string) []string
	// edit and create are the model's calls that change a.txt and create new.txt.
	edit   func(p *project, old, new string) scriptCall
	create func(p *project, content string) scriptCall
	// patch: the first prompt's edit and create are one call (Codex's apply_patch).
	patch func(p *project) scriptCall
	tools []string // tool_name of the three entries
}

var agentCLIs = []agentCLI{
	{name: "codex", pkg: "codex", bin: "codex", npm: "@openai/codex@0.169.0", source: "codex",
		setup: func(t *testing.T, p *project) {
			home := filepath.Join(p.home(), ".codex")
			// Codex 0.169 reaches out to the internet on each run unless told not to
			// (the network namespace would stop it anyway).
			writeTestFile(t, filepath.Join(home, "config.toml"), `model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:8124/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"

[analytics]
enabled = false
`)
		},
		argv: func(prompt string) []string {
			return []string{"env", "FAKE_OPENAI_KEY=test", "codex", "exec", "--skip-git-repo-check", prompt}
		},
		edit: func(p *project, old, new string) scriptCall {
			return scriptCall{Name: "apply_patch", Input: "*** Begin Patch\n*** Update File: a.txt\n@@\n-" + old + "\n+" + new + "\n*** End Patch\n"}
		},
		patch: func(p *project) scriptCall {
			return scriptCall{Name: "apply_patch", Input: "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n" +
				"*** Add File: new.txt\n+created\n*** End Patch\n"}
		},
		tools: []string{"apply_patch", "apply_patch", "apply_patch"}},
	{name: "gemini", pkg: "gemini-cli", bin: "gemini", npm: "@google/gemini-cli@0.61.0", source: "gemini-cli",
		setup: func(t *testing.T, p *project) {
			writeTestFile(t, filepath.Join(p.home(), ".gemini", "settings.json"),
				`{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false}}`)
		},
		argv: func(prompt string) []string {
			return []string{"env", "GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8124", "GEMINI_CLI_TRUST_WORKSPACE=true",
				"gemini", "-p", prompt, "--approval-mode", "yolo", "-m", "gemini-2.5-flash"}
		},
		edit: func(p *project, old, new string) scriptCall {
			return scriptCall{Name: "replace", Args: map[string]any{"file_path": filepath.Join(p.dir, "a.txt"), "old_string": old, "new_string": new, "instruction": "change it"}}
		},
		create: func(p *project, content string) scriptCall {
			return scriptCall{Name: "write_file", Args: map[string]any{"file_path": filepath.Join(p.dir, "new.txt"), "content": content}}
		},
		tools: []string{"replace", "write_file", "replace"}},
	{name: "opencode", pkg: "opencode", bin: "opencode", npm: "opencode-ai@1.18.33", source: "opencode",
		setup: func(t *testing.T, p *project) {
			writeTestFile(t, filepath.Join(p.home(), ".config", "opencode", "opencode.json"), `{
  "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake",
    "options": {"baseURL": "http://127.0.0.1:8124/v1", "apiKey": "dummy"}, "models": {"fake": {"name": "fake"}}}},
  "model": "fake/fake", "small_model": "fake/fake", "autoupdate": false, "share": "disabled",
  "permission": {"edit": "allow", "bash": "allow"}
}`)
		},
		argv: func(prompt string) []string {
			return append([]string{"env", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
				"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "opencode", "run"}, strings.Fields(prompt)...)
		},
		edit: func(p *project, old, new string) scriptCall {
			return scriptCall{Name: "edit", Args: map[string]any{"filePath": filepath.Join(p.dir, "a.txt"), "oldString": old, "newString": new}}
		},
		create: func(p *project, content string) scriptCall {
			return scriptCall{Name: "write", Args: map[string]any{"filePath": filepath.Join(p.dir, "new.txt"), "content": content}}
		},
		tools: []string{"edit", "write", "edit"}},
	{name: "copilot", pkg: "copilot", bin: "copilot", npm: "@github/copilot@1.0.102", source: "copilot-cli",
		setup: func(t *testing.T, p *project) {},
		argv: func(prompt string) []string {
			return []string{"env", "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:8124/v1", "COPILOT_PROVIDER_API_KEY=dummy",
				"COPILOT_MODEL=gpt-4.1", "copilot", "-p", prompt, "--allow-all-tools"}
		},
		edit: func(p *project, old, new string) scriptCall {
			return scriptCall{Name: "edit", Args: map[string]any{"path": filepath.Join(p.dir, "a.txt"), "old_str": old, "new_str": new}}
		},
		create: func(p *project, content string) scriptCall {
			return scriptCall{Name: "create", Args: map[string]any{"path": filepath.Join(p.dir, "new.txt"), "file_text": content}}
		},
		tools: []string{"edit", "create", "edit"}},
}

func (p *project) home() string { return filepath.Join(filepath.Dir(p.dir), "home") }

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// statusEntry is an entry of `mcpdiff status --json`.
type statusEntry struct {
	EditID            string  `json:"edit_id"`
	ConversationID    string  `json:"conversation_id"`
	ConversationTitle string  `json:"conversation_title"`
	Operation         string  `json:"operation"`
	FilePath          string  `json:"file_path"`
	ToolName          string  `json:"tool_name"`
	Status            string  `json:"status"`
	HashBefore        *string `json:"hash_before"`
	HashAfter         *string `json:"hash_after"`
	Source            string  `json:"source"`
}

func (p *project) mcpdiff(args ...string) (string, string, int) {
	cmd := exec.Command(testenv.Binary, args...)
	cmd.Dir, cmd.Env = p.dir, p.env
	return testenv.Run(p.t, cmd)
}

func (p *project) status() []statusEntry {
	p.t.Helper()
	out, errOut, code := p.mcpdiff("status", "--json")
	var entries []statusEntry
	if code != 0 || json.Unmarshal([]byte(out), &entries) != nil {
		p.t.Fatalf("mcpdiff status --json: exit %d %q %q", code, out, errOut)
	}
	return entries
}

func hashOr(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

const (
	firstPrompt  = "first prompt: edit and create"
	secondPrompt = "second prompt: edit again"
	thirdPrompt  = "third prompt: edit the unsaved file"
)

func TestAgentsOwnEdits(t *testing.T) {
	t.Parallel()
	if err := exec.Command("unshare", "-rn", "sh", "-c", "ip link set lo up").Run(); err != nil {
		testenv.SkipWithout(t, fmt.Sprintf("the CLIs run in a network namespace with only loopback, and `unshare -rn sh -c 'ip link set lo up'` failed here (%v)", err))
	}
	nvims := testenv.Neovims(t)
	for _, a := range agentCLIs {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(clientsDir, a.pkg, "node_modules", ".bin", a.bin)
			if _, err := os.Stat(bin); err != nil {
				testenv.SkipWithout(t, fmt.Sprintf("%s is not installed at %s: run `npm install %s` in %s (.ci/run does)", a.bin, bin, a.npm, filepath.Join(clientsDir, a.pkg)))
			}
			p := newProject(t, filepath.Dir(bin))
			if a.name == "copilot" { // its 235 MB unpack is done once, by .ci/run
				p.env = append(p.env, "COPILOT_CACHE_HOME="+filepath.Join(clientsDir, "copilot-cache"))
			}
			writeTestFile(t, filepath.Join(p.dir, "a.txt"), "one\ntwo\nthree\nfour\n")
			a.setup(t, p)
			if out, errOut, code := p.mcpdiff("hooks", "install", "--agent", a.name); code != 0 {
				t.Fatalf("mcpdiff hooks install --agent %s: exit %d %q %q", a.name, code, out, errOut)
			}
			first := []scriptCall{}
			if a.patch != nil {
				first = append(first, a.patch(p))
			} else {
				first = append(first, a.edit(p, "two", "TWO"), a.create(p, "created\n"))
			}
			script := []scriptedPrompt{
				{Prompt: firstPrompt, Calls: first},
				{Prompt: secondPrompt, Calls: []scriptCall{a.edit(p, "four", "FOUR")}},
				{Prompt: thirdPrompt, Calls: []scriptCall{a.edit(p, "one", "ONE")}},
			}
			data, _ := json.Marshal(script)
			p.fakeScript = filepath.Join(p.work, "script.json")
			writeTestFile(t, p.fakeScript, string(data))
			for i, prompt := range []string{firstPrompt, secondPrompt} {
				start := time.Now()
				out := p.runWith(false, "", filepath.Join(p.work, "requests.log"), a.argv(prompt)...)
				t.Logf("%s, prompt %d: %v", a.name, i+1, time.Since(start).Round(time.Millisecond))
				if i == 0 && len(p.status()) == 0 {
					t.Fatalf("%s recorded nothing; its output:\n%s", a.name, out)
				}
			}
			checkAgentHistory(t, p, a)
			checkAgentGuard(t, p, a, nvims[len(nvims)-1])
		})
	}
}

func checkAgentHistory(t *testing.T, p *project, a agentCLI) {
	entries := p.status()
	type want struct{ file, op, before, after, title string }
	wants := []want{
		{"a.txt", "edit", "one\ntwo\nthree\nfour\n", "one\nTWO\nthree\nfour\n", firstPrompt},
		{"new.txt", "create", "", "created\n", firstPrompt},
		{"a.txt", "edit", "one\nTWO\nthree\nfour\n", "one\nTWO\nthree\nFOUR\n", secondPrompt},
	}
	if len(entries) != len(wants) {
		t.Fatalf("%d entries, want %d: %+v", len(entries), len(wants), entries)
	}
	for i, w := range wants {
		e := entries[i]
		before := "none"
		if w.op != "create" {
			before = testenv.SHA256(w.before)
		}
		if e.FilePath != filepath.Join(p.dir, w.file) || e.Operation != w.op || e.ToolName != a.tools[i] || e.Source != a.source ||
			e.Status != "pending" || hashOr(e.HashBefore) != before || hashOr(e.HashAfter) != testenv.SHA256(w.after) ||
			e.ConversationTitle != w.title || !strings.HasPrefix(e.ConversationID, a.name+"_") {
			t.Errorf("entry %d: %+v; want %+v (tool %s, source %s)", i, e, w, a.tools[i], a.source)
		}
	}
	if entries[0].ConversationID != entries[1].ConversationID || entries[2].ConversationID == entries[0].ConversationID {
		t.Errorf("conversations %s %s | %s: want one per prompt", entries[0].ConversationID, entries[1].ConversationID, entries[2].ConversationID)
	}
	if out, errOut, code := p.mcpdiff("reject", entries[0].EditID); code != 0 {
		t.Fatalf("reject the first edit: exit %d %q %q", code, out, errOut)
	}
	if got := testenv.ReadFile(t, filepath.Join(p.dir, "a.txt")); got != "one\ntwo\nthree\nFOUR\n" {
		t.Fatalf("a.txt after rejecting its first edit: %q; want the later edit kept", got)
	}
}

// checkAgentGuard: a Neovim holds unsaved changes of a.txt; the agent's edit of it is
// refused, the file stays, and the Neovim tells its user which agent wanted it.
func checkAgentGuard(t *testing.T, p *project, a agentCLI, nvimBin string) {
	v := testenv.ListenNeovim(t, nvimBin, p.dir, nil)
	lua := `_G.notes = {}
vim.notify = function(msg) table.insert(_G.notes, msg) end
vim.cmd("edit " .. vim.fn.fnameescape(...))
vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine, unsaved" })`
	if err := v.ExecLua(lua, nil, filepath.Join(p.dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	before := testenv.ReadFile(t, filepath.Join(p.dir, "a.txt"))
	saved := p.env
	p.env = append(append([]string{}, p.env...), "NVIM="+v.Sock)
	out := p.runWith(false, "", filepath.Join(p.work, "requests.log"), a.argv(thirdPrompt)...)
	p.env = saved
	if got := testenv.ReadFile(t, filepath.Join(p.dir, "a.txt")); got != before {
		t.Fatalf("a.txt was written over unsaved changes in Neovim: %q\n%s", got, out)
	}
	requests, _ := os.ReadFile(filepath.Join(p.work, "requests.log"))
	if !strings.Contains(string(requests), "unsaved changes in Neovim") {
		t.Errorf("the model did not hear why the write was refused:\n%s", out)
	}
	var notes []string
	testenv.Eventually(t, "Neovim's message about the refused write", func() bool {
		_ = v.ExecLua("return _G.notes", &notes)
		return len(notes) > 0
	})
	if n := notes[0]; !strings.Contains(n, filepath.Join(p.dir, "a.txt")) || !strings.Contains(n, agentLabel(a.name)) {
		t.Errorf("Neovim said %q; want the file and the agent named", n)
	}
	if n := len(p.status()); n != 2 { // three recorded, one rejected and nothing new
		if n != 3 {
			t.Errorf("%d entries after the refused write, want 3", n)
		}
	}
}

func agentLabel(name string) string {
	return map[string]string{"codex": "Codex", "gemini": "Gemini CLI", "opencode": "OpenCode", "copilot": "Copilot CLI"}[name]
}
