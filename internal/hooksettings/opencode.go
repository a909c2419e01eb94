package hooksettings

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// OpenCode runs plugins, not commands: mcpdiff installs a plugin file that runs
// `mcpdiff hook --agent opencode`. It never goes under the project's .opencode/:
// OpenCode runs `npm install` in every configuration folder it loads, which would put
// package.json and node_modules/ into the user's repository. At user scope the plugin
// is in OpenCode's own plugin folder; at project scope the project's opencode.json
// names it (a "plugin" entry) in mcpdiff's data folder.

//go:embed opencode-plugin.js
var openCodePlugin string

// pluginName is the plugin file's name.
const pluginName = "mcpdiff.js"

// pluginMarker starts every plugin file mcpdiff writes.
const pluginMarker = "// mcpdiff's OpenCode plugin"

// PluginSource is the plugin that runs bin.
func PluginSource(bin string) string {
	quoted, _ := json.Marshal(bin)
	return strings.Replace(openCodePlugin, "__MCPDIFF_BIN__", string(quoted), 1)
}

// SharedPluginPath is the plugin file that project configurations and single runs
// name: in mcpdiff's data folder, outside every repository.
func SharedPluginPath(e Env) (string, error) {
	data, err := e.dataHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(data, "mcpdiff", "opencode", pluginName), nil
}

// writePlugin writes the plugin for bin at path unless it is there already; a file
// there that mcpdiff did not write is left alone.
func writePlugin(path, bin string) (bool, error) {
	want := PluginSource(bin)
	old, err := os.ReadFile(path)
	if err == nil && string(old) == want {
		return false, nil
	}
	if err == nil && !strings.HasPrefix(string(old), pluginMarker) {
		return false, fmt.Errorf("%s exists and is not mcpdiff's plugin; nothing was changed", path)
	}
	return true, writeFileAtomic(path, []byte(want), nil)
}

// OpenCodeRunConfig is the configuration that gives one OpenCode run the plugin
// (for OPENCODE_CONFIG_CONTENT), after writing the plugin file it names.
func OpenCodeRunConfig(e Env, bin string) (string, error) {
	path, err := SharedPluginPath(e)
	if err != nil {
		return "", err
	}
	if _, err := writePlugin(path, bin); err != nil {
		return "", err
	}
	b, _ := json.Marshal(map[string]any{"plugin": []string{"file://" + path}})
	return string(b), nil
}

// isOurPluginEntry reports whether a "plugin" entry of opencode.json names
// mcpdiff's plugin file (of any install).
func isOurPluginEntry(n *node) bool {
	s := n.str()
	p, ok := strings.CutPrefix(s, "file://")
	return ok && filepath.Base(p) == pluginName && filepath.Base(filepath.Dir(p)) == "opencode" &&
		filepath.Base(filepath.Dir(filepath.Dir(p))) == "mcpdiff"
}

func installOpenCode(scope, path string, e Env, bin string) ([]string, error) {
	if scope == ScopeUser {
		changed, err := writePlugin(path, bin)
		if err != nil {
			return nil, err
		}
		if !changed {
			return []string{"the plugin is already in " + path}, nil
		}
		return []string{fmt.Sprintf("installed the plugin %s (it runs %s hook --agent opencode)", path, shellWord(bin))}, nil
	}
	if jsonc := filepath.Join(e.Project, "opencode.jsonc"); fileExists(jsonc) && !fileExists(path) {
		return nil, fmt.Errorf("the project's OpenCode configuration is %s (JSON with comments), which mcpdiff does not rewrite: "+
			"use --scope user, or add the plugin to its \"plugin\" list yourself", jsonc)
	}
	plugin, err := SharedPluginPath(e)
	if err != nil {
		return nil, err
	}
	sf, err := readSettings(path, e.Project)
	if err != nil {
		return nil, err
	}
	var done []string
	if changed, err := writePlugin(plugin, bin); err != nil {
		return nil, err
	} else if changed {
		done = append(done, "wrote the plugin "+plugin)
	}
	want := toNode("file://" + plugin)
	list := sf.root.get("plugin")
	if list != nil && !list.arr {
		return nil, fmt.Errorf(`"plugin" in %s is not a list; fix it, then run this again (nothing was changed)`, sf.path)
	}
	if list == nil {
		list = &node{arr: true, array: []*node{}}
		sf.root.set("plugin", list)
	}
	var kept []*node
	present := false
	for _, n := range list.array {
		switch {
		case isOurPluginEntry(n) && !present && n.equal(want):
			present = true
			kept = append(kept, n)
		case isOurPluginEntry(n):
		default:
			kept = append(kept, n)
		}
	}
	if !present {
		kept = append(kept, want)
	}
	list.array = kept
	changed, err := sf.write()
	if err != nil {
		return done, err
	}
	if changed {
		done = append(done, fmt.Sprintf("named it in %s (\"plugin\")", sf.path))
	}
	if len(done) == 0 {
		done = append(done, "the plugin is already in "+sf.path)
	}
	return done, nil
}

func uninstallOpenCode(scope, path string, e Env) ([]string, error) {
	if scope == ScopeUser {
		data, err := os.ReadFile(path)
		if err != nil || !strings.HasPrefix(string(data), pluginMarker) {
			return []string{"the plugin was not in " + path}, nil
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove %s: %w", path, err)
		}
		return []string{"removed the plugin " + path}, nil
	}
	sf, err := readSettings(path, e.Project)
	if err != nil {
		return nil, err
	}
	list := sf.root.get("plugin")
	if !sf.exists || list == nil || !list.arr {
		return []string{"the plugin was not in " + path}, nil
	}
	var kept []*node
	for _, n := range list.array {
		if !isOurPluginEntry(n) {
			kept = append(kept, n)
		}
	}
	if len(kept) == len(list.array) {
		return []string{"the plugin was not in " + path}, nil
	}
	list.array = kept
	if len(kept) == 0 {
		sf.root.remove("plugin")
	}
	if len(sf.root.object) == 0 {
		if _, err := sf.remove(); err != nil {
			return nil, err
		}
	} else if _, err := sf.write(); err != nil {
		return nil, err
	}
	// The plugin file in mcpdiff's data folder stays: other projects may name it.
	return []string{"removed the plugin from " + sf.path}, nil
}

func openCodeScopeStatus(scope, path string, e Env) ScopeStatus {
	st := ScopeStatus{Scope: scope, Path: path}
	plugin := path
	if scope == ScopeProject {
		sf, err := readSettings(path, e.Project)
		if err != nil {
			st.Exists, st.Problem = true, err.Error()
			return st
		}
		st.Exists = sf.exists
		list := sf.root.get("plugin")
		found := ""
		if list != nil && list.arr {
			for _, n := range list.array {
				if isOurPluginEntry(n) {
					found = strings.TrimPrefix(n.str(), "file://")
				}
			}
		}
		if found == "" {
			return st
		}
		plugin = found
	}
	data, err := os.ReadFile(plugin)
	st.Exists = st.Exists || err == nil
	switch {
	case err != nil && scope == ScopeProject:
		st.Problem = fmt.Sprintf("%s names %s, which is gone: run `mcpdiff hooks install --agent opencode --scope project` again", path, plugin)
	case err != nil:
	case !strings.HasPrefix(string(data), pluginMarker):
		st.Problem = plugin + " is not mcpdiff's plugin"
	default:
		var bin string
		if i := strings.Index(string(data), "const MCPDIFF = "); i >= 0 {
			line, _, _ := strings.Cut(string(data)[i+len("const MCPDIFF = "):], ";")
			_ = json.Unmarshal([]byte(line), &bin)
		}
		st.Command = shellWord(bin) + " hook --agent opencode"
		st.Problem = binaryProblem(st.Command, " --agent opencode")
		st.Installed = st.Problem == ""
	}
	return st
}
