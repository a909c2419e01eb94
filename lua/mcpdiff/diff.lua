-- The openDiff view: the real file on the left, the agent's proposal on the right
-- (diff mode), or in the inline layout the proposal alone in the user's window, with
-- the removed lines drawn as virtual lines.
--
-- The Go side drives it: prepare() checks the file and makes the proposal buffer, Go
-- fills it with nvim_buf_set_lines, show() draws the view (in the inline layout with
-- the texts to diff, which Go sends along). The user's answer goes back with
-- rpcnotify (mcpdiff_accept / mcpdiff_reject); close() tears the view down when the
-- IDE server is done with the diff. Every view owns one augroup, its buffers and its
-- windows, and teardown removes all of them. Hunk decisions (a range of
-- :McpDiffAccept / :McpDiffReject) change only the proposal buffer.
local M = {}

local api = vim.api
local bridge = require("mcpdiff.bridge")
local hunks_mod = require("mcpdiff.diff_hunks")
local marks = require("mcpdiff.diff_marks")
local once = require("mcpdiff.once")

local views = {} -- tab name -> view
local staged = {} -- tab name -> {buf, req} between prepare() and show()
local by_buf = {} -- proposal buffer -> tab name
local next_id = 0

local has_winbar = vim.fn.has("nvim-0.8") == 1
-- The window option that shows the key hint: the winbar, or before Neovim 0.8 the
-- status line (end-of-line text on line 1 was out of sight when that line was
-- folded or wider than the window).
local hint_bar = has_winbar and "winbar" or "statusline"

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
  local ok =
    pcall(api.nvim_exec_autocmds, "User", { pattern = event, modeline = false, data = data })
  if not ok then -- Neovim 0.7: no data field
    pcall(api.nvim_exec_autocmds, "User", { pattern = event, modeline = false })
  end
end

local function notify(msg, level)
  vim.notify("mcpdiff: " .. msg, level or vim.log.levels.INFO)
end

local function plural(n, word)
  return n == 1 and ("1 " .. word) or (n .. " " .. word .. "s")
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

local window = require("mcpdiff.window")

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
  -- Diff mode is per tab: a side-by-side view needs a tab without other diffs.
  if cfg().diff.open_in_new_tab or (not view.inline and tab_has_diff(tab)) then
    vim.cmd("tabnew")
    view.created_tab = api.nvim_get_current_tabpage()
    view.scratch_buf = api.nvim_get_current_buf() -- the empty buffer of :tabnew
    return api.nvim_get_current_win()
  end
  local file_buf = not view.new_file and M.file_buffer(view.path) or nil
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
local DIFF_WIN_OPTIONS =
  { "diff", "scrollbind", "cursorbind", "wrap", "foldmethod", "foldenable", "foldlevel" }

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

-- hint_text is the view's key hint that fits in width columns: the longest of a few
-- forms, down to the two keys that always work (side by side windows are narrow).
local function hint_text(view, width)
  if view.status == "accepted" then
    return "mcpdiff: accepted, waiting for the agent to write the file"
  end
  local km = cfg().keymaps
  -- Keys as typed: <leader> is the user's leader (short enough for one line).
  local leader = vim.g.mapleader == nil and "\\"
    or (vim.g.mapleader == " " and "<Space>" or vim.g.mapleader)
  local function key(lhs)
    return (lhs:gsub("<[Ll][Ee][Aa][Dd][Ee][Rr]>", function()
      return leader
    end))
  end
  local function form(sep, hunk_words)
    local parts = {
      ":w" .. (km.accept and (sep .. key(km.accept)) or "") .. " accept",
      ":q" .. (km.reject and (sep .. key(km.reject)) or "") .. " reject",
    }
    if km.accept_hunk then
      table.insert(parts, key(km.accept_hunk) .. " keep" .. hunk_words)
    end
    if km.reject_hunk then
      table.insert(parts, key(km.reject_hunk) .. " undo" .. hunk_words)
    end
    return table.concat(parts, " · ")
  end
  local forms = {
    "mcpdiff: " .. form(" or ", " hunk"),
    form(" or ", " hunk"),
    form("/", ""),
    ":w accept · :q reject",
  }
  for _, text in ipairs(forms) do
    if vim.fn.strdisplaywidth(text) + 2 <= width then
      return text
    end
  end
  return forms[#forms]
end

-- show_hint puts the key hint, fitted to the window's width, in the winbar (or the
-- status line) of each window showing the proposal.
local function show_hint(view)
  for _, w in ipairs(vim.fn.win_findbuf(view.buf)) do
    local text = hint_text(view, api.nvim_win_get_width(w))
    vim.wo[w][hint_bar] = "%#DiffAdd# " .. escape_statusline(text) .. " %*"
  end
end

local accept_view, reject_view, is_pending, schedule_refresh

-- check_closed rejects the diff once no window shows its proposal any more
-- (:q, :close, <C-w>c, :tabclose; claudecode.nvim #238).
local function check_closed(view)
  if #vim.fn.win_findbuf(view.buf) == 0 then
    reject_view(view)
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
    b = (not view.new_file and M.file_buffer(view.path)) or api.nvim_create_buf(true, false)
  end
  api.nvim_win_set_buf(w, b)
  if b == view.target_prev_buf then
    api.nvim_win_call(w, function()
      vim.fn.winrestview(view.target_prev_view)
    end)
  end
  vim.wo[w][hint_bar] = view.target_bar or ""
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
local function give_back_window(view)
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

local function set_autocmds(view)
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
        check_closed(view)
      end)
    end,
  })
  -- The hint is fitted to the window's width: fit it again when that changes.
  api.nvim_create_autocmd(
    vim.fn.exists("##WinResized") == 1 and { "WinResized", "VimResized" } or { "VimResized" },
    {
      group = g,
      callback = function()
        if views[view.tab] == view then
          show_hint(view)
        end
      end,
    }
  )
  if view.inline then
    api.nvim_create_autocmd("QuitPre", {
      group = g,
      callback = function()
        give_back_window(view)
      end,
    })
  end
  -- Redraw the hunk marks after every change of the proposal, once per loop turn.
  api.nvim_buf_attach(view.buf, false, {
    on_lines = function()
      if views[view.tab] ~= view then
        return true -- detach
      end
      schedule_refresh(view)
    end,
  })
end

-- hunks_of returns the proposal's hunks against the original, and both sides
-- (diff_hunks.side). new_text: the proposal's text when the caller has it.
local function hunks_of(view, new_text)
  local orig = view.orig -- inline: read once
  if not orig then -- side by side: the original is the left window's buffer
    orig = view.new_file and hunks_mod.none or hunks_mod.side(view.left_buf)
  end
  local new = hunks_mod.side(view.buf, new_text)
  return hunks_mod.compute(orig, new), orig, new
end

-- refresh_marks redraws the hunk marks; it returns the hunks and the proposal's side
-- when it computed them.
local function refresh_marks(view, new_text)
  if not valid_buf(view.buf) then
    return
  end
  if not view.inline and next(view.kept) == nil then
    marks.clear(view.buf) -- side by side, diff mode draws the rest
    return
  end
  local hunks, orig, new = hunks_of(view, new_text)
  marks.draw(view.buf, view, hunks, orig, new)
  return hunks, new
end

-- Above this many lines, reading and diffing the proposal takes tens of milliseconds:
-- the marks are redrawn once typing pauses rather than after every change (in the
-- meantime they move with the text).
local REFRESH_DEBOUNCE_LINES = 20000
local REFRESH_DEBOUNCE_MS = 150

function schedule_refresh(view)
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
local function jump(view, dir)
  local hunks, _, new = hunks_of(view)
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

-- decide_hunks keeps (accept) or takes back (reject) the hunks that lines
-- line1..line2 touch, of the proposal (side "b") or of the original (side "a", the
-- left window). Taking back puts the original lines into the proposal buffer, as one
-- change that u undoes; keeping marks the hunks. The view stays open either way.
local function decide_hunks(view, action, line1, line2, side)
  if not is_pending(view) then
    notify(
      "this proposal is already " .. view.status .. "; its hunks can no longer change",
      vim.log.levels.WARN
    )
    return
  end
  local hunks, orig, new = hunks_of(view)
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
    refresh_marks(view)
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
local function selected_lines()
  local mode = api.nvim_get_mode().mode
  if mode == "v" or mode == "V" or mode == "\22" then
    local a, b = vim.fn.line("v"), vim.fn.line(".")
    vim.cmd("normal! " .. api.nvim_replace_termcodes("<Esc>", true, false, true))
    return math.min(a, b), math.max(a, b)
  end
  local line = api.nvim_win_get_cursor(0)[1]
  return line, line
end

local function set_keymaps(view)
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
    local line1, line2 = selected_lines()
    decide_hunks(view, "accept", line1, line2, "b")
  end, "keep the hunk under the cursor (or the selection's)")
  map({ "n", "x" }, km.reject_hunk, function()
    local line1, line2 = selected_lines()
    decide_hunks(view, "reject", line1, line2, "b")
  end, "take the original lines back for the hunk under the cursor (or the selection's)")
  if view.inline then
    map({ "n", "x", "o" }, km.next_hunk, function()
      jump(view, 1)
    end, "next hunk")
    map({ "n", "x", "o" }, km.prev_hunk, function()
      jump(view, -1)
    end, "previous hunk")
  end
end

local function detect_filetype(view)
  local b = view.left_buf or (not view.new_file and M.file_buffer(view.path)) or nil
  if b and vim.bo[b].filetype ~= "" and not view.new_file then
    return vim.bo[b].filetype
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
-- Returns {buf = n, texts = true when show() wants the texts} or {error = "dirty"}.
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
  local inline = cfg().diff.layout == "inline"
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].undolevels = -1 -- the initial text is not an undo step
  staged[req.tab] = { buf = buf, inline = inline, req = req }
  return { buf = buf, texts = inline or nil }
end

local function wipe(b)
  if valid_buf(b) then
    pcall(api.nvim_buf_delete, b, { force = true })
  end
end

-- abort drops a prepared proposal buffer that was never shown.
function M.abort(tab)
  local s = staged[tab]
  staged[tab] = nil
  if s then
    wipe(s.buf)
  end
end

-- show_side_by_side draws the original in the target window and the proposal in a
-- split beside (or below) it, both in diff mode.
local function show_side_by_side(view, target, req)
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
    vim.wo[view.left_win].winbar = " "
      .. escape_statusline(vim.fn.fnamemodify(view.path, ":~:."))
      .. " (original)"
  end
end

-- show_inline puts the proposal in the target window itself, with its hunks drawn
-- as marks. texts: {orig, prop}, both sides' texts as diff_hunks.text makes them.
local function show_inline(view, target, req, texts)
  view.orig = texts.orig and hunks_mod.text_side(texts.orig) or hunks_mod.none
  setup_proposal(view, req)
  api.nvim_set_current_win(target)
  api.nvim_win_set_buf(target, view.buf)
  view.prop_win = target
  local hunks, new = refresh_marks(view, texts.prop)
  if hunks[1] then
    show_hunk(target, hunks[1], hunks_mod.span(hunks[1], "b", new.count))
  end
end

-- restore_focus goes back to the window the user was in before the diff, when
-- wanted (on open with keep_focus).
local function restore_focus(view, wanted)
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
    restore_focus(view, true)
  end
end

-- show draws the diff view of a prepared tab; the proposal lines are already set.
-- texts: in the inline layout, {orig = text, prop = text} as diff_hunks.text makes
-- them (Go has them at hand; Lua would take tens of milliseconds to build them).
function M.show(tab, texts)
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
    inline = s.inline,
    buf = s.buf,
    status = "pending",
    kept = {}, -- hunk keys (diff_hunks.key) the user kept
    prev_win = api.nvim_get_current_win(),
    prev_tab = api.nvim_get_current_tabpage(),
  }
  view.refresh_now = function()
    if views[view.tab] == view then
      refresh_marks(view)
    end
  end
  view.refresh_soon = once(view.refresh_now)
  view.augroup = api.nvim_create_augroup("mcpdiff_view_" .. view.id, { clear = true })
  views[tab] = view
  by_buf[view.buf] = tab
  local ok, err = pcall(function()
    local target = pick_target(view)
    view.target_win = target
    view.target_prev_buf = api.nvim_win_get_buf(target)
    view.target_prev_view = api.nvim_win_call(target, vim.fn.winsaveview)
    -- The window's own value ("" = the global one), to give it back unchanged.
    view.target_bar = api.nvim_win_call(target, function()
      return api.nvim_eval("&l:" .. hint_bar)
    end)
    if view.inline then
      show_inline(view, target, req, texts or {})
    else
      show_side_by_side(view, target, req)
    end
    show_hint(view)
    set_autocmds(view)
    set_keymaps(view)
    restore_focus(view, cfg().keep_focus)
    view.tick = api.nvim_buf_get_changedtick(view.buf)
    require("mcpdiff.terminal").fit()
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
  views[view.tab] = nil
  by_buf[view.buf] = nil
  pcall(api.nvim_del_augroup_by_id, view.augroup)
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
        vim.wo[target][hint_bar] = view.target_bar or ""
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
  if view.refresh_timer then
    view.refresh_timer:stop()
    view.refresh_timer:close()
  end
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
  require("mcpdiff.terminal").fit()
  fire("McpDiffClosed", { tab_name = view.tab, file_path = view.path, reason = reason })
end

-- is_pending tells whether view is still shown and waiting for the user (a view
-- replaced by a diff of the same tab name is not).
function is_pending(view)
  return views[view.tab] == view and view.status == "pending"
end

-- accept_view answers FILE_SAVED: the Go side sends the proposal's exact bytes, or
-- rebuilds the text from the buffer when the user changed it (an empty buffer, with
-- not even one empty line, is the empty text).
function accept_view(view)
  if not is_pending(view) then
    return
  end
  view.status = "accepted"
  local changed = api.nvim_buf_get_changedtick(view.buf) ~= view.tick
  local empty = changed and hunks_mod.is_empty(view.buf)
  vim.bo[view.buf].modified = false
  bridge.notify_go("mcpdiff_accept", view.tab, changed, empty)
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

-- side_of_current tells which side of view the cursor is in: "a" in the original's
-- window of a side-by-side view, else "b" (the proposal).
local function side_of_current(view)
  if api.nvim_get_current_win() == view.left_win and api.nvim_get_current_buf() ~= view.buf then
    return "a"
  end
  return "b"
end

-- answer implements :McpDiffAccept and :McpDiffReject in a diff view (action
-- "accept" or "reject"): it decides the proposal shown under a tab name, or with
-- range {line1, line2} the hunks those lines touch (accepting keeps them, rejecting
-- takes their original lines back).
function M.answer(action, tab, range)
  local view = views[tab]
  if not view then
    return
  end
  if range then
    decide_hunks(view, action, range[1], range[2], side_of_current(view))
  elseif action == "accept" then
    accept_view(view)
  else
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
