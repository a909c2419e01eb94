package ide

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Reviewing the edit history in Neovim: the review list over a big store, the
// signs of pending edits after a store change, and a reject of one hunk typed in
// Neovim. claudecode.nvim has none of these (it forgets an edit once decided).

const noIncumbent = "— (no history)"

// luaMillis runs a Lua chunk that returns nanoseconds (or nil) and gives a duration.
func (e *editor) luaNanos(b *testing.B, code string, args ...any) time.Duration {
	b.Helper()
	var ns int64
	if err := e.v.ExecLua(code, &ns, args...); err != nil {
		b.Fatalf("lua: %v", err)
	}
	if ns <= 0 {
		b.Fatalf("lua gave no time:\n%s", code)
	}
	return time.Duration(ns)
}

// commands defines the plugin's commands (startEditor only calls setup()).
func (e *editor) commands(b *testing.B) {
	b.Helper()
	if err := e.v.ExecLua(`vim.cmd("runtime plugin/mcpdiff.lua")`, nil); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReviewListOpen times :McpDiffStatus over 10,000 entries, from the
// command to the list drawn: right after a change of the store (the bridge builds
// the rows again), and again with the store unchanged (it keeps them).
func BenchmarkReviewListOpen(b *testing.B) {
	e := startEditor(b, "vertical")
	e.commands(b)
	if _, err := testenv.WriteStore(e.ws, 100, 100); err != nil {
		b.Fatal(err)
	}
	err := e.v.ExecLua(`
local hunks = require("mcpdiff.changes")
local update = hunks._update
hunks._update = function(p)
  update(p)
  if #p.workspaces > 0 then _G.bench_changed = true end
end`, nil)
	if err != nil {
		b.Fatal(err)
	}
	const open = `
local t0 = vim.loop.hrtime()
vim.cmd("McpDiffStatus")
vim.wait(10000, function() return vim.api.nvim_buf_line_count(0) > 10000 end, 1)
local t1 = vim.loop.hrtime()
local lines = vim.api.nvim_buf_line_count(0)
vim.cmd("bwipeout")
if lines < 10000 then return nil end
return t1 - t0`
	e.luaNanos(b, open) // the bridge now watches the store
	var cold, warm []time.Duration
	for i := range 10 * b.N {
		// Any change of the store makes the bridge build the rows again.
		if err := e.v.ExecLua(`_G.bench_changed = false`, nil); err != nil {
			b.Fatal(err)
		}
		touch := filepath.Join(e.ws, ".mcp", "edit_history", "bench-touch")
		if err := os.WriteFile(touch, []byte(fmt.Sprint(i)), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := e.v.ExecLua(`vim.wait(10000, function() return _G.bench_changed end, 1)`, nil); err != nil {
			b.Fatal(err)
		}
		cold = append(cold, e.luaNanos(b, open))
		warm = append(warm, e.luaNanos(b, open))
	}
	recordDuration(":McpDiffStatus opening over 10,000 entries, after a store change", cold, noIncumbent, 100*time.Millisecond)
	recordDuration(":McpDiffStatus opening over 10,000 entries, store unchanged", warm, noIncumbent, 100*time.Millisecond)
}

// pendingFile records edits of a 10,000-line file, each changing one line, all
// pending, and returns the path and its lines.
func pendingFile(b *testing.B, ws string, edits, convs int) (string, []string) {
	b.Helper()
	root, store := testenv.CreateStore(b, ws)
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d: the quick brown fox jumps over the lazy dog\n", i+1)
	}
	rel := "big.txt"
	testenv.WriteFile(b, filepath.Join(ws, rel), strings.Join(lines, ""))
	for i := range edits {
		recordLine(b, store, root, fmt.Sprintf("conv_1_%04x", i*convs/edits), rel, lines, i*(len(lines)/edits)+5)
	}
	return filepath.Join(ws, rel), lines
}

// recordLine records and writes an edit of line n (0-based) of rel.
func recordLine(b *testing.B, store *history.Store, root *workspace.Root, conv, rel string, lines []string, n int) {
	b.Helper()
	before := []byte(strings.Join(lines, ""))
	lines[n] = fmt.Sprintf("line %d: EDITED by the agent at %d\n", n+1, time.Now().UnixNano())
	after := []byte(strings.Join(lines, ""))
	testenv.RecordEdit(b, store, root, conv, rel, before, after)
}

// waitSigns waits until the buffer of path shows n signs of pending edits.
func (e *editor) waitSigns(b *testing.B, path string, n int) {
	b.Helper()
	var got int
	err := e.v.ExecLua(`
local path, n = ...
vim.wait(20000, function()
  local placed = vim.fn.sign_getplaced(vim.fn.bufnr(path), { group = "mcpdiff_pending" })[1].signs
  return #placed == n
end, 1)
return #vim.fn.sign_getplaced(vim.fn.bufnr(path), { group = "mcpdiff_pending" })[1].signs`, &got, path, n)
	if err != nil || got != n {
		b.Fatalf("%d signs, want %d (%v)", got, n, err)
	}
}

// BenchmarkSignsAfterStoreChange times, in Neovim, what a store change costs it: a
// new edit of an open 10,000-line file with 100 pending edits is recorded by
// another process; the bridge sees it and sends the hunks; Neovim reloads the
// buffer and redraws the signs.
func BenchmarkSignsAfterStoreChange(b *testing.B) {
	e := startEditor(b, "vertical")
	path, lines := pendingFile(b, e.ws, 100, 10)
	err := e.v.ExecLua(`
local path = ...
vim.cmd("edit " .. vim.fn.fnameescape(path))
local hunks = require("mcpdiff.changes")
local update, render = hunks._update, hunks.render
_G.bench_updates, _G.bench_renders = {}, {}
local rendering = 0
hunks._update = function(p)
  rendering = 0
  local t0 = vim.loop.hrtime()
  update(p)
  if #p.reload > 0 then -- the update of the store change, not the one after the reload
    table.insert(_G.bench_updates, vim.loop.hrtime() - t0)
    table.insert(_G.bench_renders, rendering)
  end
end
hunks.render = function(buf)
  local t0 = vim.loop.hrtime()
  render(buf)
  rendering = rendering + vim.loop.hrtime() - t0
end`, nil, path)
	if err != nil {
		b.Fatal(err)
	}
	e.waitSigns(b, path, 100)
	root, store := testenv.CreateStore(b, e.ws) // the history pendingFile made
	var total, signs, latency []time.Duration
	for i := range 10 * b.N {
		var before int
		if err := e.v.ExecLua(`return #_G.bench_updates`, &before); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		recordLine(b, store, root, "conv_1_ffff", "big.txt", lines, 50+i*100)
		e.waitSigns(b, path, 101+i)
		latency = append(latency, time.Since(start))
		var n int
		if err := e.v.ExecLua(`local n = ...; vim.wait(10000, function() return #_G.bench_updates > n end, 1) return #_G.bench_updates`, &n, before); err != nil || n <= before {
			b.Fatalf("no update with a reload after change %d (%v)", i+1, err)
		}
		var times [2]int64
		err := e.v.ExecLua(`return { _G.bench_updates[#_G.bench_updates], _G.bench_renders[#_G.bench_renders] }`, &times)
		if err != nil {
			b.Fatal(err)
		}
		total = append(total, time.Duration(times[0]))
		signs = append(signs, time.Duration(times[1]))
	}
	recordDuration("signs redrawn after a store change, 10,000-line file, 100+ pending edits (Neovim side)", signs, noIncumbent, 20*time.Millisecond)
	recordDuration("same, with the reload of the rewritten buffer (Neovim side)", total, noIncumbent, 0)
	recordDuration("an edit recorded by another process → its sign shown (wall clock)", latency, noIncumbent, time.Second)
}

// BenchmarkRejectOneHunk times :{line}McpDiffReject on one hunk of a 10,000-line
// file with 1,000 pending edits, from the command to the file rebuilt, the buffer
// reloaded and the message shown.
func BenchmarkRejectOneHunk(b *testing.B) {
	e := startEditor(b, "vertical")
	e.commands(b)
	path, _ := pendingFile(b, e.ws, 1000, 10)
	err := e.v.ExecLua(`
local path = ...
vim.cmd("edit " .. vim.fn.fnameescape(path))
local notify = vim.notify
vim.notify = function(msg, level)
  if msg:find("rejected") then _G.bench_rejected = vim.loop.hrtime() end
  return notify(msg, level)
end`, nil, path)
	if err != nil {
		b.Fatal(err)
	}
	e.waitSigns(b, path, 1000)
	var samples []time.Duration
	for i := range 10 * b.N {
		line := 6 + i*10*(10000/1000)
		samples = append(samples, e.luaNanos(b, `
local line = ...
_G.bench_rejected = nil
local t0 = vim.loop.hrtime()
vim.cmd(line .. "McpDiffReject")
vim.wait(20000, function() return _G.bench_rejected ~= nil end, 1)
if not _G.bench_rejected or vim.api.nvim_buf_get_lines(0, line - 1, line, false)[1]:find("EDITED") then return nil end
return _G.bench_rejected - t0`, line))
	}
	recordDuration("one-hunk :McpDiffReject, 10,000-line file, 1,000 pending edits (end to end)", samples, noIncumbent, 100*time.Millisecond)
}
