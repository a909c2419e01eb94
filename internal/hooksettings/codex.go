package hooksettings

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/agenthooks"
	"github.com/mcpdiff/mcpdiff/internal/history"
)

// Codex runs a hook only when the user's config.toml holds its trust entry,
//
//	[hooks.state."<hooks.json>:<event>:<group>:<hook>"]
//	trusted_hash = "sha256:<hex>"
//
// the hash being SHA-256 over the hook group as key-sorted compact JSON, as Codex
// computes it (the same `currentHash` that `codex app-server`'s hooks/list reports).
// Without it Codex skips the hook and says nothing. `install` writes the entries of
// mcpdiff's own groups, each after a marker comment, and `uninstall` removes them.

const codexMarker = "# mcpdiff hooks install: trust for mcpdiff's own hook (`mcpdiff hooks uninstall --agent codex` removes it)"

// codexEventNames are Codex's names of the events in its trust keys.
var codexEventNames = map[string]string{agenthooks.PreToolUse: "pre_tool_use", agenthooks.PostToolUse: "post_tool_use", agenthooks.UserPromptSubmit: "user_prompt_submit"}

// codexTrust is one trust entry: its key and hash.
type codexTrust struct{ key, hash string }

// codexTrustEntries are the entries mcpdiff's groups in the hooks file need.
func codexTrustEntries(sf *settingsFile) []codexTrust {
	f := formats[agenthooks.Codex]
	var out []codexTrust
	hooks := sf.root.get("hooks")
	if hooks == nil || !hooks.obj {
		return nil
	}
	for _, ev := range f.events {
		list := hooks.get(ev.name)
		if list == nil || !list.arr {
			continue
		}
		for i, g := range list.array {
			cmd := f.ourCommand(agenthooks.Codex, g)
			if cmd == "" {
				continue
			}
			h := g.get("hooks").array[0]
			timeout := 600 // Codex's default
			if t, err := strconv.Atoi(string(h.get("timeout").scalarOr("600"))); err == nil {
				timeout = t
			}
			group := map[string]any{"event_name": codexEventNames[ev.name],
				"hooks": []any{map[string]any{"async": false, "command": cmd, "timeout": timeout, "type": "command"}}}
			if m := g.get("matcher"); m != nil {
				group["matcher"] = m.str()
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false) // as Codex's serializer writes it
			_ = enc.Encode(group)
			sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
			out = append(out, codexTrust{
				key:  history.RealPath(sf.path) + ":" + codexEventNames[ev.name] + ":" + strconv.Itoa(i) + ":0",
				hash: "sha256:" + hex.EncodeToString(sum[:]),
			})
		}
	}
	return out
}

func (n *node) scalarOr(dflt string) []byte {
	if n == nil || n.scalar == nil {
		return []byte(dflt)
	}
	return n.scalar
}

func codexConfigPath(e Env) (string, error) {
	home, err := e.codexHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "config.toml"), nil
}

// trustCodexHooks writes the trust entries of mcpdiff's groups in sf into the user's
// config.toml, replacing older ones of the same hooks file.
func trustCodexHooks(sf *settingsFile, e Env) ([]string, error) {
	path, err := codexConfigPath(e)
	if err != nil {
		return nil, err
	}
	entries := codexTrustEntries(sf)
	text, err := readTOML(path)
	if err != nil {
		return nil, err
	}
	prefix := history.RealPath(sf.path) + ":"
	kept := removeTOMLTables(text, func(key string, ours bool) bool {
		if !strings.HasPrefix(key, prefix) {
			return false
		}
		if ours {
			return true
		}
		for _, t := range entries { // a hand-made entry for one of our keys would clash
			if t.key == key {
				return true
			}
		}
		return false
	})
	var b strings.Builder
	b.WriteString(kept)
	if kept != "" && !strings.HasSuffix(kept, "\n") {
		b.WriteString("\n")
	}
	for _, t := range entries {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n\n") {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s\n[hooks.state.%s]\ntrusted_hash = %s\n", codexMarker, tomlString(t.key), tomlString(t.hash))
	}
	if b.String() == text {
		return nil, nil
	}
	if err := writeFileAtomic(path, []byte(b.String()), nil); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("trusted them in %s (%d trusted_hash entries: Codex runs no hook without one)", path, len(entries))}, nil
}

// untrustCodexHooks removes the trust entries install wrote for the hooks file sf.
func untrustCodexHooks(sf *settingsFile, e Env) ([]string, error) {
	path, err := codexConfigPath(e)
	if err != nil {
		return nil, err
	}
	text, err := readTOML(path)
	if err != nil || text == "" {
		return nil, err
	}
	prefix := history.RealPath(sf.path) + ":"
	kept := removeTOMLTables(text, func(key string, ours bool) bool { return ours && strings.HasPrefix(key, prefix) })
	if kept == text {
		return nil, nil
	}
	if strings.TrimSpace(kept) == "" {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove %s: %w", path, err)
		}
	} else if err := writeFileAtomic(path, []byte(kept), nil); err != nil {
		return nil, err
	}
	return []string{"removed their trusted_hash entries from " + path}, nil
}

func readTOML(path string) (string, error) {
	data, err := readLimited(path, maxSettingsSize)
	if os.IsNotExist(err) || (err != nil && !fileExists(path)) {
		return "", nil
	}
	return string(data), err
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlHeader reads a `[hooks.state."KEY"]` table header; ok false for any other line.
func tomlHeader(line, table string) (key string, ok bool) {
	l := strings.TrimSpace(line)
	rest, found := strings.CutPrefix(l, "["+table+".")
	if !found || !strings.HasSuffix(rest, "]") || strings.HasPrefix(l, "[[") {
		return "", false
	}
	rest = strings.TrimSuffix(rest, "]")
	var s string
	if json.Unmarshal([]byte(rest), &s) == nil { // a basic string reads as JSON
		return s, true
	}
	if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' {
		return rest[1 : len(rest)-1], true
	}
	return "", false
}

// removeTOMLTables drops the [hooks.state."KEY"] tables for which drop says so (ours:
// the table follows mcpdiff's marker comment), with their marker.
func removeTOMLTables(text string, drop func(key string, ours bool) bool) string {
	lines := strings.SplitAfter(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		key, isHeader := tomlHeader(lines[i], "hooks.state")
		if !isHeader {
			out = append(out, lines[i])
			continue
		}
		ours := len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == codexMarker
		if !drop(key, ours) {
			out = append(out, lines[i])
			continue
		}
		if ours {
			out = out[:len(out)-1]
			if len(out) > 0 && out[len(out)-1] == "\n" { // the blank line install put before it
				out = out[:len(out)-1]
			}
		}
		for i+1 < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "[") && strings.TrimSpace(lines[i+1]) != codexMarker {
			i++
		}
	}
	return strings.Join(out, "")
}

// tomlTableValue is the raw value of key in the table [table."name"], "" if absent.
func tomlTableValue(text, table, name, key string) string {
	in := false
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			k, ok := tomlHeader(l, table)
			in = ok && k == name
			continue
		}
		if !in {
			continue
		}
		if k, v, found := strings.Cut(l, "="); found && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// codexGates are Codex's closed gates: a project not trusted (its .codex/ is not
// loaded at all), and hooks without their trust entries.
func codexGates(e Env, scopes []ScopeStatus) []Gate {
	path, err := codexConfigPath(e)
	if err != nil {
		return nil
	}
	text, _ := readTOML(path)
	var gates []Gate
	for _, st := range scopes {
		if !st.Installed {
			continue
		}
		if st.Scope == ScopeProject {
			project := history.RealPath(e.Project)
			if v := tomlTableValue(text, "projects", project, "trust_level"); v != `"trusted"` {
				gates = append(gates, Gate{Scope: st.Scope,
					Problem: fmt.Sprintf("Codex loads %s only in a trusted project, and %s is not trusted", st.Path, project),
					Fix: fmt.Sprintf("run `codex` in %s and trust the project when it asks (it writes [projects.%s] trust_level = \"trusted\" into %s)",
						project, tomlString(project), path)})
			}
		}
		sf, err := readSettings(st.Path, "")
		if err != nil {
			continue
		}
		for _, t := range codexTrustEntries(sf) {
			if got := tomlTableValue(text, "hooks.state", t.key, "trusted_hash"); got != tomlString(t.hash) {
				gates = append(gates, Gate{Scope: st.Scope,
					Problem: fmt.Sprintf("Codex skips mcpdiff's hooks in %s: %s lacks their current trusted_hash entry", st.Path, path),
					Fix:     fmt.Sprintf("mcpdiff hooks install --agent codex --scope %s", st.Scope)})
				break
			}
		}
	}
	return gates
}
