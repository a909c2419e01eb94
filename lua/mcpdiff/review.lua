-- :McpDiffStatus: the bridge status and the edit history, per conversation and per
-- edit, with keys to show an edit's or a conversation's diff (in a split or inline),
-- open its file at the edit, accept or reject the edit or its whole conversation,
-- and hide the conversations left nothing to review. Conversations with pending
-- edits come first (the Go side orders the rows), and the list opens with the
-- cursor on the first pending edit. The list refreshes itself when the store
-- changes: the bridge watches it (changes._update).
local M = {}

local api = vim.api

local BUF_NAME = "mcpdiff://status"

local ns = api.nvim_create_namespace("mcpdiff_review")

local state = {
  buf = nil,
  cwd = nil,
  list = nil, -- the rows the Go side built: columns lines, edit, conv, file, source, status
  drawn = nil, -- the list the buffer shows, which rows index
  err = nil,
  rows = {}, -- buffer line -> index in the list's columns (negative: a line of an inline diff)
  expanded = {}, -- row key (row_key) -> the diff's lines, shown under its row
  hide_resolved = false, -- leave out the conversations without pending edits
  place_cursor = false, -- put the cursor on the first pending edit at the next render
  reveal = nil, -- {win, key}: scroll the diff just shown under row key into view
  loading = false,
  again = false, -- a refresh was asked for while one ran
}

-- keys is shown at the top of the list; :help mcpdiff-review says the same.
local function keys()
  return "<CR> diff in a split · = diff inline · o open file · a/r accept/reject edit"
    .. " · A/R accept/reject conversation · p "
    .. (state.hide_resolved and "show" or "hide")
    .. " resolved · <C-l> refresh · q close"
end

-- The review list as the Go side builds it (internal/reviewlist's List, from the
-- bridge's mcpdiff_review or `mcpdiff status --review`): one entry per row in each
-- column, the rows' text in lines.
---@class mcpdiff.ReviewList
---@field workspace string
---@field lines string[]
---@field edit string[] the edit id ("" on a conversation's line)
---@field conv string[] the conversation id
---@field file string[] the edit's file ("" on a conversation's line)
---@field source string[] the source of a move, else ""
---@field status string[] the edit's status as shown
---@field pending boolean[] the edit (a conversation: one of its edits) is pending
---@field warnings string[] problems of the store
---@field info string[] files changed outside mcpdiff
---@field error? string why there is no list (no store)

local function notify(msg, level)
  vim.notify("mcpdiff: " .. msg, level or vim.log.levels.INFO)
end

local str = require("mcpdiff.history").str

local function relative(path, cwd)
  path = str(path)
  if path:sub(1, #cwd + 1) == cwd .. "/" then
    return path:sub(#cwd + 2)
  end
  return path
end

local function bridge_lines()
  local bridge = require("mcpdiff.bridge")
  local info = bridge.info()
  if not info then
    return { "Bridge: not running (:McpDiffStart); this list refreshes itself only while it runs" }
  end
  local status = bridge.status() or {}
  local clients = type(status.clients) == "table" and #status.clients or bridge.clients()
  local lines =
    { ("Bridge: listening on 127.0.0.1:%d, %d client(s) connected"):format(info.port, clients) }
  for _, d in ipairs(type(status.diffs) == "table" and status.diffs or {}) do
    table.insert(
      lines,
      ("  diff %-8s  %s  %s"):format(str(d.status), relative(d.path, state.cwd), str(d.tabName))
    )
  end
  return lines
end

-- row_key names what row i of list l (default: the list last read) shows, to find
-- it again after a refresh; nil when l has no such row.
local function row_key(i, l)
  l = l or state.list
  if not l or not i or i < 1 or l.edit[i] == nil or l.conv[i] == nil then
    return nil
  end
  return l.edit[i] ~= "" and ("edit " .. l.edit[i]) or ("conv " .. l.conv[i])
end

local function list_windows()
  return state.buf and api.nvim_buf_is_valid(state.buf) and vim.fn.win_findbuf(state.buf) or {}
end

-- shown_rows returns the list's rows to show: all of them, or without the
-- conversations that have no pending edit (and how many conversations that hid).
local function shown_rows(l)
  local out, hidden, keep = {}, 0, true
  for i = 1, #l.lines do
    if l.edit[i] == "" then -- a conversation's line: its edits follow
      keep = not state.hide_resolved or l.pending[i] == true
      if not keep then
        hidden = hidden + 1
      end
    end
    if keep then
      table.insert(out, i)
    end
  end
  return out, hidden
end

-- first_pending is the buffer line of the first pending edit, else of the first row
-- (nil when the list has none); rows: buffer line -> row, up to line count.
local function first_pending(rows, count)
  local l, first = state.list, nil
  local pending = l.pending or {}
  for lnum = 1, count do
    local i = rows[lnum]
    if i and i > 0 then
      if pending[i] and l.edit[i] ~= "" then
        return lnum
      end
      first = first or lnum
    end
  end
  return first
end

-- line_of is the buffer line of the row named key (row_key), or nil.
local function line_of(rows, key)
  for lnum, i in pairs(rows) do
    if i > 0 and row_key(i) == key then
      return lnum
    end
  end
  return nil
end

-- reveal scrolls window w so that the diff shown under line lnum (lines lnum+1 to
-- last) is on screen, as much of it as fits below that line, which stays in view.
local function reveal(w, lnum, last)
  api.nvim_win_set_cursor(w, { last, 0 })
  api.nvim_win_set_cursor(w, { lnum, 0 })
end

local function render()
  local buf = state.buf
  if not buf or not api.nvim_buf_is_valid(buf) then
    return
  end
  -- Where each window's cursor is, to put it back on the same edit: the rows on
  -- screen are those of the list drawn last, which a refresh may have replaced (by
  -- one with fewer rows, or none when the store went).
  local windows, keep = list_windows(), {}
  for _, w in ipairs(windows) do
    keep[w] = row_key(state.rows[api.nvim_win_get_cursor(w)[1]], state.drawn)
  end
  local lines = bridge_lines()
  table.insert(lines, "Keys: " .. keys())
  table.insert(lines, "")
  local rows, diff_rows = {}, {}
  local l = state.list
  -- What the Go side tells of the store (warnings) and of files changed outside
  -- mcpdiff (info) comes first: what the list says about those files is not what
  -- they hold. `mcpdiff status` and :checkhealth show the same lines.
  local notices = 0
  for _, kind in ipairs({ { "Warning: ", l and l.warnings }, { "Info: ", l and l.info } }) do
    for _, text in ipairs(type(kind[2]) == "table" and kind[2] or {}) do
      table.insert(lines, kind[1] .. text)
      notices = notices + 1
    end
  end
  if notices > 0 then
    table.insert(lines, "")
  end
  local first = #lines + 1
  if state.err or (l and str(l.error) ~= "") then
    table.insert(lines, "History: " .. (state.err or str(l.error)))
  elseif not l then
    table.insert(lines, "History: loading…")
  elseif #l.lines == 0 then
    table.insert(lines, "History: no recorded edits under " .. state.cwd)
  elseif next(state.expanded) == nil and not state.hide_resolved then
    -- The common case, kept cheap for long lists: the rows as they came.
    vim.list_extend(lines, l.lines)
    for i = 1, #l.lines do
      rows[first + i - 1] = i
    end
  else
    local shown, hidden = shown_rows(l)
    for _, i in ipairs(shown) do
      table.insert(lines, l.lines[i])
      rows[#lines] = i
      for _, d in ipairs(state.expanded[row_key(i)] or {}) do
        table.insert(lines, "      " .. d)
        rows[#lines] = -i
        diff_rows[#lines] = d:sub(1, 1)
      end
    end
    if hidden > 0 then
      table.insert(
        lines,
        ("(%d resolved conversation%s hidden: p shows them)"):format(
          hidden,
          hidden == 1 and "" or "s"
        )
      )
    end
  end
  state.rows, state.drawn = rows, l
  -- A buffer line cannot hold a newline (nvim_buf_set_lines fails): the bridge
  -- escapes names, and any text from elsewhere (an error) is escaped here.
  for i, line in ipairs(lines) do
    if line:find("\n", 1, true) then
      lines[i] = line:gsub("\n", "\\n")
    end
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  if next(diff_rows) then
    require("mcpdiff.changes").define()
  end
  for lnum, kind in pairs(diff_rows) do
    local group = kind == "+" and "McpDiffSignAdd"
      or kind == "-" and "McpDiffSignDelete"
      or kind == "@" and "Comment"
    if group then
      api.nvim_buf_add_highlight(buf, ns, group, lnum - 1, 0, -1)
    end
  end
  -- Once the rows are in, a list just opened starts on the first pending edit; a
  -- cursor whose row went (hidden, or cleaned up) goes there too.
  local has_rows = l and #l.lines > 0
  for _, w in ipairs(windows) do
    local key = keep[w]
    if api.nvim_win_is_valid(w) and has_rows and (state.place_cursor or key) then
      local lnum = not state.place_cursor and line_of(rows, key) or first_pending(rows, #lines)
      if lnum then
        api.nvim_win_set_cursor(w, { lnum, 0 })
      end
    end
  end
  if has_rows then
    state.place_cursor = false
  end
  local r = state.reveal
  state.reveal = nil
  local lnum = r and api.nvim_win_is_valid(r.win) and line_of(rows, r.key)
  if lnum then
    local last = lnum
    while rows[last + 1] and rows[last + 1] < 0 do
      last = last + 1
    end
    reveal(r.win, lnum, last)
  end
end

-- load reads the list's rows: from the bridge (which keeps the store open), else
-- from `mcpdiff status --review`. done(list, err).
---@param done fun(list: mcpdiff.ReviewList?, err: string?)
local function load(done)
  local list = require("mcpdiff.bridge").request("mcpdiff_review", state.cwd)
  if type(list) == "table" then
    return done(list)
  end
  require("mcpdiff.history").run({ "status", "--review" }, state.cwd, function(code, stdout, stderr)
    local ok, decoded = pcall(vim.json.decode, stdout)
    if code ~= 0 or not ok or type(decoded) ~= "table" then
      return done(nil, stderr ~= "" and stderr or ("mcpdiff status failed (exit " .. code .. ")"))
    end
    done(decoded)
  end)
end

-- refresh reads the history again and redraws the list (keeping the cursor on the
-- same edit). Refreshes asked for while one runs are folded into one more.
function M.refresh()
  if not state.buf or not api.nvim_buf_is_valid(state.buf) then
    return
  end
  if state.loading then
    state.again = true
    return
  end
  state.loading = true
  load(function(list, err)
    state.loading = false
    state.list, state.err = list, err
    render()
    if state.again then
      state.again = false
      M.refresh()
    end
  end)
end

-- store_changed is called when the stores of these workspace folders changed.
function M.store_changed(workspaces)
  if not state.buf or not api.nvim_buf_is_valid(state.buf) then
    return
  end
  local uv = vim.uv or vim.loop
  local cwds = { state.cwd, (uv.fs_realpath(state.cwd)) or state.cwd }
  for _, ws in ipairs(workspaces) do
    for _, cwd in ipairs(cwds) do
      if cwd == ws or cwd:sub(1, #ws + 1) == ws .. "/" then
        return M.refresh()
      end
    end
  end
end

-- item is what a list row stands for: an edit, or a conversation's line.
local function item(i)
  local l = state.list
  return {
    edit_id = l.edit[i],
    conversation_id = l.conv[i],
    file_path = l.file[i],
    source_path = l.source[i] ~= "" and l.source[i] or nil,
    status = l.status[i],
  }
end

local function index_under_cursor()
  local i = state.rows[api.nvim_win_get_cursor(0)[1]]
  return i and math.abs(i) or nil
end

local function entry_under_cursor()
  local i = index_under_cursor()
  if not i or state.list.edit[i] == "" then
    notify("no edit on this line", vim.log.levels.WARN)
    return nil
  end
  return item(i)
end

-- conversation_under_cursor returns the conversation of the line (its own line or
-- one of its edits).
local function conversation_under_cursor()
  local i = index_under_cursor()
  if not i then
    notify("no conversation on this line", vim.log.levels.WARN)
    return nil
  end
  return state.list.conv[i]
end

-- edits_of returns the edits the list holds for a conversation.
local function edits_of(id)
  local l, entries = state.list, {}
  for j = 1, #l.conv do
    if l.conv[j] == id and l.edit[j] ~= "" then
      table.insert(entries, item(j))
    end
  end
  return entries
end

-- decide accepts or rejects one edit or a conversation from the list.
local function decide(action, id)
  require("mcpdiff.history").decide(action, id, { cwd = state.cwd, on_done = M.refresh })
end

-- confirm asks whether to decide a whole conversation of several edits at once (a
-- field, so tests can answer it).
M.confirm = function(question)
  return vim.fn.confirm(question, "&Yes\n&No", 2) == 1
end

-- first_changed_line is the line of the new file where a diff's first change is.
function M.first_changed_line(diff_text)
  local line
  for _, l in ipairs(vim.split(diff_text, "\n", { plain = true })) do
    local start = l:match("^@@ %-%d+,?%d* %+(%d+)")
    if start then
      line = tonumber(start)
    elseif line then
      local c = l:sub(1, 1)
      if c == "+" or c == "-" then
        return math.max(line, 1)
      elseif c == " " then
        line = line + 1
      end
    end
  end
  return nil
end

-- open_at opens the file of e in the window above the list, at the edit: its first
-- pending change, else the first line its diff changed.
local function open_at(e)
  local path = str(e.file_path)
  if vim.fn.filereadable(path) == 0 then
    notify(relative(path, state.cwd) .. " does not exist (any more)", vim.log.levels.WARN)
    return
  end
  local target
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local b = api.nvim_win_get_buf(w)
    if b ~= state.buf and vim.bo[b].buftype == "" and api.nvim_win_get_config(w).relative == "" then
      target = w
      break
    end
  end
  if target then
    api.nvim_set_current_win(target)
  else
    vim.cmd("aboveleft split")
  end
  local buf = require("mcpdiff.window").show_file(path)
  for _, h in ipairs(require("mcpdiff.changes").changes(buf)) do
    if h.edit_id == e.edit_id then
      api.nvim_win_set_cursor(0, { h.start_line, 0 })
      return
    end
  end
  local win = api.nvim_get_current_win()
  require("mcpdiff.history").run({ "show", str(e.edit_id) }, state.cwd, function(code, stdout)
    local line = code == 0 and M.first_changed_line(stdout)
    if line and api.nvim_win_is_valid(win) and api.nvim_win_get_buf(win) == buf then
      api.nvim_win_set_cursor(win, { math.min(line, api.nvim_buf_line_count(buf)), 0 })
    end
  end)
end

-- row_under_cursor is the row of the cursor's line (an edit or a conversation; on
-- a line of an inline diff, the row it is under) and its list index.
local function row_under_cursor()
  local i = index_under_cursor()
  if not i then
    notify("no edit or conversation on this line", vim.log.levels.WARN)
    return nil
  end
  return item(i), i
end

-- shown_id is what `mcpdiff show` takes for a row: its edit, else its conversation.
local function shown_id(e)
  return str(e.edit_id ~= "" and e.edit_id or e.conversation_id)
end

-- toggle_inline shows or hides the diff of row i (e) under its line, and scrolls it
-- into view in the current window.
local function toggle_inline(e, i)
  local key, id = row_key(i), shown_id(e)
  if state.expanded[key] then
    state.expanded[key] = nil
    return render()
  end
  local win = api.nvim_get_current_win()
  require("mcpdiff.history").run({ "show", id }, state.cwd, function(code, stdout, stderr)
    if code ~= 0 then
      notify(("show %s failed: %s"):format(id, stderr), vim.log.levels.ERROR)
      return
    end
    local lines = vim.split(stdout, "\n", { plain = true })
    if lines[#lines] == "" then
      table.remove(lines)
    end
    state.expanded[key] = lines
    state.reveal = { win = win, key = key }
    render()
  end)
end

local function set_keymaps(buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = "mcpdiff: " .. desc })
  end
  local function with_entry(fn)
    return function()
      local e = entry_under_cursor()
      if e then
        fn(e)
      end
    end
  end
  local function with_row(fn)
    return function()
      local e, i = row_under_cursor()
      if e then
        fn(e, i)
      end
    end
  end
  map(
    "<CR>",
    with_row(function(e)
      require("mcpdiff.history").show(shown_id(e), state.cwd)
    end),
    "show the diff of this edit (or conversation) in a split"
  )
  map("=", with_row(toggle_inline), "show or hide the diff of this edit (or conversation) here")
  map("o", with_entry(open_at), "open the file at this edit")
  map(
    "a",
    with_entry(function(e)
      decide("accept", str(e.edit_id))
    end),
    "accept this edit"
  )
  map(
    "r",
    with_entry(function(e)
      decide("reject", str(e.edit_id))
    end),
    "reject this edit"
  )
  for lhs, action in pairs({ A = "accept", R = "reject" }) do
    map(lhs, function()
      local id = conversation_under_cursor()
      if not id then
        return
      end
      -- The question counts the conversation's edits as the history holds them now,
      -- not as the list was last drawn: a list with no bridge running is not redrawn
      -- as edits arrive, and the decision takes every edit of the conversation.
      load(function(list, err)
        if not list then
          return notify(action .. " of conversation " .. id .. ": " .. err, vim.log.levels.ERROR)
        end
        state.list, state.err = list, nil
        render()
        local entries = edits_of(id)
        -- One key decides every edit of the conversation: with more than one, only
        -- after a yes.
        local question = ("%s all %d edits of conversation %s?"):format(
          action == "accept" and "Accept" or "Reject",
          #entries,
          id
        )
        if #entries > 1 then
          vim.cmd("redraw") -- the list as counted, under the question
          if not M.confirm(question) then
            return notify(action .. " of conversation " .. id .. " cancelled")
          end
        end
        decide(action, id)
      end)
    end, action .. " the whole conversation")
  end
  map("p", function()
    state.hide_resolved = not state.hide_resolved
    render()
  end, "hide or show the conversations without pending edits")
  map("<C-l>", M.refresh, "refresh")
  map("q", require("mcpdiff.window").close_current, "close")
end

-- open shows the review buffer (reusing it when it is open).
function M.open()
  state.cwd = vim.fn.getcwd()
  if state.buf and api.nvim_buf_is_valid(state.buf) then
    local wins = vim.fn.win_findbuf(state.buf)
    if #wins > 0 then
      api.nvim_set_current_win(wins[1])
    else
      vim.cmd("botright split")
      api.nvim_win_set_buf(0, state.buf)
    end
  else
    vim.cmd("botright new")
    local buf = api.nvim_get_current_buf()
    state.buf, state.list, state.err, state.expanded = buf, nil, nil, {}
    state.place_cursor = true
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = "mcpdiff"
    pcall(api.nvim_buf_set_name, buf, BUF_NAME)
    set_keymaps(buf)
    api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      once = true,
      callback = function()
        state.buf = nil
      end,
    })
  end
  -- Long lines (the Keys line, long paths) wrap between words, indented as they begin.
  vim.wo.linebreak = true
  vim.wo.breakindent = true
  render()
  M.refresh()
  return state.buf
end

return M
