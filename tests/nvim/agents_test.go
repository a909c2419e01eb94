//go:build unix

package nvimtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// :McpDiffAgent NAME [args]: the agent's CLI in the terminal split, with mcpdiff's
// hooks for the run where the CLI takes them without weakening its trust checks
// (Gemini CLI: a system-defaults file in a private folder; OpenCode: its
// OPENCODE_CONFIG_CONTENT), otherwise a message saying to install them; and
// :checkhealth's section per agent on PATH.

func TestAgentTerminal(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		gemini, geminiEnv, geminiArgs := fakeClaude(t)
		opencode, openEnv, _ := fakeClaude(t)
		codex, codexEnv, codexArgs := fakeClaude(t)
		s := startNvim(t, nv, options{"terminal": map[string]any{
			"agents": map[string]any{"gemini": gemini, "opencode": opencode, "codex": codex},
			"env":    map[string]any{"OPENCODE_CONFIG_CONTENT": `{"model": "mine/m", "plugin": ["my-plugin"]}`},
		}})

		s.cmd("McpDiffAgent gemini --approval-mode yolo")
		env, args := claudeRun(t, geminiEnv, geminiArgs)
		if strings.Join(args, " ") != "--approval-mode yolo" {
			t.Errorf("gemini's arguments: %q", args)
		}
		path := env["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"]
		info, err := os.Stat(path)
		dir, derr := os.Stat(filepath.Dir(path))
		if err != nil || derr != nil || info.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 || !strings.HasPrefix(path, filepath.Join(s.home, ".local", "state", "mcpdiff")) {
			t.Fatalf("GEMINI_CLI_SYSTEM_DEFAULTS_PATH=%q: %v %v; want a 0600 file in a 0700 folder of mcpdiff's state folder", path, info, dir)
		}
		if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"BeforeTool"`) || !strings.Contains(string(data), "hook --agent gemini") {
			t.Errorf("the system-defaults file holds:\n%s", data)
		}
		if env["NVIM"] == "" {
			t.Error("the agent does not get $NVIM: its hooks would not find this Neovim")
		}

		s.cmd("McpDiffAgent opencode run")
		env, _ = claudeRun(t, openEnv, filepath.Join(filepath.Dir(openEnv), "args"))
		var cfg struct {
			Model  string   `json:"model"`
			Plugin []string `json:"plugin"`
		}
		if err := json.Unmarshal([]byte(env["OPENCODE_CONFIG_CONTENT"]), &cfg); err != nil || cfg.Model != "mine/m" || len(cfg.Plugin) != 2 || cfg.Plugin[0] != "my-plugin" {
			t.Fatalf("OPENCODE_CONFIG_CONTENT=%q; want the user's, plus mcpdiff's plugin", env["OPENCODE_CONFIG_CONTENT"])
		}
		plugin := strings.TrimPrefix(cfg.Plugin[1], "file://")
		if data, err := os.ReadFile(plugin); err != nil || !strings.Contains(string(data), "tool.execute.before") || strings.HasPrefix(plugin, s.ws) {
			t.Fatalf("the plugin %s: %v; want mcpdiff's plugin outside the project", plugin, err)
		}

		// Codex takes no hooks for one run without bypassing its trust: a message says
		// to install them, and no bypass flag is passed.
		s.cmd("McpDiffAgent codex")
		_, args = claudeRun(t, codexEnv, codexArgs)
		if strings.Contains(strings.Join(args, " "), "dangerously") {
			t.Fatalf("codex's arguments: %q", args)
		}
		s.waitMessage("run `mcpdiff hooks install --agent codex`")

		s.cmd("McpDiffAgent frobnicator")
		s.waitMessage(`unknown agent "frobnicator"`)
	})
}

func TestHealthAgents(t *testing.T) {
	t.Parallel()
	codex := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(codex, []byte("#!/bin/sh\necho 'codex-cli 0.169.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	eachStarted(t, options{"terminal": map[string]any{"agents": map[string]any{"codex": codex, "gemini": "no-such-gemini"}}}, func(t *testing.T, s *session) {
		lines := s.checkhealth()
		wantHealth(t, lines, "OK", []string{codex + " found", "codex-cli 0.169.0"})
		wantHealth(t, lines, "WARNING", []string{"Codex started in " + s.ws + " records none of its edits"}, testenv.Binary+" hooks install --agent codex")
		for _, l := range lines {
			if strings.Contains(l, "Gemini CLI") {
				t.Fatalf("a section for an agent not on PATH: %q", l)
			}
		}
		if out, err := s.command("hooks", "install", "--agent", "codex").CombinedOutput(); err != nil {
			t.Fatalf("hooks install: %v %s", err, out)
		}
		lines = s.checkhealth()
		wantHealth(t, lines, "OK", []string{"Codex started in " + s.ws + " records its edits"})
		// A project install: Codex's project trust is closed; the check names the
		// command that opens it.
		if out, err := s.command("hooks", "install", "--agent", "codex", "--scope", "project").CombinedOutput(); err != nil {
			t.Fatalf("hooks install: %v %s", err, out)
		}
		wantHealth(t, s.checkhealth(), "WARNING", []string{"Codex skips the hooks", "only in a trusted project"}, "run `codex` in "+s.ws)
	})
}
