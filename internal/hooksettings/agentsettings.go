package hooksettings

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcpdiff/mcpdiff/internal/agenthooks"
)

// `mcpdiff hooks install|uninstall|status --agent NAME`: each agent's files, by scope.

// AgentScopes are the scopes of an agent's hooks: Claude Code's three, else project
// and user.
func AgentScopes(a *agenthooks.Agent) []string {
	if a == agenthooks.Claude {
		return Scopes
	}
	return []string{ScopeProject, ScopeUser}
}

// DefaultScope is the scope install uses when none is given: Claude Code's local
// settings; for the other agents their user configuration, which runs in every
// project without touching the repository or opening a trust gate.
func DefaultScope(a *agenthooks.Agent) string {
	if a == agenthooks.Claude {
		return ScopeLocal
	}
	return ScopeUser
}

// HooksPath is the file that holds a's hooks at scope.
func HooksPath(a *agenthooks.Agent, scope string, e Env) (string, error) {
	if !slices.Contains(AgentScopes(a), scope) {
		return "", fmt.Errorf("unknown scope %q for %s: use %v", scope, a.Label, AgentScopes(a))
	}
	project := scope != ScopeUser
	switch a {
	case agenthooks.Claude:
		return SettingsPath(scope, e.Project, e.ClaudeConfigDir, e.Home)
	case agenthooks.Codex:
		if project {
			return filepath.Join(e.Project, ".codex", "hooks.json"), nil
		}
		home, err := e.codexHome()
		return filepath.Join(home, "hooks.json"), err
	case agenthooks.Gemini:
		if project {
			return filepath.Join(e.Project, ".gemini", "settings.json"), nil
		}
		return e.under(e.GeminiHome, ".gemini", "settings.json")
	case agenthooks.OpenCode:
		if project {
			return filepath.Join(e.Project, "opencode.json"), nil
		}
		home, err := e.configHome()
		return filepath.Join(home, "opencode", "plugin", pluginName), err
	case agenthooks.Copilot:
		if project {
			return filepath.Join(e.Project, ".github", "hooks", "mcpdiff.json"), nil
		}
		if e.CopilotHome != "" {
			return filepath.Join(e.CopilotHome, "hooks", "mcpdiff.json"), nil
		}
		return e.under("", ".copilot", "hooks", "mcpdiff.json")
	case agenthooks.Cursor:
		if project {
			return filepath.Join(e.Project, ".cursor", "hooks.json"), nil
		}
		return e.under("", ".cursor", "hooks.json")
	}
	return "", fmt.Errorf("no hooks file known for %s", a.Label)
}

// confineFor is the folder a scope's files must stay in: the project, except at user
// scope.
func confineFor(scope string, e Env) string {
	if scope == ScopeUser {
		return ""
	}
	return e.Project
}

// InstallAgent puts a's hooks for bin into its configuration at scope and returns
// what it did, one line per file changed.
func InstallAgent(a *agenthooks.Agent, scope string, e Env, bin string) ([]string, error) {
	path, err := HooksPath(a, scope, e)
	if err != nil {
		return nil, err
	}
	if a == agenthooks.OpenCode {
		return installOpenCode(scope, path, e, bin)
	}
	sf, err := readSettings(path, confineFor(scope, e))
	if err != nil {
		return nil, err
	}
	changed, err := installHooks(a, sf, bin)
	if err != nil {
		return nil, err
	}
	var done []string
	if changed {
		done = append(done, fmt.Sprintf("installed the hooks in %s (%s)", sf.path, commandsFor(a, bin)))
	}
	if a == agenthooks.Codex {
		trusted, err := trustCodexHooks(sf, e)
		if err != nil {
			return done, err
		}
		done = append(done, trusted...)
	}
	if len(done) == 0 {
		done = append(done, "the hooks are already in "+sf.path)
	}
	return done, nil
}

// UninstallAgent takes out of a's configuration at scope what InstallAgent put in.
func UninstallAgent(a *agenthooks.Agent, scope string, e Env) ([]string, error) {
	path, err := HooksPath(a, scope, e)
	if err != nil {
		return nil, err
	}
	if a == agenthooks.OpenCode {
		return uninstallOpenCode(scope, path, e)
	}
	sf, err := readSettings(path, confineFor(scope, e))
	if err != nil {
		return nil, err
	}
	var done []string
	if a == agenthooks.Codex {
		untrusted, err := untrustCodexHooks(sf, e)
		if err != nil {
			return nil, err
		}
		done = append(done, untrusted...)
	}
	changed, err := uninstallHooks(a, sf)
	if err != nil {
		return done, err
	}
	if changed {
		done = append([]string{"removed the hooks from " + sf.path}, done...)
	}
	if len(done) == 0 {
		done = append(done, "the hooks were not in "+sf.path)
	}
	return done, nil
}

// AgentReport says where an agent's hooks are and whether the agent runs them.
type AgentReport struct {
	Agent  string        `json:"agent"`
	Label  string        `json:"label"`
	Active bool          `json:"active"` // the agent started in the project records its edits
	Scopes []ScopeStatus `json:"scopes"`
	// Gates are the agent's own checks that skip installed hooks without a word, each
	// closed one with the command that opens it (the user's call, never install's).
	Gates []Gate `json:"gates,omitempty"`
}

// Gate is a closed trust gate.
type Gate struct {
	Scope   string `json:"scope"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

// AgentStatus reads a's hooks files of every scope, and its trust gates.
func AgentStatus(a *agenthooks.Agent, e Env, bin string) AgentReport {
	r := AgentReport{Agent: a.Name, Label: a.Label}
	if a == agenthooks.Claude {
		paths := map[string]string{}
		for _, s := range Scopes {
			paths[s], _ = HooksPath(a, s, e)
		}
		cr := Status(paths, e.Project)
		r.Active, r.Scopes = cr.Active, cr.Scopes
		if cr.Disabled != "" {
			r.Gates = append(r.Gates, Gate{Scope: "", Problem: cr.Disabled + " sets disableAllHooks", Fix: "remove disableAllHooks from " + cr.Disabled})
		}
		return r
	}
	for _, scope := range AgentScopes(a) {
		st := ScopeStatus{Scope: scope}
		path, err := HooksPath(a, scope, e)
		st.Path = path
		if err != nil {
			st.Problem = err.Error()
			r.Scopes = append(r.Scopes, st)
			continue
		}
		if a == agenthooks.OpenCode {
			st = openCodeScopeStatus(scope, path, e)
		} else {
			st = jsonScopeStatus(a, scope, path, e)
		}
		r.Scopes = append(r.Scopes, st)
	}
	r.Gates = gates(a, e, r.Scopes, bin)
	for _, st := range r.Scopes {
		if st.Installed && !gateCloses(r.Gates, st.Scope) {
			r.Active = true
		}
	}
	return r
}

func gateCloses(gates []Gate, scope string) bool {
	for _, g := range gates {
		if g.Scope == scope || g.Scope == "" {
			return true
		}
	}
	return false
}

func jsonScopeStatus(a *agenthooks.Agent, scope, path string, e Env) ScopeStatus {
	st := ScopeStatus{Scope: scope, Path: path}
	sf, err := readSettings(path, confineFor(scope, e))
	if err != nil {
		st.Exists, st.Problem = true, err.Error()
		return st
	}
	st.Exists = sf.exists
	found := findHooks(a, sf)
	st.Command = found.command
	switch {
	case st.Command == "":
	case len(found.missing) > 0:
		st.Problem = fmt.Sprintf("the hooks of %v are missing: run `mcpdiff hooks install --agent %s --scope %s` again", found.missing, a.Name, scope)
	default:
		st.Problem = binaryProblem(st.Command, " --agent "+a.Name)
		st.Installed = st.Problem == ""
	}
	return st
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
