-- Pending changes of history edits in file buffers: signs, changes() (what
-- require("mcpdiff").changes() returns), navigation, the preview of the change under
-- the cursor and the quickfix list. The Go bridge works them out (it replays the
-- history) and pushes them whenever a store changes, since it watches the stores;
-- this module tells it which files are open and draws what it sends. They come in
-- the lines of the file on disk; a buffer with unsaved changes has them moved
-- through those changes (vim.diff) when asked for. ("Hunk" is a proposal's block:
-- diff/changes.lua.)
local M = {}

local api = vim.api

local SIGN_GROUP = "mcpdiff_pending"
-- Below gitsigns' default (6) would hide ours where both mark a line; agent edits
-- that are still pending matter more while reviewing.
local SIGN_PRIORITY = 8

local state = {
  by_name = {}, -- buffer name -> changes as the bridge sent them (lines on disk)
  fresh = {}, -- buffer names just read or written, for the next report
  defined = false,
  preview_win = nil, -- the float of preview(), while it may be open
}

local function notify(msg, level)
  vim.notify("mcpdiff: " .. msg, level or vim.log.levels.INFO)
end

-- What the Go side sends of a change an edit of the history made, wherever it lies:
-- its edit and what it did (luaChange in nvim/review.go).
---@class mcpdiff.EditChange
---@field edit_id string
---@field conversation_id string
---@field title string the conversation's title, or ""
---@field tool string the agent's tool that made the edit
---@field time string when, RFC 3339
---@field block integer which change of the edit, from 1
---@field kind "add"|"change"|"delete"
---@field old_lines string[] the lines the change replaced (no line ends)

-- A pending change of a file (what the signs and changes() show) as the Go side sends
-- it (luaPending in nvim/review.go), in the lines of the file on disk.
---@class mcpdiff.PendingChange: mcpdiff.EditChange
---@field start_line integer
---@field end_line integer
---@field after_line? integer a deletion: the line its lines were below (0: the top)
---@field beneath? mcpdiff.EditChange[] pending changes this one overwrote

-- What the Go side pushes when stores change (rpc.lua's "changes._update").
---@class mcpdiff.ChangesUpdate
---@field files {name: string, changes: mcpdiff.PendingChange[]}[] new pending changes of open buffers
---@field reload string[] buffer names to reload when the file changed under them
---@field workspaces string[] workspaces whose store changed

-- define creates the highlight groups (linked with default, so a colour scheme can
-- set them) and the signs, once.
function M.define()
  if state.defined then
    return
  end
  state.defined = true
  local new = vim.fn.hlexists("Added") == 1 -- Neovim 0.10's diff colours
  local links = {
    McpDiffSignAdd = new and "Added" or "DiffAdd",
    McpDiffSignChange = new and "Changed" or "DiffChange",
    McpDiffSignDelete = new and "Removed" or "DiffDelete",
  }
  for group, link in pairs(links) do
    api.nvim_set_hl(0, group, { link = link, default = true })
  end
  vim.fn.sign_define("McpDiffAdd", { text = "+", texthl = "McpDiffSignAdd" })
  vim.fn.sign_define("McpDiffChange", { text = "~", texthl = "McpDiffSignChange" })
  vim.fn.sign_define("McpDiffDelete", { text = "_", texthl = "McpDiffSignDelete" })
end

-- file_name is the name of buf when it is a loaded file buffer, else nil.
local function file_name(buf)
  if
    not api.nvim_buf_is_valid(buf)
    or not api.nvim_buf_is_loaded(buf)
    or vim.bo[buf].buftype ~= ""
  then
    return nil
  end
  local name = api.nvim_buf_get_name(buf)
  if name == "" then
    return nil
  end
  return name
end

local define = M.define

local function buffers_by_name()
  local out = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = file_name(buf)
    if name then
      out[name] = buf
    end
  end
  return out
end

-- send_report tells the bridge which files are open and which were just read or
-- written.
local send_report = require("mcpdiff.once")(function()
  local names, fresh = {}, {}
  for n in pairs(buffers_by_name()) do
    table.insert(names, n)
    if state.fresh[n] then
      table.insert(fresh, n)
    end
  end
  for n in pairs(state.by_name) do
    if not vim.tbl_contains(names, n) then
      state.by_name[n] = nil
    end
  end
  state.fresh = {}
  require("mcpdiff.bridge").notify_go("mcpdiff_buffers", vim.fn.getcwd(), names, fresh)
end)

-- report tells the bridge which files are open (once per turn of the event loop).
-- fresh_buf, when given, was just read or written: it holds what is on disk.
function M.report(fresh_buf)
  local name = fresh_buf and file_name(fresh_buf)
  if name then
    state.fresh[name] = true
  end
  send_report()
end

-- attach starts following the open files; called once the bridge runs.
function M.attach()
  define()
  local group = api.nvim_create_augroup("mcpdiff_pending", { clear = true })
  api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "BufFilePost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      M.report(args.buf)
    end,
  })
  api.nvim_create_autocmd({ "BufUnload", "BufWipeout", "DirChanged" }, {
    group = group,
    callback = function()
      M.report()
    end,
  })
  for _, buf in pairs(buffers_by_name()) do
    M.report(buf)
  end
end

-- Positions of changes through a line diff (vim.diff's indices), 0-based boundaries.
local function mapper(indices)
  local edits = {}
  for _, d in ipairs(indices) do
    local sa, ca, sb, cb = d[1], d[2], d[3], d[4]
    local old_start = (ca == 0) and sa or sa - 1
    local new_start = (cb == 0) and sb or sb - 1
    table.insert(edits, { old_start, old_start + ca, new_start, new_start + cb })
  end
  -- map moves a boundary; an insertion right at a change's edge stays outside it.
  return function(pos, is_end)
    local delta = 0
    for _, e in ipairs(edits) do
      if e[1] == e[2] and e[1] == pos then
        return is_end and e[3] or e[4]
      elseif e[2] <= pos then
        delta = e[4] - e[2]
      elseif e[1] < pos then
        return is_end and e[4] or e[3]
      else
        break
      end
    end
    return pos + delta
  end
end

-- through_unsaved moves changes (lines on disk) to the lines of buf, which has unsaved
-- changes. Those whose lines are all gone from the buffer are left out.
local function through_unsaved(buf, name, changes)
  local disk = require("mcpdiff.buffers").read(name)
  if not disk then
    return changes
  end
  if vim.bo[buf].fileformat == "dos" then
    disk = disk:gsub("\r\n", "\n")
  end
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
  if disk == text then
    return changes
  end
  local map = mapper(vim.diff(disk, text, { result_type = "indices" }))
  local out = {}
  for _, h in ipairs(changes) do
    local c = vim.deepcopy(h)
    if h.kind == "delete" then
      local at = map(h.after_line or h.start_line, false)
      c.after_line, c.start_line, c.end_line = at, math.max(at, 1), math.max(at, 1)
      table.insert(out, c)
    else
      local a, b = map(h.start_line - 1, false), map(h.end_line, true)
      if b > a then
        c.start_line, c.end_line = a + 1, b
        table.insert(out, c)
      end
    end
  end
  table.sort(out, function(x, y)
    return x.start_line < y.start_line or (x.start_line == y.start_line and x.end_line < y.end_line)
  end)
  return out
end

-- raw returns the changes of a file as on disk, asking the bridge when it sent none yet.
---@return mcpdiff.PendingChange[]
local function raw(name)
  local changes = state.by_name[name]
  if changes == nil then
    changes = require("mcpdiff.bridge").request("mcpdiff_changes", name)
    -- While Neovim waited for the answer, the bridge may have pushed newer changes
    -- (Neovim runs the bridge's requests meanwhile): those win.
    if state.by_name[name] ~= nil then
      return state.by_name[name]
    end
    if type(changes) ~= "table" then
      return {}
    end
    state.by_name[name] = changes
  end
  return changes
end

-- changes returns the pending changes of buf (0 or nil: the current buffer) in its lines
-- as they are now: tables with edit_id, conversation_id, tool, time, block (the
-- change of the edit, from 1), start_line, end_line, kind ("add", "change",
-- "delete") and old_lines (what the change replaced), and beneath (when pending
-- changes lie under this one: they wrote the lines it replaced; each with the same
-- fields but the lines). A deletion's lines are gone: it sits on the line above
-- them (after_line; 0 when they were at the top, shown on 1).
---@return mcpdiff.PendingChange[]
function M.changes(buf)
  return vim.deepcopy(M.current(buf))
end

-- current is changes() without the copy: the caller must not change what it gets.
function M.current(buf)
  if buf == nil or buf == 0 then
    buf = api.nvim_get_current_buf()
  end
  local name = file_name(buf)
  if not name then
    return {}
  end
  local changes = raw(name)
  if vim.bo[buf].modified then
    return through_unsaved(buf, name, changes)
  end
  return changes
end

-- render places the signs of buf.
function M.render(buf)
  define()
  vim.fn.sign_unplace(SIGN_GROUP, { buffer = buf })
  if not require("mcpdiff.config").values.signs then
    return
  end
  -- One sign per line: where changes share a line (a deletion sits on the line
  -- above it), the later one's, which Neovim showed of the two.
  local list, at_line = {}, {}
  local last = api.nvim_buf_line_count(buf)
  for _, h in ipairs(M.current(buf)) do
    local name = h.kind == "add" and "McpDiffAdd"
      or h.kind == "delete" and "McpDiffDelete"
      or "McpDiffChange"
    for lnum = h.start_line, math.min(h.end_line, last) do
      local sign =
        { buffer = buf, group = SIGN_GROUP, name = name, lnum = lnum, priority = SIGN_PRIORITY }
      if at_line[lnum] then
        list[at_line[lnum]] = sign
      else
        table.insert(list, sign)
        at_line[lnum] = #list
      end
    end
  end
  if #list > 0 then
    vim.fn.sign_placelist(list)
  end
end

-- _update is called by the bridge: new changes of open files, the open files of
-- stores that changed (reloaded by buffers.lua's rule), and the workspaces whose
-- store changed. It must make no request to the bridge.
---@param p mcpdiff.ChangesUpdate
function M._update(p)
  if type(p.reload) == "table" and #p.reload > 0 then
    require("mcpdiff.buffers").reload(p.reload) -- first: a reload redraws the buffer
  end
  local bufs = buffers_by_name()
  for _, f in ipairs(type(p.files) == "table" and p.files or {}) do
    state.by_name[f.name] = type(f.changes) == "table" and f.changes or {}
    if bufs[f.name] then
      M.render(bufs[f.name])
    end
  end
  if type(p.workspaces) == "table" and #p.workspaces > 0 then
    local review = package.loaded["mcpdiff.review"]
    if review then
      -- Not now: this runs inside the bridge's request, and a request of ours to it
      -- from here could be answered out of order (Neovim then drops the channel).
      vim.schedule(function()
        review.store_changed(p.workspaces)
      end)
    end
  end
end

-- redraw places the signs of every file buffer again (after the option signs changed).
function M.redraw()
  for _, buf in pairs(buffers_by_name()) do
    M.render(buf)
  end
end

-- refresh asks the bridge again for the changes of buf and redraws its signs.
function M.refresh(buf)
  local name = file_name(buf)
  if name then
    state.by_name[name] = nil
    M.render(buf)
  end
end

-- at_line returns the changes of the current buffer on line (a change and the
-- deletion below it can share one).
local function at_line(line)
  local out = {}
  for _, h in ipairs(M.current(0)) do
    if h.start_line <= line and line <= h.end_line then
      table.insert(out, h)
    end
  end
  return out
end

-- jump moves the cursor to the next (dir 1) or previous (dir -1) pending change,
-- wrapping around the end of the buffer when 'wrapscan' is set.
function M.jump(dir)
  local changes = M.current(0)
  if #changes == 0 then
    notify("no pending edits in this buffer", vim.log.levels.WARN)
    return false
  end
  local line = api.nvim_win_get_cursor(0)[1]
  local target
  if dir > 0 then
    for _, h in ipairs(changes) do
      if h.start_line > line then
        target = h
        break
      end
    end
  else
    for i = #changes, 1, -1 do
      if changes[i].start_line < line then
        target = changes[i]
        break
      end
    end
  end
  if not target then
    if not vim.o.wrapscan then
      notify(
        dir > 0 and "no pending change below" or "no pending change above",
        vim.log.levels.WARN
      )
      return false
    end
    target = dir > 0 and changes[1] or changes[#changes]
  end
  vim.cmd("normal! m'")
  api.nvim_win_set_cursor(0, { target.start_line, 0 })
  return true
end

local function short(id)
  id = tostring(id or "")
  if #id > 8 and select(2, id:gsub("-", "")) == 4 then
    return id:sub(1, 8)
  end
  return id
end

local function when(ts)
  local d, t = tostring(ts or ""):match("^(%d+%-%d+%-%d+)T(%d+:%d+:%d+)")
  return d and (d .. " " .. t) or tostring(ts or "")
end

-- preview_lines is what the preview of change h shows; under: the change it lies
-- beneath, when h is one of its pending changes overwritten since (beneath).
function M.preview_lines(h, under)
  local where
  if under then
    where = "under edit " .. short(under.edit_id)
  elseif h.start_line == h.end_line then
    where = "line " .. h.start_line
  else
    where = "lines " .. h.start_line .. "-" .. h.end_line
  end
  local lines = {
    ("edit %s (%s), conversation %s"):format(
      short(h.edit_id),
      tostring(h.tool or ""),
      tostring(h.conversation_id)
    ),
    ("%s, %s, pending, change %d of the edit"):format(when(h.time), where, h.block or 0),
  }
  if type(h.title) == "string" and h.title ~= "" then
    table.insert(lines, 2, "prompt: " .. h.title)
  end
  if h.kind == "add" then
    table.insert(lines, "added these lines; nothing was there before")
  elseif h.kind == "delete" then
    table.insert(
      lines,
      under and "removed these lines:" or ("removed these lines below line " .. h.start_line .. ":")
    )
  else
    table.insert(lines, "replaced these lines:")
  end
  for _, l in ipairs(h.old_lines or {}) do
    table.insert(lines, "-" .. l)
  end
  return lines
end

-- preview_text is what the preview of line shows: each pending change of the line
-- (changes at it), each followed by the pending changes beneath it, newest first.
local function preview_text(changes, line)
  local parts = {}
  for _, h in ipairs(changes) do
    table.insert(parts, M.preview_lines(h))
    local beneath = type(h.beneath) == "table" and h.beneath or {}
    for i = #beneath, 1, -1 do
      table.insert(parts, M.preview_lines(beneath[i], h))
    end
  end
  if #parts == 1 then
    return parts[1]
  end
  local lines = { ("%d pending changes on line %d, newest first:"):format(#parts, line) }
  for _, p in ipairs(parts) do
    table.insert(lines, "")
    vim.list_extend(lines, p)
  end
  return lines
end

-- float_place is where a float of height lines (plus its border) goes next to the
-- cursor without covering the cursor's line: below it, or above it when there is
-- more room there; and how many lines of text fit.
local function float_place(height)
  local row = vim.fn.win_screenpos(0)[1] + vim.fn.winline() - 1 -- the cursor's screen row
  local below = vim.o.lines - vim.o.cmdheight - row
  local above = row - 1
  if below >= height + 2 or below >= above then
    return { row = 1, anchor = "NW", height = math.max(math.min(height, below - 2), 1) }
  end
  return { row = 0, anchor = "SW", height = math.max(math.min(height, above - 2), 1) }
end

-- preview shows every pending change of the cursor's line in a floating window, next
-- to the line (never over it), that closes when the cursor moves. Returns the
-- window, or nil when there is no pending change there.
function M.preview()
  -- One preview at a time: the next one replaces it (its autocmds go with the group).
  if state.preview_win and api.nvim_win_is_valid(state.preview_win) then
    api.nvim_win_close(state.preview_win, true)
  end
  local line = api.nvim_win_get_cursor(0)[1]
  local changes = at_line(line)
  if #changes == 0 then
    notify("no pending edit on this line", vim.log.levels.WARN)
    return nil
  end
  local lines = preview_text(changes, line)
  local width = 10
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = "diff"
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe" -- closing the float is the end of it
  local place = float_place(#lines)
  local win = api.nvim_open_win(buf, false, {
    relative = "cursor",
    row = place.row,
    col = 0,
    anchor = place.anchor,
    width = math.min(width, math.max(vim.o.columns - 4, 10)),
    height = place.height,
    style = "minimal",
    border = "single",
  })
  state.preview_win = win
  vim.b[buf].mcpdiff_preview = changes[1].edit_id
  local group = api.nvim_create_augroup("mcpdiff_preview", { clear = true })
  api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "BufLeave", "InsertEnter" }, {
    group = group,
    buffer = api.nvim_get_current_buf(),
    once = true,
    callback = function()
      if api.nvim_win_is_valid(win) then
        api.nvim_win_close(win, true)
      end
    end,
  })
  return win
end

-- quickfix fills the quickfix list with one entry per pending change of the edit
-- history of the working directory, and opens it.
function M.quickfix()
  ---@type {path: string, changes: mcpdiff.PendingChange[]}[]?
  local files = require("mcpdiff.bridge").request("mcpdiff_pending", vim.fn.getcwd())
  if type(files) ~= "table" then
    notify(
      "the pending changes come from the bridge, which is not running: :McpDiffStart",
      vim.log.levels.ERROR
    )
    return nil
  end
  local bufs = buffers_by_name()
  local items = {}
  for _, f in ipairs(files) do
    local changes, buf = f.changes, bufs[f.path]
    if buf and vim.bo[buf].modified then -- its lines as they are in the buffer
      changes = through_unsaved(buf, f.path, f.changes)
    end
    for _, h in ipairs(changes) do
      table.insert(items, {
        filename = f.path,
        lnum = h.start_line,
        end_lnum = h.end_line,
        col = 1,
        text = ("%s: edit %s (%s, %s)"):format(
          h.kind,
          short(h.edit_id),
          tostring(h.tool or ""),
          tostring(h.conversation_id)
        ),
      })
    end
  end
  table.sort(items, function(a, b)
    return a.filename < b.filename or (a.filename == b.filename and a.lnum < b.lnum)
  end)
  vim.fn.setqflist({}, " ", { title = "mcpdiff: pending edits", items = items })
  if #items == 0 then
    notify("no pending edits under " .. vim.fn.fnamemodify(vim.fn.getcwd(), ":~"))
  else
    vim.cmd("botright copen")
  end
  return #items
end

-- touched returns the changes of buf touching lines l1..l2 (of the buffer as it is).
function M.touched(buf, l1, l2)
  local out = {}
  for _, h in ipairs(M.current(buf)) do
    if h.start_line <= l2 and h.end_line >= l1 then
      table.insert(out, h)
    end
  end
  return out
end

return M
