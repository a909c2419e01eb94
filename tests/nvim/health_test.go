//go:build unix

package nvimtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// checkhealth runs :checkhealth mcpdiff in a new tab and returns its lines.
func (s *session) checkhealth() []string {
	s.t.Helper()
	s.cmd("tabnew")
	s.cmd("checkhealth mcpdiff")
	var lines []string
	s.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	return lines
}

// healthLevel matches a report line on Neovim 0.7.2 ("- OK: text") and 0.10
// ("- OK text"); WARNING and ERROR alike.
var healthLevel = regexp.MustCompile(`^\s*- (OK|WARNING|ERROR):? (.*)$`)

// wantHealth fails unless a report line of that level holds every one of want; its
// advice (the lines up to the next report line) must hold advice.
func wantHealth(t *testing.T, lines []string, level string, want []string, advice ...string) {
	t.Helper()
	for i, l := range lines {
		m := healthLevel.FindStringSubmatch(l)
		if m == nil || m[1] != level {
			continue
		}
		all := true
		for _, w := range want {
			all = all && strings.Contains(m[2], w)
		}
		if !all {
			continue
		}
		var rest []string
		for _, a := range lines[i+1:] {
			if healthLevel.MatchString(a) || strings.HasPrefix(a, "mcpdiff") || strings.HasPrefix(a, "#") {
				break
			}
			rest = append(rest, a)
		}
		for _, a := range advice {
			if !strings.Contains(strings.Join(rest, " "), a) {
				t.Fatalf("%s %q: its advice lacks %q:\n%s", level, m[2], a, strings.Join(lines, "\n"))
			}
		}
		return
	}
	t.Fatalf(":checkhealth mcpdiff has no %s line with %q:\n%s", level, want, strings.Join(lines, "\n"))
}

// wantHealthInfo fails unless an INFO line (Neovim 0.7.2: "- INFO: text"; 0.10:
// "- text") holds every one of want.
func wantHealthInfo(t *testing.T, lines []string, want ...string) {
	t.Helper()
	for _, l := range lines {
		text, ok := strings.CutPrefix(strings.TrimSpace(l), "- ")
		if !ok || healthLevel.MatchString(l) {
			continue
		}
		text = strings.TrimPrefix(text, "INFO: ")
		all := true
		for _, w := range want {
			all = all && strings.Contains(text, w)
		}
		if all {
			return
		}
	}
	t.Fatalf(":checkhealth mcpdiff has no INFO line with %q:\n%s", want, strings.Join(lines, "\n"))
}

func noHealthLevel(t *testing.T, lines []string, level string) {
	t.Helper()
	for _, l := range lines {
		if m := healthLevel.FindStringSubmatch(l); m != nil && m[1] == level {
			t.Fatalf(":checkhealth mcpdiff has a %s line: %q\n%s", level, l, strings.Join(lines, "\n"))
		}
	}
}

// Every help reference of :checkhealth mcpdiff is a link to a tag of the help:
// Neovim turns ":help X" into the link |X|, up to the next space, so a reference
// followed by ")" became |mcpdiff-auto-mode)|, a link to nothing.
func TestHealthLinksResolve(t *testing.T) {
	t.Parallel()
	claude := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\necho '2.1.330 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	help := repoFile(t, "doc/mcpdiff.txt")
	eachStarted(t, options{"terminal": map[string]any{"cmd": claude}}, func(t *testing.T, s *session) {
		lines := s.checkhealth()
		links := 0
		for _, l := range lines {
			for _, m := range regexp.MustCompile(`\|([^|\s]+)\|`).FindAllStringSubmatch(l, -1) {
				links++
				if !strings.Contains(help, "*"+m[1]+"*") {
					t.Errorf("the link |%s| of %q names no tag of the help", m[1], l)
				}
			}
		}
		if links < 2 {
			t.Fatalf("want the two references to mcpdiff-auto-mode as links:\n%s", strings.Join(lines, "\n"))
		}
	})
}

// Each section of :checkhealth mcpdiff reports what is right, and what is wrong with
// the command that fixes it.
func TestHealthSections(t *testing.T) {
	t.Parallel()
	claude := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\necho '2.1.330 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	eachStarted(t, options{"terminal": map[string]any{"cmd": claude}}, func(t *testing.T, s *session) {
		lines := s.checkhealth()
		wantHealth(t, lines, "OK", []string{"Neovim 0."})
		// The binary's version against the plugin's, and where it came from.
		wantHealth(t, lines, "OK", []string{testenv.Binary, "is version " + mcpdiff.Version + ", as the Lua plugin is", "built from source"})
		wantHealth(t, lines, "OK", []string{"listening on 127.0.0.1"})
		wantHealth(t, lines, "OK", []string{"lock file " + s.config + "/ide/"})
		wantHealth(t, lines, "OK", []string{claude + " found", "2.1.330 (Claude Code)"})
		wantHealth(t, lines, "OK", []string{"permission mode auto (no settings file sets defaultMode: Claude Code's own default)", ":McpDiffClaude passes the hooks"})
		noHealthLevel(t, lines, "ERROR")
		wantHealthInfo(t, lines, "no .mcp/edit_history above "+s.ws+" yet (made by the first recorded edit)")

		// A pending edit: the store's format and counts.
		path := s.writeFile("a.txt", "one\n")
		s.recordEdit("conv_1_ha", path, "one\n", "two\n")
		lines = s.checkhealth()
		wantHealth(t, lines, "OK", []string{"store " + filepath.Join(s.ws, ".mcp", "edit_history") + " is writable"})
		wantHealth(t, lines, "OK", []string{"store format version 1"})
		wantHealth(t, lines, "OK", []string{"1 edit(s) recorded, 1 pending"})
		wantHealth(t, lines, "OK", []string{"every recorded file holds what its history says"})

		// The file changed behind the history's back: not a warning, but said, with
		// the ways out.
		if err := os.WriteFile(path, []byte("three\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		lines = s.checkhealth()
		wantHealthInfo(t, lines, "a.txt was changed outside mcpdiff", "`"+testenv.Binary+" restore --file a.txt`", "the next agent edit of it records the change as yours")
		for _, l := range lines {
			if strings.Contains(l, "a.txt") && (strings.Contains(l, "WARNING") || strings.Contains(l, "ERROR") || strings.Contains(l, "--force")) {
				t.Fatalf("a file changed outside mcpdiff is reported as %q", l)
			}
		}
		if err := os.WriteFile(path, []byte("two\n"), 0o644); err != nil {
			t.Fatal(err)
		}

		// A mode where Claude Code writes by itself, without the hooks: a warning
		// naming both fixes; with the hooks installed, fine.
		settings := filepath.Join(s.ws, ".claude", "settings.json")
		if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(settings, []byte(`{"permissions": {"defaultMode": "acceptEdits"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		lines = s.checkhealth()
		wantHealth(t, lines, "OK", []string{"permission mode acceptEdits", "set in " + settings, ":McpDiffClaude passes the hooks"})
		s.lua(`local bin, cmd = ...; require("mcpdiff").setup({ bin = bin, terminal = { cmd = cmd, hooks = false } })`, nil, testenv.Binary, claude)
		lines = s.checkhealth()
		wantHealth(t, lines, "WARNING", []string{"permission mode acceptEdits", "set in " + settings, "nothing records them"},
			"`"+testenv.Binary+" hooks install`", `"defaultMode": "default"`)
		if err := os.WriteFile(settings, []byte(`{"permissions": {"defaultMode": "default"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		wantHealth(t, s.checkhealth(), "OK", []string{"permission mode default (set in " + settings + "): Claude Code sends each edit to Neovim as a diff"})
		if err := os.WriteFile(settings, []byte(`{"permissions": {"defaultMode": "acceptEdits"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := s.command("hooks", "install").CombinedOutput(); err != nil {
			t.Fatalf("hooks install: %v %s", err, out)
		}
		lines = s.checkhealth()
		wantHealth(t, lines, "OK", []string{"permission mode acceptEdits", "the hooks record them"})

		// A store a newer mcpdiff wrote, and a binary older than the plugin: errors.
		format := filepath.Join(s.ws, ".mcp", "edit_history", "FORMAT")
		if err := os.WriteFile(format, []byte("mcpdiff-edit-history 99\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.lua(`require("mcpdiff").version = "9.9.9"`, nil)
		lines = s.checkhealth()
		wantHealth(t, lines, "ERROR", []string{"`" + testenv.Binary + " status` in " + s.ws + " failed", "newer mcpdiff"}, testenv.Binary+" status --workspace")
		wantHealth(t, lines, "ERROR", []string{"is version " + mcpdiff.Version + ", the Lua plugin is 9.9.9"}, "run `make` in "+repoRoot)

		// The bridge stopped: a warning saying how to start it.
		s.cmd("McpDiffStop")
		lines = s.checkhealth()
		wantHealth(t, lines, "WARNING", []string{"the bridge is not running"}, ":McpDiffStart")
	})
}

// Without Claude Code on PATH, the check says how to install it.
func TestHealthWithoutClaude(t *testing.T) {
	t.Parallel()
	eachStarted(t, options{"terminal": map[string]any{"cmd": "no-such-claude"}}, func(t *testing.T, s *session) {
		wantHealth(t, s.checkhealth(), "WARNING", []string{"no-such-claude is not on PATH"}, "npm install -g @anthropic-ai/claude-code")
	})
}
