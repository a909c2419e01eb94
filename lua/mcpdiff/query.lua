-- Editor state for the IDE tools that only look (or open a file). The Go side turns
-- these tables into the exact JSON texts of the protocol.
local M = {}

local api = vim.api

-- openFile's arguments as the Go side passes them on (nvim/query.go): the
-- protocol's names, those the client left out absent.
---@class mcpdiff.OpenFileArgs
---@field filePath string absolute (rpc.lua expands it)
---@field makeFrontmost boolean
---@field startLine? integer
---@field endLine? integer
---@field startText? string
---@field endText? string
---@field selectToEndOfLine? boolean

local severities = { "Error", "Warning", "Info", "Hint" }

local function file_buffer(path)
  return require("mcpdiff.diff").file_buffer(path)
end

-- loaded_buffer is path's buffer when it is loaded, else nil.
local function loaded_buffer(path)
  local buf = file_buffer(path)
  if buf and api.nvim_buf_is_loaded(buf) then
    return buf
  end
end

local function language_id(buf)
  local ft = vim.bo[buf].filetype
  return ft ~= "" and ft or "plaintext"
end

-- main_window is the window openFile shows the file in: the same choice as the diff
-- view's (mcpdiff.window), a new split when the tab has no window fit for a file.
local function main_window()
  local window = require("mcpdiff.window")
  return window.find(nil) or window.make_room()
end

-- find_text returns the 1-based {line, col} of the first plain match of text at or
-- after line `from`, or nil.
local function find_text(buf, text, from)
  local lines = api.nvim_buf_get_lines(buf, from - 1, -1, false)
  for i, line in ipairs(lines) do
    local col = line:find(text, 1, true)
    if col then
      return { from + i - 1, col }
    end
  end
  return nil
end

local function select_range(s, e)
  -- Visual mode cannot survive an API call; gv after it returns re-selects.
  vim.fn.setpos("'<", { 0, s[1], s[2], 0 })
  vim.fn.setpos("'>", { 0, e[1], e[2], 0 })
  api.nvim_win_set_cursor(0, { s[1], s[2] - 1 })
  api.nvim_feedkeys("gv", "n", false)
end

-- open_file implements openFile. args: filePath (expanded, exists), preview,
-- startLine, endLine, startText, endText, selectToEndOfLine, makeFrontmost.
-- Returns {message} when frontmost, else {languageId, lineCount}.
---@param args mcpdiff.OpenFileArgs
function M.open_file(args)
  local path = args.filePath
  if args.makeFrontmost == false then
    local buf = loaded_buffer(path)
    if buf then
      return { languageId = language_id(buf), lineCount = api.nvim_buf_line_count(buf) }
    end
    local ft = require("mcpdiff.window").filetype_of(path)
    return { languageId = ft or "plaintext", lineCount = #vim.fn.readfile(path) }
  end
  local win = main_window()
  api.nvim_set_current_win(win)
  local buf = file_buffer(path)
  if buf then
    vim.cmd("buffer " .. buf)
  else
    buf = require("mcpdiff.window").show_file(path)
  end
  local count = api.nvim_buf_line_count(buf)
  local start_text = args.startText ~= "" and args.startText or nil
  local end_text = args.endText ~= "" and args.endText or nil
  if args.startLine then
    local s = math.max(1, math.min(args.startLine, count))
    local e = math.max(s, math.min(args.endLine or s, count))
    local last = api.nvim_buf_get_lines(buf, e - 1, e, false)[1] or ""
    select_range({ s, 1 }, { e, math.max(#last, 1) })
    return {
      message = ("Opened file and selected lines %d to %d"):format(
        args.startLine,
        args.endLine or args.startLine
      ),
    }
  end
  if not start_text then
    return { message = "Opened file: " .. path }
  end
  local s = find_text(buf, start_text, 1)
  if not s then
    return { message = ('Opened file, but text "%s" not found'):format(start_text) }
  end
  local s_end = { s[1], s[2] + #start_text - 1 }
  if not end_text then
    if args.selectToEndOfLine then
      local line = api.nvim_buf_get_lines(buf, s[1] - 1, s[1], false)[1]
      s_end = { s[1], math.max(#line, 1) }
    end
    select_range(s, s_end)
    return { message = ('Opened file and selected text "%s"'):format(start_text) }
  end
  local e = find_text(buf, end_text, s[1] + 1)
  if not e then
    api.nvim_win_set_cursor(0, { s[1], s[2] - 1 })
    return {
      message = ('Opened file and positioned at "%s" (end text "%s" not found)'):format(
        start_text,
        end_text
      ),
    }
  end
  local e_end = { e[1], e[2] + #end_text - 1 }
  if args.selectToEndOfLine then
    local line = api.nvim_buf_get_lines(buf, e[1] - 1, e[1], false)[1]
    e_end = { e[1], math.max(#line, 1) }
  end
  select_range(s, e_end)
  return {
    message = ('Opened file and selected text from "%s" to "%s"'):format(start_text, end_text),
  }
end

local function diagnostics_of(buf)
  local out = {}
  local ok, list = pcall(vim.diagnostic.get, buf)
  if not ok then
    return out
  end
  for _, d in ipairs(list) do
    local end_lnum = d.end_lnum or d.lnum
    local end_col = d.end_col or (d.col + 1)
    table.insert(out, {
      message = d.message,
      severity = severities[d.severity] or "Error",
      source = d.source,
      code = d.code ~= nil and tostring(d.code) or nil,
      range = {
        start = { line = d.lnum, character = d.col },
        ["end"] = { line = end_lnum, character = end_col },
      },
    })
  end
  return out
end

-- diagnostics implements getDiagnostics. With a path: {files = [...]} or
-- {not_open = true} when no buffer has that file. Without: every buffer with
-- diagnostics.
function M.diagnostics(path)
  if path then
    local buf = loaded_buffer(path)
    if not buf then
      return { not_open = true }
    end
    return { files = { { path = path, diagnostics = diagnostics_of(buf) } } }
  end
  local files = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local list = diagnostics_of(buf)
      local name = api.nvim_buf_get_name(buf)
      if #list > 0 and name ~= "" then
        table.insert(files, { path = name, diagnostics = list })
      end
    end
  end
  return { files = files }
end

-- selection returns the latest tracked selection, and whether the current buffer
-- has a name (for getCurrentSelection's fallback).
function M.selection()
  local buf = api.nvim_get_current_buf()
  return {
    latest = require("mcpdiff.selection").latest(),
    current_path = api.nvim_buf_get_name(buf),
  }
end

-- open_editors implements getOpenEditors: every loaded, listed, named buffer.
function M.open_editors()
  local current = api.nvim_get_current_buf()
  local tabnr = api.nvim_tabpage_get_number(0)
  local latest = require("mcpdiff.selection").latest()
  local tabs = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(buf)
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buflisted and name ~= "" then
      local entry = {
        path = name,
        active = buf == current,
        dirty = vim.bo[buf].modified,
        label = vim.fn.fnamemodify(name, ":t"),
        tab = tabnr,
        languageId = language_id(buf),
        lineCount = api.nvim_buf_line_count(buf),
        untitled = false,
      }
      if buf == current and latest and latest.filePath == name then
        entry.selection = latest.selection
      end
      table.insert(tabs, entry)
    end
  end
  return tabs
end

-- document implements checkDocumentDirty: whether the file's buffer has unsaved
-- changes; with save, saveDocument: :write in that buffer.
function M.document(path, save)
  local buf = loaded_buffer(path)
  if not buf then
    return { open = false }
  end
  if not save then
    return { open = true, dirty = vim.bo[buf].modified, untitled = api.nvim_buf_get_name(buf) == "" }
  end
  local ok, err = pcall(api.nvim_buf_call, buf, function()
    vim.cmd("write")
  end)
  return { open = true, saved = ok, error = not ok and tostring(err) or nil }
end

return M
