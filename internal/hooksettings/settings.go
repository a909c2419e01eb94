// Package hooksettings is `mcpdiff hooks`: it puts the hooks of internal/agenthooks
// into each agent's own configuration (Claude Code's settings files, Codex's
// hooks.json and the trust entries of its config.toml, Gemini CLI's settings, the
// OpenCode plugin, Copilot CLI's and Cursor's hooks files), merged with what is
// there, takes out exactly what it put in, and says whether they will run (each
// agent's trust gates). It edits JSON as an order-keeping tree (jsontree.go).
package hooksettings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/agenthooks"
	"github.com/mcpdiff/mcpdiff/internal/atomicfile"
	"github.com/mcpdiff/mcpdiff/internal/history"
)

// Scopes of Claude Code's settings files, in the order Claude Code reads them.
const (
	ScopeUser    = "user"    // $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json
	ScopeProject = "project" // <project>/.claude/settings.json (shared through the repository)
	ScopeLocal   = "local"   // <project>/.claude/settings.local.json (this machine only)
)

// Scopes lists every scope.
var Scopes = []string{ScopeUser, ScopeProject, ScopeLocal}

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

// Settings is the settings JSON that gives Claude Code the hooks, for
// `claude --settings`.
func Settings(bin string) []byte {
	sf := &settingsFile{root: &node{obj: true}}
	f := formats[agenthooks.Claude]
	hooks := &node{obj: true}
	for _, ev := range f.events {
		hooks.set(ev.name, &node{arr: true, array: []*node{f.entry(agenthooks.Claude, bin, ev)}})
	}
	sf.root.set("hooks", hooks)
	return append(sf.root.encode(), '\n')
}

// settingsFile is a settings file as read: its tree and its bytes.
type settingsFile struct {
	path    string // the file itself (a symlink resolved)
	data    []byte // nil when it did not exist
	root    *node
	exists  bool
	project string // the project a project scope's file stays in; "" at user scope
}

// Limits on a settings file mcpdiff reads: it may come with a repository, and a
// file of deep nesting would otherwise take the parser's stack, or the indentation of
// what is written back would grow with the square of its size.
const (
	maxSettingsSize  = 4 << 20
	maxSettingsDepth = 64
)

// readSettings reads the settings file at path. confine, when set, is the project
// folder the file must stay in: a symlink on the way that leads out of it is refused
// (a repository can ship .claude as a link to the user's own settings).
func readSettings(path, confine string) (*settingsFile, error) {
	if confine != "" {
		if err := confined(path, confine); err != nil {
			return nil, err
		}
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a settings file linked from a dotfiles repository stays a link
	}
	f := &settingsFile{path: path, root: &node{obj: true}, project: confine}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err == nil && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; nothing was changed", path)
	}
	if err == nil && info.Size() > maxSettingsSize {
		return nil, fmt.Errorf("%s is %d MB, more than a settings file should hold (%d MB): not read, nothing was changed", path, info.Size()>>20, maxSettingsSize>>20)
	}
	data, err := readLimited(path, maxSettingsSize)
	if err != nil {
		return nil, err
	}
	f.data, f.exists = data, true
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	root, err := parseTree(data, maxSettingsDepth)
	if err != nil && startsComment(data, err) {
		// Some agents (Gemini CLI) accept comments in their settings: say that this
		// is what stops us, not just where.
		return nil, fmt.Errorf("%s holds a comment, which plain JSON does not allow and mcpdiff cannot read: "+
			"take the comments out (or add the hooks by hand), then run this again (nothing was changed)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix it, then run this again (nothing was changed)", path, err)
	}
	if !root.obj {
		return nil, fmt.Errorf("%s does not hold a JSON object; fix it, then run this again (nothing was changed)", path)
	}
	f.root = root
	return f, nil
}

func readLimited(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is more than %d MB, more than a settings file should hold: not read, nothing was changed", path, limit>>20)
	}
	return data, nil
}

// confined fails when a folder or file on the way from project to path is a symlink
// that leads out of project.
func confined(path, project string) error {
	realProject := history.RealPath(project)
	rel, err := filepath.Rel(project, path)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s is not inside the project %s", path, project)
	}
	cur := project
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil // the rest does not exist yet: install makes real folders
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(cur)
		if err != nil {
			return fmt.Errorf("%s is a symlink that leads nowhere (%v); not followed, nothing was changed", cur, err)
		}
		if !within(target, realProject) {
			return fmt.Errorf("%s is a symlink to %s, outside the project: not followed, nothing was changed "+
				"(a project's settings stay in the project; remove the link, or use --scope user)", cur, target)
		}
	}
	return nil
}

// remove deletes the file, and at a project scope its folder when that leaves it
// empty (install made it there). A user scope's folder is the agent's own home
// (~/.claude, $CLAUDE_CONFIG_DIR, ...), which stays even when empty.
func (f *settingsFile) remove() (bool, error) {
	if err := os.Remove(f.path); err != nil {
		return false, fmt.Errorf("remove %s: %w", f.path, err)
	}
	if f.project != "" {
		_ = os.Remove(filepath.Dir(f.path))
	}
	return true, nil
}

// write saves the tree atomically (a temp file in the same folder, then a rename),
// unless that changes nothing. A file that changed since it was read (Claude Code
// writes settings.local.json too) is not overwritten.
func (f *settingsFile) write() (bool, error) {
	data := f.root.encode()
	if !f.exists || bytes.HasSuffix(f.data, []byte("\n")) {
		data = append(data, '\n')
	}
	if f.exists && bytes.Equal(data, f.data) {
		return false, nil
	}
	err := writeFileAtomic(f.path, data, func() error {
		if now, rerr := os.ReadFile(f.path); (rerr == nil) != f.exists || !bytes.Equal(now, f.data) {
			return fmt.Errorf("it changed while mcpdiff was updating it; run this again")
		}
		return nil
	})
	return err == nil, err
}

// ScopeStatus says whether one settings file has the hooks.
type ScopeStatus struct {
	Scope     string `json:"scope"`
	Path      string `json:"path"`
	Exists    bool   `json:"exists"`
	Installed bool   `json:"installed"`         // both hooks are there and their binary exists
	Command   string `json:"command,omitempty"` // the hook command found
	Problem   string `json:"problem,omitempty"` // why the hooks there do not work
	Note      string `json:"note,omitempty"`    // what works less well than it could
}

// Report says where the hooks are and whether a claude started in the project runs
// them.
type Report struct {
	Active   bool          `json:"active"`
	Disabled string        `json:"disabledBy,omitempty"` // a file that sets disableAllHooks
	Scopes   []ScopeStatus `json:"scopes"`
	// PermissionMode is Claude Code's default permission mode as these files set it
	// (permissions.defaultMode; the later scopes win), and PermissionModeFrom the
	// file that sets it: "" when none does, and the mode is Claude Code's own
	// default, auto (since 2.1.330). In `default` it sends each edit to Neovim as a
	// diff; in the others it writes them itself, and only the hooks record them.
	PermissionMode     string `json:"permissionMode"`
	PermissionModeFrom string `json:"permissionModeFrom,omitempty"`
}

// claudeDefaultMode is Claude Code's permission mode when no settings file sets one.
const claudeDefaultMode = "auto"

// Status reads the settings file of each scope (paths: scope → file; confine: the
// project, which the project scopes' files must stay in).
func Status(paths map[string]string, confine string) Report {
	r := Report{PermissionMode: claudeDefaultMode}
	for _, scope := range Scopes {
		st := ScopeStatus{Scope: scope, Path: paths[scope]}
		limit := confine
		if scope == ScopeUser {
			limit = ""
		}
		f, err := readSettings(st.Path, limit)
		if err != nil {
			st.Exists, st.Problem = true, err.Error()
			r.Scopes = append(r.Scopes, st)
			continue
		}
		st.Exists = f.exists
		found := findHooks(agenthooks.Claude, f)
		st.Command = found.command
		switch {
		case st.Command == "":
		case slices.Contains(found.missing, agenthooks.PreToolUse) || slices.Contains(found.missing, agenthooks.PostToolUse):
			st.Problem = "only one of the PreToolUse and PostToolUse hooks is there: run `mcpdiff hooks install` again"
		default:
			st.Problem = binaryProblem(st.Command, "")
			st.Installed = st.Problem == ""
			if st.Installed && len(found.missing) > 0 {
				st.Note = "conversations get no titles without the UserPromptSubmit hook: run `mcpdiff hooks install` again"
			}
		}
		if off := f.root.get("disableAllHooks"); off != nil && string(off.scalar) == "true" {
			r.Disabled = st.Path
		}
		if mode := f.root.get("permissions").get("defaultMode").str(); mode != "" {
			r.PermissionMode, r.PermissionModeFrom = mode, st.Path
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

// writeFileAtomic replaces path with data in one step (atomicfile), keeping its
// permissions, making its folder when needed. unchanged, when given, is asked last,
// before the file takes its name: its error leaves the file as it was.
func writeFileAtomic(path string, data []byte, unchanged func() error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := atomicfile.Write(path, data, atomicfile.Options{Sync: true, Check: unchanged}); err != nil {
		return fmt.Errorf("write %s: %w (nothing was changed)", path, err)
	}
	return nil
}

// GeminiRunSettings writes the settings file that gives one Gemini CLI run the hooks
// (for GEMINI_CLI_SYSTEM_DEFAULTS_PATH, its lowest layer) into dir, and returns its
// path. Gemini CLI ignores such a file when a folder above it is writable by others,
// so dir is made private (0700), and the file 0600.
func GeminiRunSettings(dir, bin string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	sf := &settingsFile{path: filepath.Join(dir, "gemini-system-defaults.json"), root: &node{obj: true}}
	f := formats[agenthooks.Gemini]
	hooks := &node{obj: true}
	for _, ev := range f.events {
		hooks.set(ev.name, &node{arr: true, array: []*node{f.entry(agenthooks.Gemini, bin, ev)}})
	}
	sf.root.set("hooks", hooks)
	if err := writeFileAtomic(sf.path, append(sf.root.encode(), '\n'), nil); err != nil {
		return "", err
	}
	return sf.path, os.Chmod(sf.path, 0o600)
}

// startsComment reports whether the JSON syntax error err stopped at a // or /*.
func startsComment(data []byte, err error) bool {
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) {
		return false
	}
	// The decoder's offset is at the bad byte, Unmarshal's just after it.
	for _, at := range []int64{syntax.Offset, syntax.Offset - 1} {
		if at >= 0 && at < int64(len(data)) && (bytes.HasPrefix(data[at:], []byte("//")) || bytes.HasPrefix(data[at:], []byte("/*"))) {
			return true
		}
	}
	return false
}
