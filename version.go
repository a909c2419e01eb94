// Package mcpdiff holds what the binary and the Lua plugin share: files of the
// plugin the Go side reads, so that each fact is written once.
package mcpdiff

import (
	_ "embed"
	"regexp"
)

//go:embed lua/mcpdiff/version.lua
var versionLua string

// Version is the release, read from lua/mcpdiff/version.lua (`return "X.Y.Z"`): the
// Lua plugin requires that file, so both sides report the same version, and a
// bin/mcpdiff older than its plugin is caught by comparing them.
var Version = regexp.MustCompile(`(?m)^return "([^"]+)"`).FindStringSubmatch(versionLua)[1]
