package hooksettings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/agenthooks"
)

// Where each agent reads its hooks, and what mcpdiff puts there. Claude Code, Codex,
// Gemini CLI, Copilot CLI and Cursor read hooks from JSON files keyed by event;
// OpenCode runs a plugin file (opencode.go). Everything install writes is merged
// into what is there, keeps the rest in its order, and is what uninstall takes out.

// Env is where the agents' configuration lives: the folder the agent runs in and
// the variables each CLI reads (empty: that CLI's default under Home).
type Env struct {
	Project         string // the working directory: the project
	Home            string
	ClaudeConfigDir string // $CLAUDE_CONFIG_DIR
	CodexHome       string // $CODEX_HOME
	GeminiHome      string // $GEMINI_CLI_HOME: the folder holding .gemini
	CopilotHome     string // $COPILOT_HOME
	ConfigHome      string // $XDG_CONFIG_HOME
	DataHome        string // $XDG_DATA_HOME
}

func (e Env) under(dflt string, parts ...string) (string, error) {
	if dflt != "" {
		return filepath.Join(append([]string{dflt}, parts...)...), nil
	}
	if e.Home == "" {
		return "", errors.New("no home folder (set HOME)")
	}
	return filepath.Join(append([]string{e.Home}, parts...)...), nil
}

func (e Env) codexHome() (string, error) {
	if e.CodexHome != "" {
		return e.CodexHome, nil
	}
	return e.under("", ".codex")
}

func (e Env) configHome() (string, error) {
	if e.ConfigHome != "" {
		return e.ConfigHome, nil
	}
	return e.under("", ".config")
}

func (e Env) dataHome() (string, error) {
	if e.DataHome != "" {
		return e.DataHome, nil
	}
	return e.under("", ".local", "share")
}

// hookEvent is one event an agent's hooks are registered for.
type hookEvent struct {
	name    string
	matcher string // "" for none
}

// hookFormat is how an agent's JSON hooks file holds mcpdiff's hook.
type hookFormat struct {
	events []hookEvent
	// grouped: each event lists {matcher, hooks: [{type, command, timeout}]} (Claude
	// Code, Codex, Gemini CLI); else it lists the hooks themselves (Copilot, Cursor).
	grouped    bool
	commandKey string // the key of the command: "command", or Copilot's "bash"
	// hook is the hook object that runs command.
	hook    func(command string) *node
	version bool // the file starts with "version": 1 (Copilot, Cursor)
}

// hookTimeout is the timeout, in seconds, agents give the hook command: a net under
// the hook's own budget of 2 s, should the machine stall.
const hookTimeout = 10

func commandHook(timeout any, extra ...string) func(string) *node {
	return func(command string) *node {
		m := map[string]any{"type": "command", "command": command, "timeout": timeout}
		keys := []string{"type", "command", "timeout"}
		if len(extra) == 2 {
			m[extra[0]], keys = extra[1], append([]string{extra[0]}, keys...)
		}
		return toNode(m, keys...)
	}
}

var formats = map[*agenthooks.Agent]*hookFormat{
	agenthooks.Claude: {grouped: true, commandKey: "command", hook: commandHook(hookTimeout), events: []hookEvent{
		{agenthooks.PreToolUse, strings.Join(agenthooks.WriteTools, "|")}, {agenthooks.PostToolUse, strings.Join(agenthooks.WriteTools, "|")}, {agenthooks.UserPromptSubmit, ""}}},
	agenthooks.Codex: {grouped: true, commandKey: "command", hook: commandHook(hookTimeout), events: []hookEvent{
		{agenthooks.PreToolUse, "^apply_patch$"}, {agenthooks.PostToolUse, "^apply_patch$"}, {agenthooks.UserPromptSubmit, ""}}},
	// Gemini CLI's timeout is in milliseconds.
	agenthooks.Gemini: {grouped: true, commandKey: "command", hook: commandHook(hookTimeout*1000, "name", "mcpdiff"), events: []hookEvent{
		{"BeforeTool", "^(write_file|replace)$"}, {"AfterTool", "^(write_file|replace)$"}, {"BeforeAgent", ""}}},
	agenthooks.Copilot: {commandKey: "bash", version: true, events: []hookEvent{{"preToolUse", ""}, {"postToolUse", ""}, {"userPromptSubmitted", ""}},
		hook: func(command string) *node {
			return toNode(map[string]any{"type": "command", "bash": command, "timeoutSec": hookTimeout}, "type", "bash", "timeoutSec")
		}},
	agenthooks.Cursor: {commandKey: "command", version: true, events: []hookEvent{
		{"preToolUse", "Write|StrReplace|Edit|MultiEdit|Delete"}, {"postToolUse", "Write|StrReplace|Edit|MultiEdit|Delete"},
		{"afterFileEdit", ""}, {"beforeSubmitPrompt", ""}},
		hook: func(command string) *node { return toNode(map[string]any{"command": command}, "command") }},
}

// commandFor is the command an agent runs: the binary by its absolute path (an agent
// started anywhere may not have it on PATH), then `hook`, the agent and, for Copilot
// CLI, whose input names no event, the event.
func commandFor(a *agenthooks.Agent, bin, event string) string {
	cmd := shellWord(bin) + " hook"
	if a != agenthooks.Claude {
		cmd += " --agent " + a.Name
	}
	if a == agenthooks.Copilot {
		cmd += " --event " + event
	}
	return cmd
}

// commandsFor is what the hooks of a run, each command once ("; " between them):
// Copilot CLI's differ by event.
func commandsFor(a *agenthooks.Agent, bin string) string {
	var cmds []string
	for _, ev := range formats[a].events {
		if c := commandFor(a, bin, ev.name); !slices.Contains(cmds, c) {
			cmds = append(cmds, c)
		}
	}
	return strings.Join(cmds, "; ")
}

// entry is mcpdiff's entry in an event's list.
func (f *hookFormat) entry(a *agenthooks.Agent, bin string, ev hookEvent) *node {
	h := f.hook(commandFor(a, bin, ev.name))
	if !f.grouped {
		if ev.matcher != "" {
			h.set("matcher", toNode(ev.matcher))
		}
		return h
	}
	g := &node{obj: true}
	if ev.matcher != "" {
		g.set("matcher", toNode(ev.matcher))
	}
	g.set("hooks", &node{arr: true, array: []*node{h}})
	return g
}

// ourCommand is the command of an entry that mcpdiff added for a, "" for any other.
// The binary's path may differ from this one's (the plugin moved), and so may the
// name after "mcpdiff" (mcpdiff-dev).
func (f *hookFormat) ourCommand(a *agenthooks.Agent, e *node) string {
	if e == nil || !e.obj {
		return ""
	}
	h := e
	if f.grouped {
		hooks := e.get("hooks")
		if hooks == nil || !hooks.arr || len(hooks.array) != 1 || !hooks.array[0].obj {
			return ""
		}
		h = hooks.array[0]
		if h.get("type").str() != "command" {
			return ""
		}
	}
	cmd := h.get(f.commandKey).str()
	words, ok := shellWords(cmd)
	if !ok || len(words) < 2 || !strings.HasPrefix(filepath.Base(words[0]), "mcpdiff") || words[1] != "hook" {
		return ""
	}
	agent := "claude"
	for i := 2; i+1 < len(words); i += 2 {
		switch words[i] {
		case "--agent":
			agent = words[i+1]
		case "--event":
		default:
			return ""
		}
	}
	if len(words)%2 != 0 || agent != a.Name {
		return ""
	}
	return cmd
}

// checkShape refuses a file whose hooks are not where the format expects them.
func (f *hookFormat) checkShape(sf *settingsFile) error {
	h := sf.root.get("hooks")
	if h == nil {
		return nil
	}
	if !h.obj {
		return fmt.Errorf(`"hooks" in %s is not an object; fix it, then run this again (nothing was changed)`, sf.path)
	}
	for _, ev := range f.events {
		if l := h.get(ev.name); l != nil && !l.arr {
			return fmt.Errorf(`"hooks.%s" in %s is not a list; fix it, then run this again (nothing was changed)`, ev.name, sf.path)
		}
	}
	return nil
}

// installHooks merges mcpdiff's entries for a into the file: one per event, an older
// one (another binary path) replaced. It reports whether the file changed.
func installHooks(a *agenthooks.Agent, sf *settingsFile, bin string) (bool, error) {
	f := formats[a]
	if err := f.checkShape(sf); err != nil {
		return false, err
	}
	if f.version && sf.root.get("version") == nil {
		sf.root.object = append([]member{{"version", toNode(1)}}, sf.root.object...)
	}
	hooks := sf.root.get("hooks")
	if hooks == nil {
		hooks = &node{obj: true}
		sf.root.set("hooks", hooks)
	}
	for _, ev := range f.events {
		want := f.entry(a, bin, ev)
		list := hooks.get(ev.name)
		if list == nil {
			list = &node{arr: true, array: []*node{}}
			hooks.set(ev.name, list)
		}
		var kept []*node
		present := false
		for _, e := range list.array {
			switch {
			case f.ourCommand(a, e) != "" && !present && e.equal(want):
				present = true
				kept = append(kept, e)
			case f.ourCommand(a, e) != "":
			default:
				kept = append(kept, e)
			}
		}
		if !present {
			kept = append(kept, want)
		}
		list.array = kept
	}
	return sf.write()
}

// uninstallHooks takes mcpdiff's entries for a out of the file, and the lists and
// objects that held nothing else; a file left empty is removed.
func uninstallHooks(a *agenthooks.Agent, sf *settingsFile) (bool, error) {
	f := formats[a]
	if !sf.exists {
		return false, nil
	}
	if err := f.checkShape(sf); err != nil {
		return false, err
	}
	hooks := sf.root.get("hooks")
	if hooks == nil {
		return false, nil
	}
	changed := false
	for _, ev := range f.events {
		list := hooks.get(ev.name)
		if list == nil {
			continue
		}
		var kept []*node
		for _, e := range list.array {
			if f.ourCommand(a, e) == "" {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(list.array) {
			continue
		}
		changed = true
		list.array = kept
		if len(kept) == 0 {
			hooks.remove(ev.name)
		}
	}
	if !changed {
		return false, nil
	}
	if len(hooks.object) == 0 {
		sf.root.remove("hooks")
	}
	if v := sf.root.get("version"); f.version && len(sf.root.object) == 1 && v != nil && string(v.scalar) == "1" {
		sf.root.remove("version")
	}
	if len(sf.root.object) == 0 {
		return sf.remove()
	}
	return sf.write()
}

// hooksFound is what a file holds of mcpdiff's hooks for a.
type hooksFound struct {
	command string   // the hook command found ("" none)
	missing []string // the events without it, when some have it
}

func findHooks(a *agenthooks.Agent, sf *settingsFile) hooksFound {
	f := formats[a]
	var found hooksFound
	hooks := sf.root.get("hooks")
	for _, ev := range f.events {
		cmd := ""
		if hooks != nil && hooks.obj {
			if l := hooks.get(ev.name); l != nil && l.arr {
				for _, e := range l.array {
					if c := f.ourCommand(a, e); c != "" {
						cmd = c
						break
					}
				}
			}
		}
		if cmd == "" {
			found.missing = append(found.missing, ev.name)
		} else if found.command == "" {
			found.command = cmd
		}
	}
	if found.command == "" {
		found.missing = nil
	}
	return found
}

// binaryProblem says why a hook command's binary cannot run, "" when it can.
func binaryProblem(command, agentFlag string) string {
	words, _ := shellWords(command)
	if len(words) == 0 {
		return "the hook command is empty"
	}
	if info, err := os.Stat(words[0]); err != nil || info.IsDir() {
		return fmt.Sprintf("%s does not exist: run `mcpdiff hooks install%s` again with the binary you use", words[0], agentFlag)
	}
	return ""
}
