package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/agenthooks"
	"github.com/mcpdiff/mcpdiff/internal/hooksettings"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
	"github.com/mcpdiff/mcpdiff/internal/userkey"
)

const hooksAbout = `  install    put mcpdiff's hooks into the agent's configuration of the scope
  uninstall  take out exactly what install put in
  status     say where the hooks are (in every scope, whatever --scope says), and
             whether the agent runs them
  settings   the hooks for one run: Claude Code's --settings JSON (what :McpDiffClaude
             passes), OpenCode's OPENCODE_CONFIG_CONTENT, or the path of a Gemini CLI
             system-defaults file (GEMINI_CLI_SYSTEM_DEFAULTS_PATH)

agents: claude (the default), codex, gemini, opencode, copilot, cursor, or all (every
one whose CLI is on PATH)

scopes (the project is the working directory):
  Claude Code (default local):
    local    <project>/.claude/settings.local.json
    project  <project>/.claude/settings.json
    user     $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json
  the others (default user):
    project  codex: <project>/.codex/hooks.json    gemini: <project>/.gemini/settings.json
             opencode: <project>/opencode.json     copilot: <project>/.github/hooks/mcpdiff.json
             cursor: <project>/.cursor/hooks.json
    user     codex: $CODEX_HOME/hooks.json (and the trust entries in $CODEX_HOME/config.toml)
             gemini: ~/.gemini/settings.json       opencode: $XDG_CONFIG_HOME/opencode/plugin/mcpdiff.js
             copilot: $COPILOT_HOME/hooks/mcpdiff.json   cursor: ~/.cursor/hooks.json
`

// agentCommands are the commands of the agents' CLIs, for --agent all and status.
var agentCommands = map[string]string{"claude": "claude", "codex": "codex", "gemini": "gemini",
	"opencode": "opencode", "copilot": "copilot", "cursor": "cursor-agent"}

// runHooks is `mcpdiff hooks`: the agents' hooks in their configuration files.
func runHooks(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "hooks", errors.New("say what to do: install, uninstall, status or settings"))
	}
	action := args[0]
	scope, agentName, asJSON := "", "claude", false
	for i := 1; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		switch {
		case name == "--json" && !hasValue:
			asJSON = true
		case (name == "--scope" || name == "--agent") && !hasValue && i+1 < len(args):
			i++
			value, hasValue = args[i], true
			fallthrough
		case (name == "--scope" || name == "--agent") && hasValue:
			if name == "--scope" {
				scope = value
			} else {
				agentName = value
			}
		default:
			return usageError(stderr, "hooks", fmt.Errorf("unexpected argument %q", args[i]))
		}
	}
	var agents []*agenthooks.Agent
	if agentName == "all" {
		for _, a := range agenthooks.Agents {
			if _, err := exec.LookPath(agentCommands[a.Name]); err == nil {
				agents = append(agents, a)
			}
		}
	} else {
		a, err := agenthooks.AgentNamed(agentName)
		if err != nil {
			fmt.Fprintf(stderr, "mcpdiff hooks: %v\n", err)
			return exitUsage
		}
		agents = []*agenthooks.Agent{a}
	}
	for _, a := range agents {
		if scope != "" && !slices.Contains(hooksettings.AgentScopes(a), scope) {
			fmt.Fprintf(stderr, "mcpdiff hooks: unknown scope %q for %s: use %s\n", scope, a.Label, strings.Join(hooksettings.AgentScopes(a), ", "))
			return exitUsage
		}
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "mcpdiff hooks: cannot find this binary's path: %v\n", err)
		return exitRefused
	}
	env, err := hooksEnv()
	if err != nil {
		fmt.Fprintf(stderr, "mcpdiff hooks: %v\n", err)
		return exitRefused
	}
	switch action {
	case "install", "uninstall":
		code := exitOK
		if len(agents) == 0 {
			fmt.Fprintln(stdout, "no agent CLI found on PATH (claude, codex, gemini, opencode, copilot, cursor-agent)")
		}
		for _, a := range agents {
			s := scope
			if s == "" {
				s = hooksettings.DefaultScope(a)
			}
			var done []string
			if action == "install" {
				done, err = hooksettings.InstallAgent(a, s, env, bin)
			} else {
				done, err = hooksettings.UninstallAgent(a, s, env)
			}
			for _, d := range done {
				fmt.Fprintf(stdout, "%s: %s\n", a.Label, termsafe.Escape(d))
			}
			if err != nil {
				fmt.Fprintf(stderr, "mcpdiff hooks %s --agent %s: %s\n", action, a.Name, termsafe.Escape(err.Error()))
				code = exitRefused
			}
		}
		return code
	case "status":
		// A --scope (checked above) changes nothing: whether the hooks run depends on
		// every scope, so status shows them all, the one asked about among them.
		if agentName == "claude" {
			paths := map[string]string{}
			for _, s := range hooksettings.Scopes {
				paths[s], _ = hooksettings.HooksPath(agents[0], s, env)
			}
			return printHooksStatus(hooksettings.Status(paths, env.Project), asJSON, stdout)
		}
		reports := []hooksettings.AgentReport{}
		for _, a := range agents {
			reports = append(reports, hooksettings.AgentStatus(a, env, bin))
		}
		if asJSON {
			var v any = reports
			if agentName != "all" {
				v = reports[0]
			}
			b, _ := json.MarshalIndent(v, "", "  ")
			fmt.Fprintf(stdout, "%s\n", b)
			return exitOK
		}
		for _, r := range reports {
			printAgentStatus(r, stdout)
		}
		return exitOK
	case "settings":
		if len(agents) != 1 {
			fmt.Fprintln(stderr, "mcpdiff hooks settings: name one agent")
			return exitUsage
		}
		switch agents[0].Name {
		case "claude":
			stdout.Write(hooksettings.Settings(bin))
		case "gemini":
			path, err := hooksettings.GeminiRunSettings(filepath.Join(userkey.Dir(), "run"), bin)
			if err != nil {
				fmt.Fprintf(stderr, "mcpdiff hooks settings: %v\n", err)
				return exitRefused
			}
			fmt.Fprintln(stdout, path)
		case "opencode":
			cfg, err := hooksettings.OpenCodeRunConfig(env, bin)
			if err != nil {
				fmt.Fprintf(stderr, "mcpdiff hooks settings: %v\n", err)
				return exitRefused
			}
			fmt.Fprintln(stdout, cfg)
		default:
			fmt.Fprintf(stderr, "mcpdiff hooks settings: %s takes no hooks for a single run (not without bypassing its own trust checks); "+
				"run `mcpdiff hooks install --agent %s` once instead\n", agents[0].Label, agents[0].Name)
			return exitRefused
		}
		return exitOK
	}
	return usageError(stderr, "hooks", fmt.Errorf("unknown action %q: use install, uninstall, status or settings", action))
}

// hooksEnv is where the agents started here read their configuration.
func hooksEnv() (hooksettings.Env, error) {
	project, err := os.Getwd()
	if err != nil {
		return hooksettings.Env{}, fmt.Errorf("cannot find the working directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	return hooksettings.Env{
		Project:         project,
		Home:            home,
		ClaudeConfigDir: os.Getenv("CLAUDE_CONFIG_DIR"),
		CodexHome:       os.Getenv("CODEX_HOME"),
		GeminiHome:      os.Getenv("GEMINI_CLI_HOME"),
		CopilotHome:     os.Getenv("COPILOT_HOME"),
		ConfigHome:      os.Getenv("XDG_CONFIG_HOME"),
		DataHome:        os.Getenv("XDG_DATA_HOME"),
	}, nil
}

func scopeState(st hooksettings.ScopeStatus) string {
	state := "not installed"
	switch {
	case st.Problem != "" && st.Command == "":
		state = st.Problem
	case st.Problem != "":
		state = "installed, but " + st.Problem
	case st.Installed:
		state = "installed: " + st.Command
		if st.Note != "" {
			state += " (" + st.Note + ")"
		}
	case !st.Exists:
		state = "not installed (no such file)"
	}
	return state
}

func printHooksStatus(r hooksettings.Report, asJSON bool, stdout io.Writer) int {
	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	for _, st := range r.Scopes {
		fmt.Fprintf(stdout, "%-8s %s: %s\n", st.Scope, termsafe.Escape(st.Path), termsafe.Escape(scopeState(st)))
	}
	switch {
	case r.Active:
		fmt.Fprintln(stdout, "active: Claude Code started here records its edits in the edit history")
	case r.Disabled != "":
		fmt.Fprintf(stdout, "not active: %s sets disableAllHooks\n", termsafe.Escape(r.Disabled))
	default:
		fmt.Fprintln(stdout, "not active: run `mcpdiff hooks install` (or start Claude Code with :McpDiffClaude in Neovim, which passes them itself)")
	}
	return exitOK
}

func printAgentStatus(r hooksettings.AgentReport, stdout io.Writer) {
	fmt.Fprintf(stdout, "%s:\n", r.Label)
	for _, st := range r.Scopes {
		fmt.Fprintf(stdout, "  %-8s %s: %s\n", st.Scope, termsafe.Escape(st.Path), termsafe.Escape(scopeState(st)))
	}
	for _, g := range r.Gates {
		fmt.Fprintf(stdout, "  closed: %s; to open it: %s\n", termsafe.Escape(g.Problem), termsafe.Escape(g.Fix))
	}
	if r.Active {
		fmt.Fprintf(stdout, "  active: %s started here records its edits in the edit history\n", r.Label)
	} else {
		fmt.Fprintf(stdout, "  not active: run `mcpdiff hooks install --agent %s`%s\n", r.Agent, map[bool]string{true: " and open the gate above", false: ""}[len(r.Gates) > 0])
	}
}
