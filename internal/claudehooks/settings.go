package claudehooks

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Scopes of Claude Code's settings files, in the order Claude Code reads them.
const (
	ScopeUser    = "user"    // $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json
	ScopeProject = "project" // <project>/.claude/settings.json (shared through the repository)
	ScopeLocal   = "local"   // <project>/.claude/settings.local.json (this machine only)
)

// Scopes lists every scope.
var Scopes = []string{ScopeUser, ScopeProject, ScopeLocal}

// hookTimeout is the timeout, in seconds, Claude Code gives the hook command: a net
// under the hook's own budget of 2 s, should the machine stall.
const hookTimeout = 10

// SettingsPath is the settings file of scope; project is the folder Claude Code runs
// in, configDir $CLAUDE_CONFIG_DIR and home the home folder.
func SettingsPath(scope, project, configDir, home string) (string, error) {
	switch scope {
	case ScopeLocal:
		return filepath.Join(project, ".claude", "settings.local.json"), nil
	case ScopeProject:
		return filepath.Join(project, ".claude", "settings.json"), nil
	case ScopeUser:
		if configDir != "" {
			return filepath.Join(configDir, "settings.json"), nil
		}
		if home == "" {
			return "", errors.New("no home folder to find ~/.claude/settings.json in (set HOME or CLAUDE_CONFIG_DIR)")
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	}
	return "", fmt.Errorf("unknown scope %q: use local, project or user", scope)
}

// HookCommand is the command Claude Code runs: the binary by its absolute path (a
// claude started anywhere may not have it on PATH).
func HookCommand(bin string) string { return shellWord(bin) + " hook" }

// group is the matcher group mcpdiff adds to each of PreToolUse and PostToolUse.
func group(bin string) *node {
	return toNode(map[string]any{
		"matcher": strings.Join(WriteTools, "|"),
		"hooks":   []any{toNode(map[string]any{"type": "command", "command": HookCommand(bin), "timeout": hookTimeout}, "type", "command", "timeout")},
	}, "matcher", "hooks")
}

// hookEvents are the events the hooks are registered for.
var hookEvents = []string{PreToolUse, PostToolUse}

// Settings is the settings JSON that gives Claude Code the hooks, for
// `claude --settings`.
func Settings(bin string) []byte {
	root := &node{obj: true}
	hooks := &node{obj: true}
	for _, ev := range hookEvents {
		hooks.set(ev, &node{arr: true, array: []*node{group(bin)}})
	}
	root.set("hooks", hooks)
	return append(root.encode(""), '\n')
}

// isOurs reports whether a matcher group is one mcpdiff added: its one hook runs
// "<path>/mcpdiff hook". The path may differ from this binary's (the plugin moved),
// and so may the name after "mcpdiff" (mcpdiff-dev).
func isOurs(g *node) bool {
	if !g.obj {
		return false
	}
	hooks := g.get("hooks")
	if hooks == nil || !hooks.arr || len(hooks.array) != 1 || !hooks.array[0].obj {
		return false
	}
	h := hooks.array[0]
	if h.get("type").str() != "command" {
		return false
	}
	words, ok := shellWords(h.get("command").str())
	return ok && len(words) == 2 && strings.HasPrefix(filepath.Base(words[0]), "mcpdiff") && words[1] == "hook"
}

// ourCommand returns the command of mcpdiff's group in event's list, "" if none.
func ourCommand(root *node, event string) string {
	list := root.get("hooks")
	if list == nil || !list.obj {
		return ""
	}
	if groups := list.get(event); groups != nil && groups.arr {
		for _, g := range groups.array {
			if isOurs(g) {
				return g.get("hooks").array[0].get("command").str()
			}
		}
	}
	return ""
}

// settingsFile is a settings file as read: its tree and its bytes.
type settingsFile struct {
	path   string // the file itself (a symlink resolved)
	data   []byte // nil when it did not exist
	root   *node
	exists bool
}

func readSettings(path string) (*settingsFile, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a settings file linked from a dotfiles repository stays a link
	}
	f := &settingsFile{path: path, root: &node{obj: true}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f.data, f.exists = data, true
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	root, err := parseTree(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix it, then run this again (nothing was changed)", path, err)
	}
	if !root.obj {
		return nil, fmt.Errorf("%s does not hold a JSON object; fix it, then run this again (nothing was changed)", path)
	}
	if h := root.get("hooks"); h != nil {
		if !h.obj {
			return nil, fmt.Errorf(`"hooks" in %s is not an object; fix it, then run this again (nothing was changed)`, path)
		}
		for _, ev := range hookEvents {
			if l := h.get(ev); l != nil && !l.arr {
				return nil, fmt.Errorf(`"hooks.%s" in %s is not a list; fix it, then run this again (nothing was changed)`, ev, path)
			}
		}
	}
	f.root = root
	return f, nil
}

// Install puts mcpdiff's hooks for bin into the settings file at path, keeping every
// other key and hook in their order. A group of an older install (another path to
// mcpdiff) is replaced. It reports whether the file changed.
func Install(path, bin string) (bool, error) {
	f, err := readSettings(path)
	if err != nil {
		return false, err
	}
	hooks := f.root.get("hooks")
	if hooks == nil {
		hooks = &node{obj: true}
		f.root.set("hooks", hooks)
	}
	want := group(bin)
	for _, ev := range hookEvents {
		list := hooks.get(ev)
		if list == nil {
			list = &node{arr: true, array: []*node{}}
			hooks.set(ev, list)
		}
		var kept []*node
		present := false
		for _, g := range list.array {
			switch {
			case isOurs(g) && !present && g.equal(want):
				present = true
				kept = append(kept, g)
			case isOurs(g):
			default:
				kept = append(kept, g)
			}
		}
		if !present {
			kept = append(kept, want)
		}
		list.array = kept
	}
	return f.write()
}

// Uninstall takes mcpdiff's hooks out of the settings file at path: its groups, and
// the lists and objects that held nothing else. A file left empty is removed. It
// reports whether the file changed.
func Uninstall(path string) (bool, error) {
	f, err := readSettings(path)
	if err != nil || !f.exists {
		return false, err
	}
	hooks := f.root.get("hooks")
	if hooks == nil {
		return false, nil
	}
	for _, ev := range hookEvents {
		list := hooks.get(ev)
		if list == nil {
			continue
		}
		var kept []*node
		for _, g := range list.array {
			if !isOurs(g) {
				kept = append(kept, g)
			}
		}
		if len(kept) == len(list.array) {
			continue
		}
		list.array = kept
		if len(kept) == 0 {
			hooks.remove(ev)
		}
	}
	if len(hooks.object) == 0 {
		f.root.remove("hooks")
	}
	if len(f.root.object) == 0 {
		if err := os.Remove(f.path); err != nil {
			return false, fmt.Errorf("remove %s: %w", f.path, err)
		}
		_ = os.Remove(filepath.Dir(f.path)) // the .claude folder, when install made it
		return true, nil
	}
	return f.write()
}

// write saves the tree atomically (a temp file in the same folder, then a rename),
// unless that changes nothing. A file that changed since it was read (Claude Code
// writes settings.local.json too) is not overwritten.
func (f *settingsFile) write() (bool, error) {
	data := f.root.encode("")
	if !f.exists || bytes.HasSuffix(f.data, []byte("\n")) {
		data = append(data, '\n')
	}
	if f.exists && bytes.Equal(data, f.data) {
		return false, nil
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(f.path); err == nil {
		mode = info.Mode().Perm()
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	tmp := filepath.Join(dir, "."+filepath.Base(f.path)+".mcpdiff-"+hex.EncodeToString(r[:]))
	err := workspace.WriteNew(tmp, data, mode, true)
	if err == nil {
		if now, rerr := os.ReadFile(f.path); (rerr == nil) != f.exists || !bytes.Equal(now, f.data) {
			err = fmt.Errorf("it changed while mcpdiff was updating it; run this again")
		}
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("write %s: %w (nothing was changed)", f.path, err)
	}
	return true, nil
}

// ScopeStatus says whether one settings file has the hooks.
type ScopeStatus struct {
	Scope     string `json:"scope"`
	Path      string `json:"path"`
	Exists    bool   `json:"exists"`
	Installed bool   `json:"installed"`         // both hooks are there and their binary exists
	Command   string `json:"command,omitempty"` // the hook command found
	Problem   string `json:"problem,omitempty"` // why the hooks there do not work
}

// Report says where the hooks are and whether a claude started in the project runs
// them.
type Report struct {
	Active   bool          `json:"active"`
	Disabled string        `json:"disabledBy,omitempty"` // a file that sets disableAllHooks
	Scopes   []ScopeStatus `json:"scopes"`
}

// Status reads the settings file of each scope (paths: scope → file).
func Status(paths map[string]string) Report {
	var r Report
	for _, scope := range Scopes {
		st := ScopeStatus{Scope: scope, Path: paths[scope]}
		f, err := readSettings(st.Path)
		if err != nil {
			st.Exists, st.Problem = true, err.Error()
			r.Scopes = append(r.Scopes, st)
			continue
		}
		st.Exists = f.exists
		pre, post := ourCommand(f.root, PreToolUse), ourCommand(f.root, PostToolUse)
		st.Command = pre
		if pre == "" {
			st.Command = post
		}
		switch {
		case st.Command == "":
		case pre == "" || post == "":
			st.Problem = "only one of the PreToolUse and PostToolUse hooks is there: run `mcpdiff hooks install` again"
		default:
			words, _ := shellWords(st.Command)
			if info, err := os.Stat(words[0]); err != nil || info.IsDir() {
				st.Problem = fmt.Sprintf("%s does not exist: run `mcpdiff hooks install` again with the binary you use", words[0])
			} else {
				st.Installed = true
			}
		}
		if off := f.root.get("disableAllHooks"); off != nil && string(off.scalar) == "true" {
			r.Disabled = st.Path
		}
		r.Active = r.Active || st.Installed
		r.Scopes = append(r.Scopes, st)
	}
	r.Active = r.Active && r.Disabled == ""
	return r
}

// shellWord quotes s for a POSIX shell when it needs it (Claude Code runs the command
// with sh).
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:,@%=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWords splits a command line into words the way sh does for plain words and
// quotes (no expansions); ok is false for what it cannot split.
func shellWords(s string) (words []string, ok bool) {
	var w strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i, in = i+1+j, true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			in = true
		case strings.IndexByte("$`;&|<>(){}*?[]~#\n", c) >= 0:
			return nil, false
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words, true
}
