package hooksettings

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/agenthooks"
	"github.com/mcpdiff/mcpdiff/internal/history"
)

// Each CLI has a trust check of its own that skips installed hooks without a word.
// `hooks status` and :checkhealth name the closed ones and the command that opens
// each; opening one is the user's decision, never install's.

func gates(a *agenthooks.Agent, e Env, scopes []ScopeStatus, _ string) []Gate {
	switch a {
	case agenthooks.Codex:
		return codexGates(e, scopes)
	case agenthooks.Gemini:
		return geminiGates(e, scopes)
	case agenthooks.Copilot:
		return copilotGates(e, scopes)
	}
	return nil
}

// readJSON reads a small JSON file into v; false when it is missing or not JSON.
func readJSON(path string, v any) bool {
	data, err := readLimited(path, maxSettingsSize)
	return err == nil && json.Unmarshal(data, v) == nil
}

// geminiGates: with folder trust on, Gemini CLI runs no hooks at all (of any
// settings file) in a folder the user has not trusted; and hooksConfig.enabled false
// turns every hook off.
func geminiGates(e Env, scopes []ScopeStatus) []Gate {
	installed := false
	for _, st := range scopes {
		installed = installed || st.Installed
	}
	if !installed {
		return nil
	}
	type settings struct {
		Security struct {
			FolderTrust struct {
				Enabled *bool `json:"enabled"`
			} `json:"folderTrust"`
		} `json:"security"`
		HooksConfig struct {
			Enabled *bool `json:"enabled"`
		} `json:"hooksConfig"`
	}
	trustOn, hooksOff := false, ""
	for _, st := range scopes {
		var s settings
		if readJSON(st.Path, &s) {
			if s.Security.FolderTrust.Enabled != nil {
				trustOn = *s.Security.FolderTrust.Enabled
			}
			if s.HooksConfig.Enabled != nil && !*s.HooksConfig.Enabled {
				hooksOff = st.Path
			}
		}
	}
	var out []Gate
	if hooksOff != "" {
		out = append(out, Gate{Problem: hooksOff + " sets hooksConfig.enabled to false: Gemini CLI runs no hooks",
			Fix: "remove hooksConfig.enabled from " + hooksOff})
	}
	if !trustOn {
		return out
	}
	trustFile := os.Getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
	if trustFile == "" {
		trustFile, _ = e.under(e.GeminiHome, ".gemini", "trustedFolders.json")
	}
	var trusted map[string]string
	readJSON(trustFile, &trusted)
	project := history.RealPath(e.Project)
	ok := false
	for dir, level := range trusted {
		dir = history.RealPath(dir)
		switch level {
		case "TRUST_FOLDER":
			ok = ok || within(project, dir)
		case "TRUST_PARENT":
			ok = ok || within(project, filepath.Dir(dir))
		}
	}
	if !ok {
		out = append(out, Gate{Problem: fmt.Sprintf("folder trust is on and %s is not trusted: Gemini CLI runs no hooks there", project),
			Fix: fmt.Sprintf("run `gemini` in %s and trust the folder (its trust dialog, or /permissions)", project)})
	}
	return out
}

// copilotGates: Copilot CLI loads a repository's .github/hooks/ only in a folder the
// user trusts (trustedFolders in its config); disableAllHooks turns every hook off.
func copilotGates(e Env, scopes []ScopeStatus) []Gate {
	home := e.CopilotHome
	if home == "" {
		home, _ = e.under("", ".copilot")
	}
	type config struct {
		TrustedFolders  []string `json:"trustedFolders"`
		DisableAllHooks bool     `json:"disableAllHooks"`
	}
	var trusted []string
	var out []Gate
	for _, name := range []string{"config.json", "settings.json"} {
		var c config
		if readJSON(filepath.Join(home, name), &c) {
			trusted = append(trusted, c.TrustedFolders...)
			if c.DisableAllHooks {
				p := filepath.Join(home, name)
				out = append(out, Gate{Problem: p + " sets disableAllHooks: Copilot CLI runs no hooks", Fix: "remove disableAllHooks from " + p})
			}
		}
	}
	project := history.RealPath(e.Project)
	for _, st := range scopes {
		if st.Scope != ScopeProject || !st.Installed {
			continue
		}
		ok := false
		for _, dir := range trusted {
			ok = ok || within(project, history.RealPath(strings.TrimSuffix(dir, "/")))
		}
		if !ok {
			out = append(out, Gate{Scope: ScopeProject,
				Problem: fmt.Sprintf("Copilot CLI loads %s only in a trusted folder, and %s is not one", filepath.Dir(st.Path), project),
				Fix:     fmt.Sprintf("run `copilot` in %s and choose to trust the folder and remember it (or use --scope user: %s/hooks runs everywhere)", project, home)})
		}
	}
	return out
}

// within reports whether path is folder or lies inside it (both clean and absolute).
func within(path, folder string) bool {
	return path == folder || strings.HasPrefix(path, strings.TrimSuffix(folder, string(filepath.Separator))+string(filepath.Separator))
}
