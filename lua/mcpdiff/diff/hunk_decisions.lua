-- Hunk decisions in a diff view: keeping (accept) or taking back (reject) the hunks
-- a range of lines touches, as :McpDiffAccept / :McpDiffReject with a range and the
-- accept_hunk / reject_hunk keys do. They change only the proposal buffer.
local M = {}

local api = vim.api
local hunks_mod = require("mcpdiff.diff.hunks")
local inline = require("mcpdiff.diff.inline")
local state = require("mcpdiff.diff.state")

local function notify(msg, level)
  vim.notify("mcpdiff: " .. msg, level or vim.log.levels.INFO)
end

local function plural(n, word)
  return n == 1 and ("1 " .. word) or (n .. " " .. word .. "s")
end

-- decide_hunks keeps (accept) or takes back (reject) the hunks that lines
-- line1..line2 touch, of the proposal (side "b") or of the original (side "a", the
-- left window). Taking back puts the original lines into the proposal buffer, as one
-- change that u undoes; keeping marks the hunks. The view stays open either way.
function M.decide(view, action, line1, line2, side)
  if not state.is_pending(view) then
    notify(
      "this proposal is already " .. view.status .. "; its hunks can no longer change",
      vim.log.levels.WARN
    )
    return
  end
  local hunks, orig, new = inline.hunks_of(view)
  local picked =
    hunks_mod.touched(hunks, side, line1, line2, side == "a" and orig.count or new.count)
  local where = (line1 == line2 and ("line " .. line1) or ("lines " .. line1 .. "-" .. line2))
    .. (side == "a" and " of the original" or "")
  if #picked == 0 then
    notify(
      ("%s: no change of the proposal there, nothing to %s (%s)"):format(
        where,
        action == "accept" and "keep" or "take back",
        #hunks == 0 and "the proposal equals the file" or (plural(#hunks, "hunk") .. " elsewhere")
      ),
      vim.log.levels.WARN
    )
    return
  end
  if action == "accept" then
    for _, h in ipairs(picked) do
      view.kept[hunks_mod.key(h, new)] = true
    end
    inline.refresh_marks(view)
    local open = 0
    for _, h in ipairs(hunks) do
      if not view.kept[hunks_mod.key(h, new)] then
        open = open + 1
      end
    end
    notify(
      ("kept %s (%s); %s not decided yet"):format(
        plural(#picked, "hunk"),
        where,
        plural(open, "hunk")
      )
    )
    return
  end
  -- From the last hunk up, so that the line numbers of the others stay right.
  for i = #picked, 1, -1 do
    local h = picked[i]
    local lines = orig.slice(h.a_start, h.a_count)
    if new.count == 0 then
      api.nvim_buf_set_lines(view.buf, 0, -1, true, lines)
    elseif h.b_count > 0 then
      api.nvim_buf_set_lines(view.buf, h.b_start - 1, h.b_start - 1 + h.b_count, true, lines)
    else
      api.nvim_buf_set_lines(view.buf, h.b_start, h.b_start, true, lines)
    end
  end
  local left = #hunks - #picked
  if left == 0 then
    notify(
      ("took back %s (%s): the proposal now equals the file; :w accepts it unchanged, :q rejects"):format(
        plural(#picked, "hunk"),
        where
      )
    )
  else
    notify(
      ("took back %s (%s); :w accepts the %s left"):format(
        plural(#picked, "hunk"),
        where,
        plural(left, "hunk")
      )
    )
  end
end

-- selected_lines returns the visual selection's lines (leaving Visual mode), else
-- the cursor's line.
function M.selected_lines()
  local mode = api.nvim_get_mode().mode
  if mode == "v" or mode == "V" or mode == "\22" then
    local a, b = vim.fn.line("v"), vim.fn.line(".")
    vim.cmd("normal! " .. api.nvim_replace_termcodes("<Esc>", true, false, true))
    return math.min(a, b), math.max(a, b)
  end
  local line = api.nvim_win_get_cursor(0)[1]
  return line, line
end

return M
