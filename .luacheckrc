-- luacheck for the plugin: Neovim's LuaJIT (Lua 5.1) with the `vim` global.
std = "luajit"
-- `vim` is written to too (vim.g, vim.bo, vim.wo are tables of options).
globals = { "vim" }
-- stylua wraps code at 100 columns; only strings and comments it cannot break are longer.
max_line_length = false
exclude_files = { "tests/install/**" }
