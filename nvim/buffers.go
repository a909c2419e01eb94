package nvim

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	nvimrpc "github.com/neovim/go-client/nvim"
)

// The Lua below is self-contained: Buffers talks to any Neovim (`mcpdiff serve`
// started from a Neovim terminal), with or without the plugin loaded. The plugin has
// the same reload in lua/mcpdiff/buffers.lua.

// bufferOfLua defines buffers_of(paths): the loaded normal buffers of those files,
// comparing resolved paths (symlinks).
const bufferOfLua = `
local uv = vim.uv or vim.loop
local function real(p) return (uv.fs_realpath(p)) or p end
local function buffers_of(paths)
  local wanted = {}
  for _, p in ipairs(paths) do wanted[p] = true; wanted[real(p)] = true end
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name ~= "" and vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == ""
        and (wanted[name] or wanted[real(name)]) then
      table.insert(out, b)
    end
  end
  return out
end
`

const modifiedLua = bufferOfLua + `
for _, b in ipairs(buffers_of({...})) do
  if vim.bo[b].modified then return true end
end
return false
`

// reloadLua re-reads unmodified buffers with :edit!, keeping every window's view.
// :checktime is not enough: a rewrite with the same size and mtime looks unchanged.
const reloadLua = bufferOfLua + `
local n = 0
for _, b in ipairs(buffers_of(...)) do
  if not vim.bo[b].modified and uv.fs_stat(vim.api.nvim_buf_get_name(b)) then
    local views = {}
    for _, w in ipairs(vim.fn.win_findbuf(b)) do
      views[w] = vim.api.nvim_win_call(w, vim.fn.winsaveview)
    end
    local ok = pcall(vim.api.nvim_buf_call, b, function() vim.cmd("silent keepjumps edit!") end)
    for w, view in pairs(views) do
      if vim.api.nvim_win_is_valid(w) then
        vim.api.nvim_win_call(w, function() vim.fn.winrestview(view) end)
      end
    end
    if ok then n = n + 1 end
  end
end
return n
`

func reloadBuffers(ctx context.Context, v *nvimrpc.Nvim, paths []string) (int, error) {
	var n int
	err := execLua(ctx, v, "reload buffers", reloadLua, &n, paths)
	return n, err
}

// Buffers answers the MCP file server's questions about a running Neovim's buffers.
// Every call has a deadline (Timeout), so a Neovim that went away or is stuck in a
// prompt gives an error, never a hang.
type Buffers struct {
	v *nvimrpc.Nvim
	// Timeout bounds each call (default 2 s).
	Timeout time.Duration
}

// Dial connects to the Neovim listening at addr ($NVIM: a socket path or host:port).
func Dial(addr string) (*Buffers, error) {
	if addr == "" {
		return nil, fmt.Errorf("nvim: no address to dial (set $NVIM or pass --nvim ADDR)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := nvimrpc.Dial(addr, nvimrpc.DialContext(ctx), nvimrpc.DialLogf(func(string, ...any) {}))
	if err != nil {
		return nil, fmt.Errorf("nvim: connect to Neovim at %s: %w", addr, err)
	}
	return &Buffers{v: v, Timeout: 2 * time.Second}, nil
}

// Close ends the connection.
func (b *Buffers) Close() error { return b.v.Close() }

func (b *Buffers) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.Timeout)
}

// Modified reports whether a loaded buffer of path (absolute) has unsaved changes.
func (b *Buffers) Modified(path string) (bool, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return false, fmt.Errorf("nvim: %w", err)
	}
	ctx, cancel := b.context()
	defer cancel()
	var modified bool
	if err := execLua(ctx, b.v, "check for unsaved changes", modifiedLua, &modified, path); err != nil {
		return false, err
	}
	return modified, nil
}

// Reload re-reads the buffers of these files that have no unsaved changes, keeping
// cursor and view. Files without a buffer are skipped.
func (b *Buffers) Reload(paths ...string) error {
	abs := make([]string, 0, len(paths))
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("nvim: %w", err)
		}
		abs = append(abs, a)
	}
	ctx, cancel := b.context()
	defer cancel()
	_, err := reloadBuffers(ctx, b.v, abs)
	return err
}
