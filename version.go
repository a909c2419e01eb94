// Package mcpdiff holds what the Go binary shares with the Lua plugin, read from
// the plugin's own files so that each fact is written once.
package mcpdiff

import (
	_ "embed"
	"strings"
)

//go:embed lua/mcpdiff/version.lua
var versionLua string

// Version is the release, as lua/mcpdiff/version.lua says: its last line is
// `return "X.Y.Z"`.
var Version = parseVersion(versionLua)

func parseVersion(lua string) string {
	lines := strings.Split(strings.TrimSpace(lua), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	return strings.Trim(strings.TrimPrefix(last, "return"), ` "`)
}
