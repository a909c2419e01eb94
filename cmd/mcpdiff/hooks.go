package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/claudehooks"
)

const hooksUsage = `usage: mcpdiff hooks install|uninstall|status|settings [--scope local|project|user] [--json]

  install    put mcpdiff's hooks into Claude Code's settings file of the scope
  uninstall  take out exactly what install put in
  status     say in which settings files the hooks are, and whether they are active
  settings   print the settings JSON for ` + "`claude --settings`" + ` (what :McpDiffClaude passes)

scopes (default local; the project is the working directory):
  local      <project>/.claude/settings.local.json
  project    <project>/.claude/settings.json
  user       $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json
`

// runHooks is `mcpdiff hooks`: Claude Code's hooks in its settings files.
func runHooks(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, hooksUsage)
		return exitUsage
	}
	action := args[0]
	scope, asJSON := claudehooks.ScopeLocal, false
	for i := 1; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		switch {
		case name == "--json" && !hasValue:
			asJSON = true
		case name == "--scope" && hasValue:
			scope = value
		case name == "--scope" && i+1 < len(args):
			i++
			scope = args[i]
		default:
			fmt.Fprintf(stderr, "mcpdiff hooks: unexpected argument %q\n\n%s", args[i], hooksUsage)
			return exitUsage
		}
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "mcpdiff hooks: cannot find this binary's path: %v\n", err)
		return exitRefused
	}
	paths, err := settingsPaths()
	if err != nil {
		fmt.Fprintf(stderr, "mcpdiff hooks: %v\n", err)
		return exitRefused
	}
	path, ok := paths[scope]
	if !ok {
		fmt.Fprintf(stderr, "mcpdiff hooks: unknown scope %q: use local, project or user\n", scope)
		return exitUsage
	}
	switch action {
	case "install":
		changed, err := claudehooks.Install(path, bin)
		if err != nil {
			fmt.Fprintf(stderr, "mcpdiff hooks install: %v\n", err)
			return exitRefused
		}
		if changed {
			fmt.Fprintf(stdout, "installed the hooks in %s (%s)\n", path, claudehooks.HookCommand(bin))
		} else {
			fmt.Fprintf(stdout, "the hooks are already in %s\n", path)
		}
		return exitOK
	case "uninstall":
		changed, err := claudehooks.Uninstall(path)
		if err != nil {
			fmt.Fprintf(stderr, "mcpdiff hooks uninstall: %v\n", err)
			return exitRefused
		}
		if changed {
			fmt.Fprintf(stdout, "removed the hooks from %s\n", path)
		} else {
			fmt.Fprintf(stdout, "the hooks were not in %s\n", path)
		}
		return exitOK
	case "status":
		return printHooksStatus(claudehooks.Status(paths), asJSON, stdout)
	case "settings":
		stdout.Write(claudehooks.Settings(bin))
		return exitOK
	}
	fmt.Fprintf(stderr, "mcpdiff hooks: unknown action %q\n\n%s", action, hooksUsage)
	return exitUsage
}

// settingsPaths is the settings file of each scope for a claude started here.
func settingsPaths() (map[string]string, error) {
	project, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("cannot find the working directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	paths := map[string]string{}
	for _, scope := range claudehooks.Scopes {
		p, err := claudehooks.SettingsPath(scope, project, os.Getenv("CLAUDE_CONFIG_DIR"), home)
		if err != nil && scope != claudehooks.ScopeUser {
			return nil, err
		}
		paths[scope] = p
	}
	return paths, nil
}

func printHooksStatus(r claudehooks.Report, asJSON bool, stdout io.Writer) int {
	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	for _, st := range r.Scopes {
		state := "not installed"
		switch {
		case st.Problem != "" && st.Command == "":
			state = st.Problem
		case st.Problem != "":
			state = "installed, but " + st.Problem
		case st.Installed:
			state = "installed: " + st.Command
		case !st.Exists:
			state = "not installed (no such file)"
		}
		fmt.Fprintf(stdout, "%-8s %s: %s\n", st.Scope, st.Path, state)
	}
	switch {
	case r.Active:
		fmt.Fprintln(stdout, "active: Claude Code started here records its edits in the edit history")
	case r.Disabled != "":
		fmt.Fprintf(stdout, "not active: %s sets disableAllHooks\n", r.Disabled)
	default:
		fmt.Fprintln(stdout, "not active: run `mcpdiff hooks install` (or start Claude Code with :McpDiffClaude in Neovim, which passes them itself)")
	}
	return exitOK
}
