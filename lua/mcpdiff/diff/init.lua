-- The openDiff view: the real file on the left, the agent's proposal on the right
-- (diff mode), or in the inline layout the proposal alone in the user's window, with
-- the removed lines drawn as virtual lines.
--
-- The Go side drives it: prepare() checks the file and makes the proposal buffer, Go
-- fills it with nvim_buf_set_lines, show() draws the view (in the inline layout with
-- the texts to diff, which Go sends along). The user's answer goes back with
-- rpcnotify (mcpdiff_accept / mcpdiff_reject, naming the view by its proposal
-- buffer); close() tears the view down when the IDE server is done with the diff
-- (answered, or replaced by a newer diff of its tab name: the server's rule). A
-- view is known by its proposal buffer only; its tab name is what it shows.
-- Every view owns one augroup, its buffers and its windows, and teardown removes all
-- of them. Hunk decisions (a range of :McpDiffAccept / :McpDiffReject) change only
-- the proposal buffer.
--
-- This file is the view's life (prepare, show, the answer, close). The rest of
-- diff/: window.lua where the view goes and what it gives back, side_by_side.lua
-- and inline.lua the two layouts (inline.lua also the hunk marks of both),
-- events.lua the view's autocmds and keys, hint.lua the key hint,
-- hunk_decisions.lua the answers to single hunks, hunks.lua and marks.lua the hunks
-- and how they are drawn, state.lua the open views.
local M = {}

local api = vim.api
local bridge = require("mcpdiff.bridge")
local decisions = require("mcpdiff.diff.hunk_decisions")
local events = require("mcpdiff.diff.events")
local hint = require("mcpdiff.diff.hint")
local hunks_mod = require("mcpdiff.diff.hunks")
local inline_mod = require("mcpdiff.diff.inline")
local once = require("mcpdiff.once")
local side_by_side = require("mcpdiff.diff.side_by_side")
local state = require("mcpdiff.diff.state")
local window = require("mcpdiff.diff.window")

local views, staged = state.views, state.staged
local cfg, is_pending = state.cfg, state.is_pending
local next_id = 0

local function fire(event, data)
  vim.g.mcpdiff_event = data
  local ok =
    pcall(api.nvim_exec_autocmds, "User", { pattern = event, modeline = false, data = data })
  if not ok then -- Neovim 0.7: no data field
    pcall(api.nvim_exec_autocmds, "User", { pattern = event, modeline = false })
  end
end

M.file_buffer = state.file_buffer

local accept_view, reject_view

-- An openDiff as the Go side sends it to prepare (Show in nvim/editor.go).
---@class mcpdiff.DiffRequest
---@field tab string the tab name the client gave: the diff's key
---@field path string the file's absolute path
---@field new_file boolean the file does not exist yet
---@field dos boolean the proposal's lines end in CRLF
---@field bomb boolean the proposal starts with a byte order mark
---@field eol boolean the proposal ends with a line ending

-- Both sides of an inline diff, as diff.hunks.text makes them (the Go side has them
-- at hand; Lua would take tens of milliseconds to build them).
---@class mcpdiff.DiffTexts
---@field orig string the original file's text
---@field prop string the proposal's text

-- prepare starts an openDiff: it refuses a file whose buffer has unsaved changes and
-- creates the (empty) proposal buffer. req: {tab, path, new_file, dos, bomb, eol}.
-- Returns {buf = n, texts = true when show() wants the texts} or {error = "dirty"}.
---@param req mcpdiff.DiffRequest
---@return {buf: integer, texts: true?}|{error: "dirty"}
function M.prepare(req)
  if not req.new_file then
    local b = state.file_buffer(req.path)
    if b and vim.bo[b].modified then
      return { error = "dirty" }
    end
  end
  local inline = cfg().diff.layout == "inline"
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].undolevels = -1 -- the initial text is not an undo step
  staged[buf] = { buf = buf, inline = inline, req = req }
  return { buf = buf, texts = inline or nil }
end

-- abort drops a prepared proposal buffer that was never shown.
local function abort(buf)
  staged[buf] = nil
  state.wipe(buf)
end

-- show draws the diff view of the prepared proposal buffer buf, its lines already
-- set. texts: in the inline layout, {orig = text, prop = text} as diff.hunks.text
-- makes them (Go has them at hand; Lua would take tens of milliseconds to build them).
---@param buf integer
---@param texts? mcpdiff.DiffTexts
function M.show(buf, texts)
  local s = staged[buf]
  if not s then
    error("mcpdiff: no prepared proposal in buffer " .. tostring(buf), 0)
  end
  staged[buf] = nil
  next_id = next_id + 1
  local req = s.req
  local view = {
    id = next_id,
    tab = req.tab,
    path = req.path,
    new_file = req.new_file,
    inline = s.inline,
    buf = s.buf,
    -- Sent back with an accept: the Go side keeps no copy of it.
    format = { dos = req.dos, bomb = req.bomb, eol = req.eol },
    status = "pending",
    kept = {}, -- hunk keys (diff.hunks.key) the user kept
    prev_win = api.nvim_get_current_win(),
    prev_tab = api.nvim_get_current_tabpage(),
  }
  view.refresh_now = function()
    if views[view.buf] == view then
      inline_mod.refresh_marks(view)
    end
  end
  view.refresh_soon = once(view.refresh_now)
  view.augroup = api.nvim_create_augroup("mcpdiff_view_" .. view.id, { clear = true })
  views[view.buf] = view
  local ok, err = pcall(function()
    local target = window.pick_target(view)
    view.target_win = target
    view.target_prev_buf = api.nvim_win_get_buf(target)
    view.target_prev_view = api.nvim_win_call(target, vim.fn.winsaveview)
    -- The window's own value ("" = the global one), to give it back unchanged.
    view.target_bar = api.nvim_win_call(target, function()
      return api.nvim_eval("&l:" .. hint.bar)
    end)
    if view.inline then
      inline_mod.show(view, target, req, texts or {})
    else
      side_by_side.show(view, target, req)
    end
    hint.show(view)
    events.attach(view, accept_view, reject_view)
    window.restore_focus(view, cfg().keep_focus)
    view.tick = api.nvim_buf_get_changedtick(view.buf)
    require("mcpdiff.terminal").fit()
  end)
  if not ok then
    M.close(view.buf, "failed")
    error(err, 0)
  end
  fire("McpDiffOpened", {
    tab_name = view.tab,
    file_path = view.path,
    new_file = view.new_file,
    buf = view.buf,
    win = view.prop_win,
  })
  return true
end

-- close_reasons is every `reason` of User McpDiffClosed, the one list of them: the
-- Go side passes "accepted", "closed" and "failed" (closeReason in nvim/editor.go),
-- and a test checks that the help describes each one.
M.close_reasons = {
  accepted = "the proposal was saved and Claude Code got FILE_SAVED",
  rejected = "the view was closed without saving (DIFF_REJECTED)",
  closed = "Claude Code closed the diff itself (closeAllDiffTabs, or after an answer)",
  replaced = "a new openDiff for the same tab name replaced it",
  failed = "drawing it failed, or openDiff was cancelled while it was being drawn",
  ["bridge stopped"] = "the bridge stopped (:McpDiffStop, Neovim exits, or it died)",
}

-- teardown removes everything a view created and fires User McpDiffClosed.
local function teardown(view, reason)
  assert(M.close_reasons[reason], "unknown close reason " .. tostring(reason))
  views[view.buf] = nil
  pcall(api.nvim_del_augroup_by_id, view.augroup)
  if view.refresh_timer then
    view.refresh_timer:stop()
    view.refresh_timer:close()
  end
  window.teardown(view)
  require("mcpdiff.terminal").fit()
  fire("McpDiffClosed", { tab_name = view.tab, file_path = view.path, reason = reason })
end

-- accept_view answers FILE_SAVED: the Go side sends the proposal's exact bytes, or
-- rebuilds the text from the buffer (in the proposal's format) when the user changed
-- it (an empty buffer, with not even one empty line, is the empty text).
function accept_view(view)
  if not is_pending(view) then
    return
  end
  view.status = "accepted"
  local changed = api.nvim_buf_get_changedtick(view.buf) ~= view.tick
  local empty = changed and hunks_mod.is_empty(view.buf)
  vim.bo[view.buf].modified = false
  bridge.notify_go("mcpdiff_accept", view.buf, changed, empty, view.format)
  hint.show(view)
end

-- reject_view answers DIFF_REJECTED and closes the view.
function reject_view(view)
  if not is_pending(view) then
    return
  end
  view.status = "rejected"
  bridge.notify_go("mcpdiff_reject", view.buf)
  -- Not inside the BufUnload/WinClosed that got us here.
  vim.schedule(function()
    if views[view.buf] == view then
      teardown(view, "rejected")
    end
  end)
end

-- side_of_current tells which side of view the cursor is in: "a" in the original's
-- window of a side-by-side view, else "b" (the proposal).
local function side_of_current(view)
  if api.nvim_get_current_win() == view.left_win and api.nvim_get_current_buf() ~= view.buf then
    return "a"
  end
  return "b"
end

-- view_of is the view which names: its proposal buffer, or a tab name (the view of
-- that name still waiting for the user, else any view of it).
local function view_of(which)
  if type(which) == "number" then
    return views[which]
  end
  local found
  for _, view in pairs(views) do
    if view.tab == which and (not found or is_pending(view)) then
      found = view
    end
  end
  return found
end

-- answer implements :McpDiffAccept and :McpDiffReject in a diff view (action
-- "accept" or "reject"): it decides the proposal which names (its proposal buffer,
-- or its tab name), or with range {line1, line2} the hunks those lines touch
-- (accepting keeps them, rejecting takes their original lines back).
function M.answer(action, which, range)
  local view = view_of(which)
  if not view then
    return
  end
  if range then
    decisions.decide(view, action, range[1], range[2], side_of_current(view))
  elseif action == "accept" then
    accept_view(view)
  else
    reject_view(view)
  end
end

-- close tears the view of the proposal buffer buf down without answering (the IDE
-- server already did), or drops it if it was prepared and never shown.
---@param buf integer
---@param reason? string one of close_reasons
function M.close(buf, reason)
  if staged[buf] then
    abort(buf)
  end
  local view = views[buf]
  if not view then
    return false
  end
  teardown(view, reason or "closed")
  return true
end

-- close_all tears down every view (the bridge stopped, Neovim exits).
function M.close_all(reason)
  for buf in pairs(staged) do
    abort(buf)
  end
  for _, view in pairs(vim.tbl_values(views)) do
    teardown(view, reason or "closed")
  end
end

-- current returns the proposal buffer of the diff view the cursor is in, or nil.
function M.current()
  local buf = api.nvim_get_current_buf()
  if views[buf] then
    return buf
  end
  local win = api.nvim_get_current_win()
  for b, view in pairs(views) do
    if view.left_win == win then
      return b
    end
  end
  return nil
end

-- list returns {tab, path, status} of every open view.
function M.list()
  local out = {}
  for _, view in pairs(views) do
    table.insert(out, { tab = view.tab, path = view.path, status = view.status })
  end
  table.sort(out, function(a, b)
    return a.tab < b.tab
  end)
  return out
end

return M
