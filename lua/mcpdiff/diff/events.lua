-- What the user does in a diff view: the autocmds that answer the proposal (:w
-- accepts, closing it rejects), follow its edits and fit the hint, and the view's
-- keys. The answers themselves are the lifecycle's (diff/init.lua).
local M = {}

local api = vim.api
local decisions = require("mcpdiff.diff.hunk_decisions")
local hint = require("mcpdiff.diff.hint")
local inline_mod = require("mcpdiff.diff.inline")
local state = require("mcpdiff.diff.state")
local window = require("mcpdiff.diff.window")

local views, cfg = state.views, state.cfg

-- check_closed rejects the diff once no window shows its proposal any more
-- (:q, :close, <C-w>c, :tabclose; claudecode.nvim #238).
local function check_closed(view, reject_view)
  if #vim.fn.win_findbuf(view.buf) == 0 then
    reject_view(view)
  end
end

local function set_autocmds(view, accept_view, reject_view)
  local g = view.augroup
  -- :w of the proposal accepts it; unloading its buffer (:q, :bwipeout) rejects it.
  for event, decide in pairs({ BufWriteCmd = accept_view, BufUnload = reject_view }) do
    api.nvim_create_autocmd(event, {
      group = g,
      buffer = view.buf,
      callback = function()
        decide(view)
      end,
    })
  end
  api.nvim_create_autocmd({ "WinClosed", "TabClosed" }, {
    group = g,
    callback = function(args)
      -- :q in the view: the cursor goes to the file afterwards (teardown), not to
      -- whichever window Neovim picks next (often the agent's terminal).
      local cur = api.nvim_get_current_win()
      if
        args.event == "WinClosed"
        and tonumber(args.match) == cur
        and (cur == view.prop_win or cur == view.left_win)
      then
        view.closed_from_view = true
      end
      vim.schedule(function()
        check_closed(view, reject_view)
      end)
    end,
  })
  -- The hint is fitted to the window's width: fit it again when that changes.
  api.nvim_create_autocmd(
    vim.fn.exists("##WinResized") == 1 and { "WinResized", "VimResized" } or { "VimResized" },
    {
      group = g,
      callback = function()
        if views[view.buf] == view then
          hint.show(view)
        end
      end,
    }
  )
  if view.inline then
    api.nvim_create_autocmd("QuitPre", {
      group = g,
      callback = function()
        window.give_back(view, reject_view)
      end,
    })
  end
  -- Redraw the hunk marks after every change of the proposal, once per loop turn.
  api.nvim_buf_attach(view.buf, false, {
    on_lines = function()
      if views[view.buf] ~= view then
        return true -- detach
      end
      inline_mod.schedule_refresh(view)
    end,
  })
end

local function set_keymaps(view, accept_view, reject_view)
  local km = cfg().keymaps
  local function map(modes, lhs, fn, desc)
    if lhs then
      vim.keymap.set(
        modes,
        lhs,
        fn,
        { buffer = view.buf, nowait = true, desc = "mcpdiff: " .. desc }
      )
    end
  end
  map("n", km.accept, function()
    accept_view(view)
  end, "accept the proposal")
  map("n", km.reject, function()
    reject_view(view)
  end, "reject the proposal")
  map({ "n", "x" }, km.accept_hunk, function()
    local line1, line2 = decisions.selected_lines()
    decisions.decide(view, "accept", line1, line2, "b")
  end, "keep the hunk under the cursor (or the selection's)")
  map({ "n", "x" }, km.reject_hunk, function()
    local line1, line2 = decisions.selected_lines()
    decisions.decide(view, "reject", line1, line2, "b")
  end, "take the original lines back for the hunk under the cursor (or the selection's)")
  if view.inline then
    map({ "n", "x", "o" }, km.next_hunk, function()
      inline_mod.jump(view, 1)
    end, "next hunk")
    map({ "n", "x", "o" }, km.prev_hunk, function()
      inline_mod.jump(view, -1)
    end, "previous hunk")
  end
end

-- attach sets up the autocmds and keys of a view just drawn; accept_view and
-- reject_view answer it.
function M.attach(view, accept_view, reject_view)
  set_autocmds(view, accept_view, reject_view)
  set_keymaps(view, accept_view, reject_view)
end

return M
