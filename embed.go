package mcpdiff

import _ "embed"

// BuffersLua is lua/mcpdiff/buffers.lua, the plugin's module that reloads and
// inspects file buffers. The Go side runs it in Neovims that may not have the
// plugin loaded (`mcpdiff serve` started from a Neovim terminal), so it carries the
// file rather than a copy of its logic.
//
//go:embed lua/mcpdiff/buffers.lua
var BuffersLua string
