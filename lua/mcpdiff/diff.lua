-- The openDiff view: the real file on the left, the agent's proposal on the right.
--
-- The Go side drives it: prepare() checks the file and makes the proposal buffer, Go
-- fills it with nvim_buf_set_lines, show() draws the view. The user's answer goes back
-- with rpcnotify (mcpdiff_accept / mcpdiff_reject); close() tears the view down when
-- the IDE server is done with the diff. Every view owns one augroup, its buffers and
-- its windows, and teardown removes all of them.
local M = {}

local api = vim.api
local bridge = require("mcpdiff.bridge")

local views = {} -- tab name -> view
local staged = {} -- tab name -> {buf, req} between prepare() and show()
local by_buf = {} -- proposal buffer -> tab name
local next_id = 0

local has_winbar = vim.fn.has("nvim-0.8") == 1
local hint_ns = api.nvim_create_namespace("mcpdiff_hint")

-- Windows of these filetypes are sidebars, never the main editor window.
local sidebar_filetypes = {
  ["neo-tree"] = true,
  NvimTree = true,
  oil = true,
  minifiles = true,
  netrw = true,
  aerial = true,
  tagbar = true,
  qf = true,
  snacks_picker_list = true,
  snacks_layout_box = true,
}

local function cfg()
  return require("mcpdiff.config").values
end

local function valid_win(w)
  return w and api.nvim_win_is_valid(w)
end

local function valid_buf(b)
  return b and api.nvim_buf_is_valid(b)
end

local function fire(event, data)
  vim.g.mcpdiff_event = data
  local ok = pcall(api.nvim_exec_autocmds, "User", { pattern = event, modeline = false, data = data })
  if not ok then -- Neovim 0.7: no data field
    pcall(api.nvim_exec_autocmds, "User", { pattern = event, modeline = false })
  end
end

local function realpath(p)
  return (vim.loop.fs_realpath(p)) or p
end

-- file_buffer returns the buffer of a file path (a normal buffer, loaded or not).
function M.file_buffer(path)
  local real = nil
  for _, b in ipairs(api.nvim_list_bufs()) do
    if vim.bo[b].buftype == "" then
      local name = api.nvim_buf_get_name(b)
      if name == path then
        return b
      end
      if name ~= "" then
        real = real or realpath(path)
        if realpath(name) == real then
          return b
        end
      end
    end
  end
  return nil
end

local function is_float(w)
  return api.nvim_win_get_config(w).relative ~= ""
end

-- is_editor_window tells whether a window may host the original file.
local function is_editor_window(w)
  if is_float(w) or vim.wo[w].diff then
    return false
  end
  local b = api.nvim_win_get_buf(w)
  local bt = vim.bo[b].buftype
  if bt == "terminal" or bt == "prompt" or bt == "quickfix" or bt == "help" then
    return false
  end
  return not sidebar_filetypes[vim.bo[b].filetype] and by_buf[b] == nil
end

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
local function pick_target(view)
  local tab = api.nvim_get_current_tabpage()
  if cfg().diff.open_in_new_tab or tab_has_diff(tab) then
    vim.cmd("tabnew")
    view.created_tab = api.nvim_get_current_tabpage()
    view.scratch_buf = api.nvim_get_current_buf() -- the empty buffer of :tabnew
    return api.nvim_get_current_win()
  end
  local file_buf = not view.new_file and M.file_buffer(view.path) or nil
  local candidates = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
    if is_editor_window(w) then
      if file_buf and api.nvim_win_get_buf(w) == file_buf then
        return w
      end
      table.insert(candidates, w)
    end
  end
  local cur = api.nvim_get_current_win()
  if is_editor_window(cur) then
    return cur
  end
  if candidates[1] then
    return candidates[1]
  end
  -- Only terminals, sidebars or floats here (claudecode.nvim #231): make room.
  if is_float(cur) then
    for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
      if not is_float(w) then
        api.nvim_set_current_win(w)
        break
      end
    end
  end
  vim.cmd("aboveleft new")
  local w = api.nvim_get_current_win()
  view.created_wins = { w }
  view.scratch_buf = api.nvim_get_current_buf()
  return w
end

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
  local b = M.file_buffer(view.path)
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
    ok, err = pcall(vim.cmd, "keepalt edit " .. vim.fn.fnameescape(view.path))
  end
  pcall(api.nvim_del_autocmd, swap)
  if not ok then
    error(("cannot open %s: %s"):format(view.path, err), 0)
  end
  return api.nvim_get_current_buf()
end

-- Window options of diff mode, saved before and restored after a view.
local DIFF_WIN_OPTIONS = { "diff", "scrollbind", "cursorbind", "wrap", "foldmethod", "foldenable", "foldlevel" }

-- Folding the unchanged lines costs Neovim time in proportion to lines × changes
-- (10 ms for 10,000 lines with 100 changes, 0.4 s for 100,000 lines with 1,000):
-- larger files are not folded.
local FOLD_MAX_LINES = 5000

-- enter_diff_mode does what :diffthis does, but chooses whether to fold; it returns
-- the options it changed, for leave_diff_mode.
local function enter_diff_mode(w, fold)
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

local function escape_statusline(s)
  return (s:gsub("%%", "%%%%"))
end

local function hint_text(view)
  if view.status == "accepted" then
    return "mcpdiff: accepted, waiting for the agent to write the file"
  end
  local km = cfg().keymaps
  local accept = ":w" .. (km.accept and (" or " .. km.accept) or "") .. " accept"
  local reject = ":q" .. (km.reject and (" or " .. km.reject) or "") .. " reject"
  return "mcpdiff: " .. accept .. " · " .. reject
end

local function show_hint(view)
  local text = hint_text(view)
  if has_winbar then
    for _, w in ipairs(vim.fn.win_findbuf(view.buf)) do
      vim.wo[w].winbar = "%#DiffAdd# " .. escape_statusline(text) .. " %*"
    end
  elseif valid_buf(view.buf) then
    api.nvim_buf_clear_namespace(view.buf, hint_ns, 0, -1)
    api.nvim_buf_set_extmark(view.buf, hint_ns, 0, 0, { virt_text = { { text, "Comment" } }, virt_text_pos = "eol" })
  end
end

local accept_view, reject_view

-- check_closed rejects the diff once no window shows its proposal any more
-- (:q, :close, <C-w>c, :tabclose; claudecode.nvim #238).
local function check_closed(view)
  if #vim.fn.win_findbuf(view.buf) == 0 then
    reject_view(view)
  end
end

local function set_autocmds(view)
  local g = view.augroup
  api.nvim_create_autocmd("BufWriteCmd", {
    group = g,
    buffer = view.buf,
    callback = function()
      accept_view(view)
    end,
  })
  api.nvim_create_autocmd("BufUnload", {
    group = g,
    buffer = view.buf,
    callback = function()
      reject_view(view)
    end,
  })
  api.nvim_create_autocmd({ "WinClosed", "TabClosed" }, {
    group = g,
    callback = function()
      vim.schedule(function()
        check_closed(view)
      end)
    end,
  })
end

local function set_keymaps(view)
  local km = cfg().keymaps
  if km.accept then
    vim.keymap.set("n", km.accept, function()
      accept_view(view)
    end, { buffer = view.buf, nowait = true, desc = "mcpdiff: accept the proposal" })
  end
  if km.reject then
    vim.keymap.set("n", km.reject, function()
      reject_view(view)
    end, { buffer = view.buf, nowait = true, desc = "mcpdiff: reject the proposal" })
  end
end

local function detect_filetype(view)
  if view.left_buf and vim.bo[view.left_buf].filetype ~= "" and not view.new_file then
    return vim.bo[view.left_buf].filetype
  end
  local ok, ft = pcall(vim.filetype.match, { filename = view.path })
  if ok and type(ft) == "string" then
    return ft
  end
  return nil
end

-- setup_proposal names and configures the proposal buffer (its lines are set).
local function setup_proposal(view, req)
  local b = view.buf
  local suffix = view.new_file and " (NEW FILE - proposed)" or " (proposed)"
  local name = view.tab .. suffix
  local clash = vim.fn.bufnr("^" .. vim.fn.escape(name, "\\/.*$^~[]") .. "$")
  if clash ~= -1 and clash ~= b and by_buf[clash] == nil then
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

-- goto_first_change puts the proposal's cursor on its first changed line.
local function goto_first_change(view)
  api.nvim_win_call(view.prop_win, function()
    api.nvim_win_set_cursor(0, { 1, 0 })
    if vim.fn.diff_hlID(1, 1) == 0 and vim.fn.diff_filler(1) == 0 then
      vim.cmd("silent! normal! ]c")
    end
  end)
end

-- prepare starts an openDiff: it refuses a file whose buffer has unsaved changes and
-- creates the (empty) proposal buffer. req: {tab, path, new_file, dos, bomb}.
-- Returns {buf = n} or {error = "dirty"}.
function M.prepare(req)
  if views[req.tab] then
    M.close(req.tab, "replaced")
  end
  M.abort(req.tab)
  if not req.new_file then
    local b = M.file_buffer(req.path)
    if b and vim.bo[b].modified then
      return { error = "dirty" }
    end
  end
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].undolevels = -1 -- the initial text is not an undo step
  staged[req.tab] = { buf = buf, req = req }
  return { buf = buf }
end

-- abort drops a prepared proposal buffer that was never shown.
function M.abort(tab)
  local s = staged[tab]
  staged[tab] = nil
  if s and valid_buf(s.buf) then
    pcall(api.nvim_buf_delete, s.buf, { force = true })
  end
end

-- show draws the diff view of a prepared tab; the proposal lines are already set.
function M.show(tab)
  local s = staged[tab]
  if not s then
    error("mcpdiff: no prepared diff named " .. tab, 0)
  end
  staged[tab] = nil
  next_id = next_id + 1
  local req = s.req
  local view = {
    id = next_id,
    tab = tab,
    path = req.path,
    new_file = req.new_file,
    buf = s.buf,
    status = "pending",
    prev_win = api.nvim_get_current_win(),
    prev_tab = api.nvim_get_current_tabpage(),
  }
  view.augroup = api.nvim_create_augroup("mcpdiff_view_" .. view.id, { clear = true })
  views[tab] = view
  by_buf[view.buf] = tab
  local ok, err = pcall(function()
    local target = pick_target(view)
    view.left_prev_buf = api.nvim_win_get_buf(target)
    view.left_prev_view = api.nvim_win_call(target, vim.fn.winsaveview)
    view.left_buf = show_original(view, target)
    view.left_win = target
    setup_proposal(view, req)
    vim.cmd(cfg().diff.layout == "horizontal" and "belowright split" or "belowright vsplit")
    view.prop_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(view.prop_win, view.buf)
    if not vim.o.scrollopt:find("hor", 1, true) then
      vim.opt.scrollopt:append("hor") -- as :diffthis does
    end
    local fold = api.nvim_buf_line_count(view.buf) <= FOLD_MAX_LINES
    view.left_options = enter_diff_mode(view.left_win, fold)
    enter_diff_mode(view.prop_win, fold)
    goto_first_change(view)
    if has_winbar then
      -- The window's own value ("" = the global one), to give it back unchanged.
      view.left_winbar = api.nvim_win_call(view.left_win, function()
        return api.nvim_eval("&l:winbar")
      end)
      vim.wo[view.left_win].winbar = " " .. escape_statusline(vim.fn.fnamemodify(view.path, ":~:.")) .. " (original)"
    end
    show_hint(view)
    set_autocmds(view)
    set_keymaps(view)
    if cfg().keep_focus then
      if api.nvim_tabpage_is_valid(view.prev_tab) then
        api.nvim_set_current_tabpage(view.prev_tab)
      end
      if valid_win(view.prev_win) then
        api.nvim_set_current_win(view.prev_win)
      end
    end
    view.tick = api.nvim_buf_get_changedtick(view.buf)
  end)
  if not ok then
    M.close(tab, "failed")
    error(err, 0)
  end
  fire("McpDiffOpened", {
    tab_name = tab,
    file_path = view.path,
    new_file = view.new_file,
    buf = view.buf,
    win = view.prop_win,
  })
  return true
end

local function restore_focus(view, was_current)
  if not was_current then
    return
  end
  if api.nvim_tabpage_is_valid(view.prev_tab) then
    api.nvim_set_current_tabpage(view.prev_tab)
  end
  if valid_win(view.prev_win) then
    api.nvim_set_current_win(view.prev_win)
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

local function wipe(b)
  if valid_buf(b) then
    pcall(api.nvim_buf_delete, b, { force = true })
  end
end

local function displayed(b)
  return #vim.fn.win_findbuf(b) > 0
end

-- teardown removes everything a view created and fires User McpDiffClosed.
local function teardown(view, reason)
  views[view.tab] = nil
  by_buf[view.buf] = nil
  pcall(api.nvim_del_augroup_by_id, view.augroup)
  local cur = api.nvim_get_current_win()
  local was_current = cur == view.prop_win or cur == view.left_win
  if valid_win(view.left_win) and view.left_options then
    leave_diff_mode(view.left_win, view.left_options)
    if has_winbar then
      vim.wo[view.left_win].winbar = view.left_winbar or ""
    end
  end
  if view.created_tab and api.nvim_tabpage_is_valid(view.created_tab) then
    for _, w in ipairs(api.nvim_tabpage_list_wins(view.created_tab)) do
      close_window(w)
    end
  else
    -- Give the user's window back what it showed before, where it was.
    if valid_win(view.left_win) and valid_buf(view.left_prev_buf) then
      if view.left_prev_buf ~= api.nvim_win_get_buf(view.left_win) then
        api.nvim_win_set_buf(view.left_win, view.left_prev_buf)
      end
      api.nvim_win_call(view.left_win, function()
        vim.fn.winrestview(view.left_prev_view)
      end)
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
  if valid_buf(sb) and api.nvim_buf_get_name(sb) == "" and not vim.bo[sb].modified and not displayed(sb) then
    wipe(sb)
  end
  -- A file buffer this view loaded goes away again unless someone uses it now.
  local lb = view.left_buf
  if lb and not view.new_file and not view.left_buf_existed and valid_buf(lb) and not displayed(lb) and not vim.bo[lb].modified then
    wipe(lb)
  end
  restore_focus(view, was_current)
  fire("McpDiffClosed", { tab_name = view.tab, file_path = view.path, reason = reason })
end

-- is_pending tells whether view is still shown and waiting for the user (a view
-- replaced by a diff of the same tab name is not).
local function is_pending(view)
  return views[view.tab] == view and view.status == "pending"
end

-- accept_view answers FILE_SAVED: the Go side sends the proposal's exact bytes, or
-- rebuilds the text from the buffer when the user changed it.
function accept_view(view)
  if not is_pending(view) then
    return
  end
  view.status = "accepted"
  local changed = api.nvim_buf_get_changedtick(view.buf) ~= view.tick
  vim.bo[view.buf].modified = false
  bridge.notify_go("mcpdiff_accept", view.tab, changed)
  show_hint(view)
end

-- reject_view answers DIFF_REJECTED and closes the view.
function reject_view(view)
  if not is_pending(view) then
    return
  end
  view.status = "rejected"
  bridge.notify_go("mcpdiff_reject", view.tab)
  -- Not inside the BufUnload/WinClosed that got us here.
  vim.schedule(function()
    if views[view.tab] == view then
      teardown(view, "rejected")
    end
  end)
end

-- accept accepts the diff shown under a tab name (:McpDiffAccept).
function M.accept(tab)
  local view = views[tab]
  if view then
    accept_view(view)
  end
end

-- reject rejects the diff shown under a tab name (:McpDiffReject).
function M.reject(tab)
  local view = views[tab]
  if view then
    reject_view(view)
  end
end

-- close tears a view down without answering (the IDE server already did).
function M.close(tab, reason)
  M.abort(tab)
  local view = views[tab]
  if not view then
    return false
  end
  teardown(view, reason or "closed")
  return true
end

-- close_all tears down every view (the bridge stopped, Neovim exits).
function M.close_all(reason)
  for tab in pairs(staged) do
    M.abort(tab)
  end
  for _, view in pairs(vim.tbl_values(views)) do
    teardown(view, reason or "closed")
  end
end

-- current returns the tab name of the diff view the cursor is in, or nil.
function M.current()
  local buf = api.nvim_get_current_buf()
  if by_buf[buf] then
    return by_buf[buf]
  end
  local win = api.nvim_get_current_win()
  for tab, view in pairs(views) do
    if view.left_win == win then
      return tab
    end
  end
  return nil
end

-- list returns {tab, path, status} of every open view.
function M.list()
  local out = {}
  for tab, view in pairs(views) do
    table.insert(out, { tab = tab, path = view.path, status = view.status })
  end
  table.sort(out, function(a, b)
    return a.tab < b.tab
  end)
  return out
end

return M
