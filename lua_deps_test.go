package mcpdiff

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// What lua/mcpdiff/bridge.lua may load of the plugin: the options, the version it
// checks the binary against, and a pure helper. The modules that follow the bridge
// (hunks, selection, diff, ...) listen to it (bridge.on) instead, so the job's module
// stays the bottom of the plugin and none of them can be loaded by it by accident.
var bridgeLuaMayLoad = map[string]bool{"mcpdiff.config": true, "mcpdiff.version": true, "mcpdiff.once": true}

// A module reached by require, or looked up in package.loaded, with its name in
// quotes; or a require of something that is not a quoted name.
var luaModuleUse = regexp.MustCompile(`require\s*\(?\s*(["'][^"']*["'])?|package\.loaded\s*\[\s*(["'][^"']*["'])`)

func TestBridgeLuaDependsOnlyOnConfig(t *testing.T) {
	data, err := os.ReadFile("lua/mcpdiff/bridge.lua")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		code, _, _ := strings.Cut(line, "--")
		for _, m := range luaModuleUse.FindAllStringSubmatch(code, -1) {
			name := strings.Trim(m[1]+m[2], `"'`)
			switch {
			case name == "":
				t.Errorf("lua/mcpdiff/bridge.lua:%d: a require of a computed name: %s", i+1, strings.TrimSpace(line))
			case (name == "mcpdiff" || strings.HasPrefix(name, "mcpdiff.")) && !bridgeLuaMayLoad[name]:
				t.Errorf("lua/mcpdiff/bridge.lua:%d: uses %s; subscribe it with bridge.on instead: %s", i+1, name, strings.TrimSpace(line))
			}
		}
	}
}
