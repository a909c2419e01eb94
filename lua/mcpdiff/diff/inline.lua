-- The inline layout (the proposal alone in the user's window, removed lines drawn
-- as virtual lines) and the hunk marks of both layouts: computing the hunks,
-- redrawing the marks as the proposal changes, and moving between hunks.
local M = {}

local api = vim.api
local hunks_mod = require("mcpdiff.diff.hunks")
local marks = require("mcpdiff.diff.marks")
local state = require("mcpdiff.diff.state")
local window = require("mcpdiff.diff.window")

local valid_buf = state.valid_buf

-- hunks_of returns the proposal's hunks against the original, and both sides
-- (diff.hunks.side). new_text: the proposal's text when the caller has it.
function M.hunks_of(view, new_text)
  local orig = view.orig -- inline: read once
  if not orig then -- side by side: the original is the left window's buffer
    orig = view.new_file and hunks_mod.none or hunks_mod.side(view.left_buf)
  end
  local new = hunks_mod.side(view.buf, new_text)
  return hunks_mod.compute(orig, new), orig, new
end

-- refresh_marks redraws the hunk marks; it returns the hunks and the proposal's side
-- when it computed them.
function M.refresh_marks(view, new_text)
  if not valid_buf(view.buf) then
    return
  end
  if not view.inline and next(view.kept) == nil then
    marks.clear(view.buf) -- side by side, diff mode draws the rest
    return
  end
  local hunks, orig, new = M.hunks_of(view, new_text)
  marks.draw(view.buf, view, hunks, orig, new)
  return hunks, new
end

-- Above this many lines, reading and diffing the proposal takes tens of milliseconds:
-- the marks are redrawn once typing pauses rather than after every change (in the
-- meantime they move with the text).
local REFRESH_DEBOUNCE_LINES = 20000
local REFRESH_DEBOUNCE_MS = 150

function M.schedule_refresh(view)
  if not view.inline and next(view.kept) == nil then
    return -- side by side without kept hunks: no marks to follow the text
  end
  if api.nvim_buf_line_count(view.buf) > REFRESH_DEBOUNCE_LINES then
    if not view.refresh_timer then
      view.refresh_timer = vim.loop.new_timer()
    end
    view.refresh_timer:start(REFRESH_DEBOUNCE_MS, 0, function()
      vim.schedule(view.refresh_now)
    end)
    return
  end
  view.refresh_soon()
end

-- show_hunk puts the cursor of window w on line, the first of hunk h in the inline
-- view. Removed lines drawn above the window's top line show only when the window
-- scrolls them in (topfill, as for diff filler lines).
local function show_hunk(w, h, line)
  api.nvim_win_set_cursor(w, { line, 0 })
  local above = h.a_count > 0 and (h.b_count > 0 or h.b_start + 1 == line)
  api.nvim_win_call(w, function()
    if above and vim.fn.line("w0") == line then
      vim.fn.winrestview({ topline = line, topfill = h.a_count })
    end
  end)
end

-- jump moves the cursor to the next (dir 1) or previous (dir -1) hunk of the inline
-- view, count times, as ]c and [c do in diff mode.
function M.jump(view, dir)
  local hunks, _, new = M.hunks_of(view)
  local at = api.nvim_win_get_cursor(0)[1]
  local target
  for _ = 1, vim.v.count1 do
    local found
    for i = dir > 0 and 1 or #hunks, dir > 0 and #hunks or 1, dir do
      local line = hunks_mod.span(hunks[i], "b", new.count)
      if (dir > 0 and line > at) or (dir < 0 and line < at) then
        found = i
        break
      end
    end
    if not found then
      break
    end
    target = found
    at = hunks_mod.span(hunks[found], "b", new.count)
  end
  if target then
    show_hunk(0, hunks[target], at)
  end
end

-- show_inline puts the proposal in the target window itself, with its hunks drawn
-- as marks. texts: {orig, prop}, both sides' texts as diff.hunks.text makes them.
---@param req mcpdiff.DiffRequest
---@param texts mcpdiff.DiffTexts|{}
function M.show(view, target, req, texts)
  view.orig = texts.orig and hunks_mod.text_side(texts.orig) or hunks_mod.none
  window.setup_proposal(view, req)
  api.nvim_set_current_win(target)
  api.nvim_win_set_buf(target, view.buf)
  view.prop_win = target
  local hunks, new = M.refresh_marks(view, texts.prop)
  if hunks[1] then
    show_hunk(target, hunks[1], hunks_mod.span(hunks[1], "b", new.count))
  end
end

return M
