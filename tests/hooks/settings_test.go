package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// hooks runs `mcpdiff hooks ARGS` in the workspace.
func (w *ws) hooks(args ...string) (stdout, stderr string, code int) {
	return testenv.Run(w.t, w.command(nil, append([]string{"hooks"}, args...)...))
}

// A settings file as a user keeps it: other keys, another hook of PreToolUse, a key
// order that is not alphabetical, a number written its own way.
const userSettings = `{
  "permissions": {
    "allow": [
      "Bash(ls:*)"
    ],
    "deny": []
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "echo <checked> & done"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  },
  "env": {
    "Z": "1",
    "A": "2"
  },
  "cleanupPeriodDays": 30.0
}
`

func TestHooksInstallMergesAndUninstallRestores(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	local := w.Path(".claude/settings.local.json")
	w.Write(".claude/settings.local.json", userSettings)
	out, errOut, code := w.hooks("install")
	if code != 0 || !strings.Contains(out, "installed the hooks in "+local) {
		t.Fatalf("install: exit %d %q %q", code, out, errOut)
	}
	installed := w.Read(".claude/settings.local.json")
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(installed), &doc); err != nil {
		t.Fatalf("install wrote invalid JSON: %v\n%s", err, installed)
	}
	want := testenv.Binary + " hook"
	pre, post := doc.Hooks["PreToolUse"], doc.Hooks["PostToolUse"]
	if len(pre) != 2 || pre[0].Matcher != "Bash" || pre[1].Hooks[0].Command != want || len(post) != 1 || post[0].Hooks[0].Command != want ||
		pre[1].Matcher != "Edit|Write|MultiEdit|NotebookEdit" || len(doc.Hooks["Stop"]) != 1 {
		t.Fatalf("merged settings:\n%s", installed)
	}
	// Every other key, in the user's order.
	order := []string{`"permissions"`, `"Bash(ls:*)"`, `"hooks"`, `"PreToolUse"`, `"echo <checked> & done"`, `"Stop"`, `"PostToolUse"`, `"env"`, `"Z"`, `"A"`, `"cleanupPeriodDays": 30.0`}
	at := 0
	for _, s := range order {
		i := strings.Index(installed[at:], s)
		if i < 0 {
			t.Fatalf("%s missing or out of order in:\n%s", s, installed)
		}
		at += i
	}
	// Idempotent.
	if out, _, code := w.hooks("install"); code != 0 || !strings.Contains(out, "already") || w.Read(".claude/settings.local.json") != installed {
		t.Fatalf("second install: exit %d %q, or the file changed", code, out)
	}
	out, errOut, code = w.hooks("status")
	if code != 0 || !strings.Contains(out, "local    "+local+": installed: "+want) || !strings.Contains(out, "active:") {
		t.Fatalf("status: %d %q %q", code, out, errOut)
	}
	// Uninstall takes out exactly what install put in: the file is byte for byte
	// what the user had.
	if out, _, code := w.hooks("uninstall"); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("uninstall: %d %q", code, out)
	}
	if got := w.Read(".claude/settings.local.json"); got != userSettings {
		t.Fatalf("after uninstall:\n%s\nwant:\n%s", got, userSettings)
	}
	if out, _, code := w.hooks("uninstall"); code != 0 || !strings.Contains(out, "were not in") {
		t.Fatalf("second uninstall: %d %q", code, out)
	}
}

func TestHooksInstallScopes(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	// A file install creates is removed again by uninstall, with its folder.
	for _, scope := range []string{"local", "project"} {
		name := map[string]string{"local": "settings.local.json", "project": "settings.json"}[scope]
		if _, errOut, code := w.hooks("install", "--scope", scope); code != 0 {
			t.Fatalf("install --scope %s: %s", scope, errOut)
		}
		out, _, _ := w.hooks("settings")
		if got := w.Read(".claude/" + name); got != out {
			t.Fatalf("a new %s:\n%s\nwant what `hooks settings` prints:\n%s", name, got, out)
		}
	}
	for _, scope := range []string{"local", "project"} {
		if _, errOut, code := w.hooks("uninstall", "--scope="+scope); code != 0 {
			t.Fatalf("uninstall: %s", errOut)
		}
	}
	if _, err := os.Stat(w.Path(".claude")); err == nil {
		t.Fatal("uninstall left the .claude folder that install made")
	}
	// user: $CLAUDE_CONFIG_DIR/settings.json, and a settings file that is a symlink
	// (kept in a dotfiles repository) stays one.
	config := filepath.Join(filepath.Dir(w.dir), "claude") // CLAUDE_CONFIG_DIR
	dotfiles := filepath.Join(filepath.Dir(config), "dotfiles")
	os.MkdirAll(dotfiles, 0o755)
	os.MkdirAll(config, 0o755)
	os.WriteFile(filepath.Join(dotfiles, "claude.json"), []byte(`{"model": "x"}`), 0o644)
	if err := os.Symlink(filepath.Join(dotfiles, "claude.json"), filepath.Join(config, "settings.json")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := w.hooks("install", "--scope", "user"); code != 0 {
		t.Fatalf("install --scope user: %s", errOut)
	}
	if fi, err := os.Lstat(filepath.Join(config, "settings.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlinked settings file was replaced by a file")
	}
	data, _ := os.ReadFile(filepath.Join(dotfiles, "claude.json"))
	if !strings.HasPrefix(string(data), "{\n  \"model\": \"x\",\n  \"hooks\": {") {
		t.Fatalf("user settings: %s", data)
	}
	var st struct {
		Active bool `json:"active"`
		Scopes []struct {
			Scope     string `json:"scope"`
			Installed bool   `json:"installed"`
		} `json:"scopes"`
	}
	out, _, _ := w.hooks("status", "--json")
	if json.Unmarshal([]byte(out), &st) != nil || !st.Active || len(st.Scopes) != 3 || !st.Scopes[0].Installed || st.Scopes[0].Scope != "user" {
		t.Fatalf("status --json: %s", out)
	}
	// status takes the scope as install does (`hooks status [--scope S]`).
	if out, errOut, code := w.hooks("status", "--scope", "user"); code != 0 || !strings.Contains(out, "installed: ") {
		t.Fatalf("status --scope user: exit %d %q %q", code, out, errOut)
	}
	if _, errOut, code := w.hooks("status", "--scope", "bogus"); code != 2 || !strings.Contains(errOut, "unknown scope") {
		t.Fatalf("status --scope bogus: exit %d %q", code, errOut)
	}
}

// Uninstall at user scope takes out the settings file install made, and leaves the
// agent's own folder (here an empty $CLAUDE_CONFIG_DIR the user made) where it was.
func TestHooksUninstallKeepsTheUserFolder(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	config := filepath.Join(filepath.Dir(w.dir), "claude") // CLAUDE_CONFIG_DIR
	if err := os.MkdirAll(config, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := w.hooks("install", "--scope", "user"); code != 0 {
		t.Fatalf("install --scope user: %s", errOut)
	}
	if _, errOut, code := w.hooks("uninstall", "--scope", "user"); code != 0 {
		t.Fatalf("uninstall --scope user: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(config, "settings.json")); err == nil {
		t.Fatal("uninstall left the settings.json that install made")
	}
	if fi, err := os.Stat(config); err != nil || !fi.IsDir() {
		t.Fatalf("uninstall removed $CLAUDE_CONFIG_DIR, which install did not make: %v", err)
	}
}

// TestHooksInstallReplacesAnOlderInstall: the plugin moved; the hooks of the old path
// are replaced, not doubled, and status says when a path no longer exists.
func TestHooksInstallReplacesAnOlderInstall(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	stale := `{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "'/old place/bin/mcpdiff' hook"}]}`
	w.Write(".claude/settings.json", `{"hooks": {"PostToolUse": [`+stale+`]}}`)
	out, _, _ := w.hooks("status")
	if !strings.Contains(out, "only one of the PreToolUse and PostToolUse hooks") {
		t.Fatalf("status of half an install: %q", out)
	}
	old := strings.ReplaceAll(userSettings, `"Stop"`, `"PostToolUse": [`+stale+`], "Stop"`)
	old = strings.Replace(old, `"PreToolUse": [`, `"PreToolUse": [`+stale+`, `, 1)
	w.Write(".claude/settings.json", old)
	out, _, _ = w.hooks("status")
	if !strings.Contains(out, "/old place/bin/mcpdiff does not exist") || strings.Contains(out, "\nactive") {
		t.Fatalf("status of a stale install: %q", out)
	}
	if _, errOut, code := w.hooks("install", "--scope", "project"); code != 0 {
		t.Fatal(errOut)
	}
	got := w.Read(".claude/settings.json")
	if strings.Contains(got, "/old place/") || strings.Count(got, testenv.Binary+" hook") != 3 { // PreToolUse, PostToolUse, UserPromptSubmit
		t.Fatalf("after install over an older one:\n%s", got)
	}
}

func TestHooksRefusesBadSettings(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	cases := map[string]string{
		"not JSON":           `{"permissions": {`,
		"not an object":      `["hooks"]`,
		"hooks not object":   `{"hooks": []}`,
		"event not a list":   `{"hooks": {"PreToolUse": {}}}`,
		"two values in file": `{} {}`,
		"comment":            "{\n  // mine\n  \"theme\": \"dark\"\n}\n",
		"block comment":      "{ /* mine */ \"theme\": \"dark\" }",
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			w.Write(".claude/settings.local.json", content)
			for _, action := range []string{"install", "uninstall"} {
				_, errOut, code := w.hooks(action)
				if code != 1 || !strings.Contains(errOut, "settings.local.json") || !strings.Contains(errOut, "nothing was changed") {
					t.Fatalf("%s: exit %d %q", action, code, errOut)
				}
				if strings.Contains(name, "comment") != strings.Contains(errOut, "holds a comment") {
					t.Fatalf("%s of a file with a %s: %q", action, name, errOut)
				}
				if got := w.Read(".claude/settings.local.json"); got != content {
					t.Fatalf("%s changed a file it refused: %q", action, got)
				}
			}
		})
	}
	for _, args := range [][]string{{"install", "--scope", "global"}, {"frobnicate"}, {}, {"install", "--scope"}} {
		if _, errOut, code := w.hooks(args...); code != 2 || errOut == "" {
			t.Fatalf("hooks %v: exit %d %q; want 2 and a message", args, code, errOut)
		}
	}
}
