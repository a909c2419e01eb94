-- Where a diff view goes and what it leaves behind: the window for the original
-- (or the user's own window, inline), the proposal buffer's settings, diff mode's
-- window options, :q in an inline view, and giving the windows back when the view
-- closes.
local M = {}

local api = vim.api
local hint = require("mcpdiff.diff.hint")
local state = require("mcpdiff.diff.state")

local cfg, valid_win, valid_buf, wipe = state.cfg, state.valid_win, state.valid_buf, state.wipe

local window = require("mcpdiff.window")
local file_buffer = state.file_buffer

local function tab_has_diff(tab)
  for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
    if vim.wo[w].diff then
      return true
    end
  end
  return false
end

-- pick_target chooses (or creates) the window for the original file and records what
-- it created in view.
function M.pick_target(view)
  local tab = api.nvim_get_current_tabpage()
  -- Diff mode is per tab: a side-by-side view needs a tab without other diffs.
  if cfg().diff.open_in_new_tab or (not view.inline and tab_has_diff(tab)) then
    vim.cmd("tabnew")
    view.created_tab = api.nvim_get_current_tabpage()
    view.scratch_buf = api.nvim_get_current_buf() -- the empty buffer of :tabnew
    return api.nvim_get_current_win()
  end
  local file_buf = not view.new_file and file_buffer(view.path) or nil
  local w = window.find(file_buf)
  if w then
    return w
  end
  -- Only terminals, sidebars or floats here (claudecode.nvim #231): make room.
  w = window.make_room()
  view.created_wins = { w }
  view.scratch_buf = api.nvim_get_current_buf()
  return w
end

-- Window options of diff mode, saved before and restored after a view.
local DIFF_WIN_OPTIONS =
  { "diff", "scrollbind", "cursorbind", "wrap", "foldmethod", "foldenable", "foldlevel" }

-- enter_diff_mode does what :diffthis does, but chooses whether to fold; it returns
-- the options it changed, for leave_diff_mode.
function M.enter_diff_mode(w, fold)
  local saved = {}
  for _, name in ipairs(DIFF_WIN_OPTIONS) do
    saved[name] = vim.wo[w][name]
  end
  vim.wo[w].scrollbind = true
  vim.wo[w].cursorbind = true
  vim.wo[w].wrap = false
  if not fold then
    vim.wo[w].foldmethod = "manual"
    vim.wo[w].foldenable = false
  end
  vim.wo[w].diff = true
  if fold then -- after 'diff', or the folds are computed twice
    vim.wo[w].foldlevel = 0
    vim.wo[w].foldenable = true
    vim.wo[w].foldmethod = "diff"
  end
  return saved
end

local function leave_diff_mode(w, saved)
  vim.wo[w].diff = false
  for name, value in pairs(saved) do
    vim.wo[w][name] = value
  end
end

-- created_window tells whether the view made window w (a split or a tab of its own).
local function created_window(view, w)
  if
    view.created_tab
    and api.nvim_tabpage_is_valid(view.created_tab)
    and api.nvim_win_get_tabpage(w) == view.created_tab
  then
    return true
  end
  return vim.tbl_contains(view.created_wins or {}, w)
end

-- restore_target shows in window w what the user's window showed before the view.
local function restore_target(view, w)
  local b = view.target_prev_buf
  if not valid_buf(b) or b == view.buf then
    b = (not view.new_file and file_buffer(view.path)) or api.nvim_create_buf(true, false)
  end
  api.nvim_win_set_buf(w, b)
  if b == view.target_prev_buf then
    api.nvim_win_call(w, function()
      vim.fn.winrestview(view.target_prev_view)
    end)
  end
  vim.wo[w][hint.bar] = view.target_bar or ""
end

-- Ex commands that quit Neovim as a whole.
local QUIT_ALL = {}
for _, name in ipairs({
  "qa",
  "qal",
  "qall",
  "quita",
  "quital",
  "quitall",
  "wqa",
  "wqal",
  "wqall",
  "xa",
  "xal",
  "xall",
}) do
  QUIT_ALL[name] = true
end

-- quitting_all tells whether the command being run is a typed :qa (or :wqa, :xa): the
-- newest entry of the command-line history.
local function quitting_all()
  local name = vim.fn.histget(":", -1):match("^[%s:]*(%a+)!?%s*$")
  return name ~= nil and QUIT_ALL[name] == true
end

-- give_back_window handles :q (:wq, :x, ZZ, ZQ) in an inline view shown in the user's
-- own window. Going ahead, :q would close that window, or quit Neovim when it is the
-- last one. QuitPre cannot cancel a :q, but :q gives up when its window was closed:
-- so a new window takes the old one's place, showing what it showed before, and the
-- proposal (if still pending) is rejected.
function M.give_back(view, reject_view)
  local w = api.nvim_get_current_win()
  -- Other windows (a split of the proposal, one the view made) just close.
  if
    w ~= view.target_win
    or api.nvim_win_get_buf(w) ~= view.buf
    or created_window(view, w)
    or quitting_all()
  then
    return
  end
  -- Closing a window gives its room to the next window, or the previous one with
  -- 'splitbelow'/'splitright': split so that this is the new one. The sizes of all
  -- windows are put back after ('equalalways' may change them on split and close).
  local sizes = vim.fn.winrestcmd()
  if
    pcall(
      vim.cmd,
      (vim.o.splitbelow or vim.o.splitright) and "aboveleft split" or "belowright split"
    )
  then
    local new = api.nvim_get_current_win()
    restore_target(view, new)
    if view.target_win == w then
      view.target_win = new
    end
    api.nvim_win_close(w, true)
    api.nvim_set_current_win(new)
    vim.cmd(sizes)
  end
  -- Without room to split, :q closes the window, which rejects too.
  reject_view(view)
end

local function detect_filetype(view)
  local b = view.left_buf or (not view.new_file and file_buffer(view.path)) or nil
  if b and vim.bo[b].filetype ~= "" and not view.new_file then
    return vim.bo[b].filetype
  end
  return window.filetype_of(view.path)
end

-- setup_proposal names and configures the proposal buffer (its lines are set).
---@param req mcpdiff.DiffRequest
function M.setup_proposal(view, req)
  local b = view.buf
  local suffix = view.new_file and " (NEW FILE - proposed)" or " (proposed)"
  local name = view.tab .. suffix
  local clash = vim.fn.bufnr("^" .. vim.fn.escape(name, "\\/.*$^~[]") .. "$")
  if clash ~= -1 and clash ~= b then
    name = name .. " " .. view.id
  end
  pcall(api.nvim_buf_set_name, b, name)
  vim.bo[b].buftype = "acwrite"
  vim.bo[b].bufhidden = "hide"
  vim.bo[b].swapfile = false
  vim.bo[b].modifiable = true
  vim.bo[b].fileformat = req.dos and "dos" or "unix"
  vim.bo[b].bomb = req.bomb and true or false
  vim.bo[b].undolevels = -123456 -- back to the global value
  vim.bo[b].modified = false
  vim.b[b].mcpdiff_tab = view.tab
  local ft = detect_filetype(view)
  if ft then
    vim.bo[b].filetype = ft
  end
end

-- restore_focus goes back to the window the user was in before the diff, when
-- wanted (on open with keep_focus).
function M.restore_focus(view, wanted)
  if not wanted then
    return
  end
  if api.nvim_tabpage_is_valid(view.prev_tab) then
    api.nvim_set_current_tabpage(view.prev_tab)
  end
  if valid_win(view.prev_win) then
    api.nvim_set_current_win(view.prev_win)
  end
end

-- focus_file puts the cursor, once a view it was in is gone, in the window that
-- showed the file (the user's window the view used), else back where it was before
-- the view: reviewing goes on in the editor, and a :e next does not replace the
-- agent's terminal.
local function focus_file(view)
  if valid_win(view.target_win) and window.is_editor(view.target_win) then
    api.nvim_set_current_win(view.target_win)
  else
    M.restore_focus(view, true)
  end
end

local function close_window(w)
  if not valid_win(w) then
    return
  end
  if #api.nvim_list_wins() > 1 then
    if pcall(api.nvim_win_close, w, true) then
      return
    end
  end
  -- The last window cannot close: show an empty buffer instead.
  local empty = api.nvim_create_buf(true, false)
  api.nvim_win_set_buf(w, empty)
end

local function displayed(b)
  return #vim.fn.win_findbuf(b) > 0
end

-- teardown closes the windows and buffers view created, gives the user's window back
-- what it showed, and puts the cursor back when it was in the view.
function M.teardown(view)
  local cur = api.nvim_get_current_win()
  local was_current = cur == view.prop_win or cur == view.left_win or view.closed_from_view
  if valid_win(view.left_win) and view.left_options then
    leave_diff_mode(view.left_win, view.left_options)
  end
  local target = view.target_win
  if view.created_tab and api.nvim_tabpage_is_valid(view.created_tab) then
    for _, w in ipairs(api.nvim_tabpage_list_wins(view.created_tab)) do
      close_window(w)
    end
  else
    -- Give the user's window back what it showed before, where it was (in the inline
    -- layout, unless the user has moved on to another buffer in it).
    if valid_win(target) then
      if not view.inline or api.nvim_win_get_buf(target) == view.buf then
        restore_target(view, target)
      else
        vim.wo[target][hint.bar] = view.target_bar or ""
      end
    end
    for _, w in ipairs(view.created_wins or {}) do
      close_window(w)
    end
  end
  for _, w in ipairs(vim.fn.win_findbuf(view.buf)) do
    close_window(w)
  end
  wipe(view.buf)
  if view.placeholder then
    for _, w in ipairs(vim.fn.win_findbuf(view.placeholder)) do
      close_window(w)
    end
    wipe(view.placeholder)
  end
  local sb = view.scratch_buf
  if
    valid_buf(sb)
    and api.nvim_buf_get_name(sb) == ""
    and not vim.bo[sb].modified
    and not displayed(sb)
  then
    wipe(sb)
  end
  -- A file buffer this view loaded goes away again unless someone uses it now.
  local lb = view.left_buf
  if
    lb
    and not view.new_file
    and not view.left_buf_existed
    and valid_buf(lb)
    and not displayed(lb)
    and not vim.bo[lb].modified
  then
    wipe(lb)
  end
  if was_current then
    focus_file(view)
  end
end

return M
