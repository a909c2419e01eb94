// Package mcpdiff holds what the binary carries from the plugin's own files, so that
// each fact is written once: the Go side sends these Lua sources to Neovim rather
// than keeping copies of them.
package mcpdiff

import _ "embed"

// BuffersLua is lua/mcpdiff/buffers.lua: finding, checking and reloading the buffers
// of files. It requires nothing, so it runs in any Neovim, plugin loaded or not.
//
//go:embed lua/mcpdiff/buffers.lua
var BuffersLua string
