-- The side-by-side layout: the original file in the target window and the proposal
-- in a split beside (or below) it, both in diff mode.
local M = {}

local api = vim.api
local hint = require("mcpdiff.diff.hint")
local state = require("mcpdiff.diff.state")
local window = require("mcpdiff.diff.window")

local cfg = state.cfg

-- show_original puts the original file (or a NEW FILE placeholder) in window w.
local function show_original(view, w)
  api.nvim_set_current_win(w)
  if view.new_file then
    local b = api.nvim_create_buf(false, true)
    pcall(api.nvim_buf_set_name, b, view.path .. " (NEW FILE)")
    vim.bo[b].modifiable = false
    vim.bo[b].readonly = true
    view.placeholder = b
    api.nvim_win_set_buf(w, b)
    return b
  end
  local b = state.file_buffer(view.path)
  view.left_buf_existed = b ~= nil
  if b and api.nvim_win_get_buf(w) == b then
    return b
  end
  -- An existing swap file must not stop us with a prompt: show the file read-only.
  local swap = api.nvim_create_autocmd("SwapExists", {
    group = view.augroup,
    callback = function()
      vim.v.swapchoice = "o"
    end,
  })
  local ok, err
  if b then
    ok, err = pcall(vim.cmd, "keepalt buffer " .. b)
  else
    ok, err = pcall(require("mcpdiff.window").show_file, view.path, "keepalt ")
  end
  pcall(api.nvim_del_autocmd, swap)
  if not ok then
    error(("cannot open %s: %s"):format(view.path, err), 0)
  end
  return api.nvim_get_current_buf()
end

-- Folding the unchanged lines costs Neovim time in proportion to lines × changes
-- (10 ms for 10,000 lines with 100 changes, 0.4 s for 100,000 lines with 1,000):
-- larger files are not folded.
local FOLD_MAX_LINES = 5000

-- goto_first_change puts the proposal's cursor on its first changed line.
local function goto_first_change(view)
  api.nvim_win_call(view.prop_win, function()
    api.nvim_win_set_cursor(0, { 1, 0 })
    if vim.fn.diff_hlID(1, 1) == 0 and vim.fn.diff_filler(1) == 0 then
      vim.cmd("silent! normal! ]c")
    end
  end)
end

-- show_side_by_side draws the original in the target window and the proposal in a
-- split beside (or below) it, both in diff mode.
---@param req mcpdiff.DiffRequest
function M.show(view, target, req)
  view.left_buf = show_original(view, target)
  view.left_win = target
  window.setup_proposal(view, req)
  vim.cmd(cfg().diff.layout == "horizontal" and "belowright split" or "belowright vsplit")
  view.prop_win = api.nvim_get_current_win()
  api.nvim_win_set_buf(view.prop_win, view.buf)
  if not vim.o.scrollopt:find("hor", 1, true) then
    vim.opt.scrollopt:append("hor") -- as :diffthis does
  end
  local fold = api.nvim_buf_line_count(view.buf) <= FOLD_MAX_LINES
  view.left_options = window.enter_diff_mode(view.left_win, fold)
  window.enter_diff_mode(view.prop_win, fold)
  goto_first_change(view)
  if hint.has_winbar then
    vim.wo[view.left_win].winbar = " "
      .. hint.escape(vim.fn.fnamemodify(view.path, ":~:."))
      .. " (original)"
  end
end

return M
