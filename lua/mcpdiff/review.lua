-- :McpDiffStatus: the bridge status and the edit history, per conversation and per
-- edit, with keys to show an edit's diff (in a split or inline), open its file at
-- the edit, and accept or reject the edit or its whole conversation. The list
-- refreshes itself when the store changes: the bridge watches it (hunks._update).
local M = {}

local api = vim.api

local BUF_NAME = "mcpdiff://status"

-- KEYS is shown at the top of the list; :help mcpdiff-review says the same.
M.KEYS = "<CR> diff in a split · = diff inline · o open file · a/r accept/reject edit"
  .. " · A/R accept/reject conversation · <C-l> refresh · q close"

local ns = api.nvim_create_namespace("mcpdiff_review")

local state = {
  buf = nil,
  cwd = nil,
  list = nil, -- the rows the Go side built: columns lines, edit, conv, file, source, status
  err = nil,
  rows = {}, -- buffer line -> index in the list's columns (negative: a line of an inline diff)
  expanded = {}, -- edit id -> its diff's lines, shown under the edit
  loading = false,
  again = false, -- a refresh was asked for while one ran
}

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

-- row_key names what a list row shows, to find it again after a refresh.
local function row_key(i)
  local l = state.list
  if not l or not i or i < 1 then
    return nil
  end
  return l.edit[i] ~= "" and ("edit " .. l.edit[i]) or ("conv " .. l.conv[i])
end

local function list_windows()
  return state.buf and api.nvim_buf_is_valid(state.buf) and vim.fn.win_findbuf(state.buf) or {}
end

local function render()
  local buf = state.buf
  if not buf or not api.nvim_buf_is_valid(buf) then
    return
  end
  -- Where each window's cursor is, to put it back on the same edit.
  local keep = {}
  for _, w in ipairs(list_windows()) do
    keep[w] = row_key(state.rows[api.nvim_win_get_cursor(w)[1]])
  end
  local lines = bridge_lines()
  table.insert(lines, "Keys: " .. M.KEYS)
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
  elseif next(state.expanded) == nil then
    -- The common case, kept cheap for long lists: the rows as they came.
    vim.list_extend(lines, l.lines)
    for i = 1, #l.lines do
      rows[first + i - 1] = i
    end
  else
    for i, line in ipairs(l.lines) do
      table.insert(lines, line)
      rows[#lines] = i
      local diff = l.edit[i] ~= "" and state.expanded[l.edit[i]]
      if diff then
        for _, d in ipairs(diff) do
          table.insert(lines, "      " .. d)
          rows[#lines] = -i
          diff_rows[#lines] = d:sub(1, 1)
        end
      end
    end
  end
  state.rows = rows
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
    require("mcpdiff.hunks").define()
  end
  for lnum, kind in pairs(diff_rows) do
    local group = kind == "+" and "McpDiffSignAdd"
      or kind == "-" and "McpDiffSignDelete"
      or kind == "@" and "Comment"
    if group then
      api.nvim_buf_add_highlight(buf, ns, group, lnum - 1, 0, -1)
    end
  end
  for w, key in pairs(keep) do
    if key and api.nvim_win_is_valid(w) then
      for lnum, i in pairs(rows) do
        if i > 0 and row_key(i) == key then
          api.nvim_win_set_cursor(w, { lnum, 0 })
          break
        end
      end
    end
  end
end

-- load reads the list's rows: from the bridge (which keeps the store open), else
-- from `mcpdiff status --review`. done(list, err).
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
-- one of its edits) and its edits.
local function conversation_under_cursor()
  local i = index_under_cursor()
  if not i then
    notify("no conversation on this line", vim.log.levels.WARN)
    return nil
  end
  local l, id, entries = state.list, state.list.conv[i], {}
  for j = 1, #l.conv do
    if l.conv[j] == id and l.edit[j] ~= "" then
      table.insert(entries, item(j))
    end
  end
  return id, entries
end

-- decide accepts or rejects one edit or a conversation from the list.
local function decide(action, id)
  require("mcpdiff.history").resolve(action, id, { cwd = state.cwd, on_done = M.refresh })
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
-- pending hunk, else the first line its diff changed.
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
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  for _, h in ipairs(require("mcpdiff.hunks").hunks(buf)) do
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

-- toggle_inline shows or hides the diff of e under its line.
local function toggle_inline(e)
  local id = str(e.edit_id)
  if state.expanded[id] then
    state.expanded[id] = nil
    return render()
  end
  require("mcpdiff.history").run({ "show", id }, state.cwd, function(code, stdout, stderr)
    if code ~= 0 then
      notify(("show %s failed: %s"):format(id, stderr), vim.log.levels.ERROR)
      return
    end
    local lines = vim.split(stdout, "\n", { plain = true })
    if lines[#lines] == "" then
      table.remove(lines)
    end
    state.expanded[id] = lines
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
  map(
    "<CR>",
    with_entry(function(e)
      require("mcpdiff.history").show(str(e.edit_id), state.cwd)
    end),
    "show the diff of this edit in a split"
  )
  map("=", with_entry(toggle_inline), "show or hide the diff of this edit here")
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
      local id, entries = conversation_under_cursor()
      if not id then
        return
      end
      -- One key decides every edit of the conversation: with more than one, only
      -- after a yes.
      local question = ("%s all %d edits of conversation %s?"):format(
        action == "accept" and "Accept" or "Reject",
        #entries,
        id
      )
      if #entries > 1 and not M.confirm(question) then
        notify(action .. " of conversation " .. id .. " cancelled")
        return
      end
      decide(action, id)
    end, action .. " the whole conversation")
  end
  map("<C-l>", M.refresh, "refresh")
  map("q", "<cmd>close<cr>", "close")
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
