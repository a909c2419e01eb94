-- Selection tracking (selection_changed) and @-mentions (at_mentioned) for Claude Code.
-- Lines are 0-based, characters are byte columns, as Claude Code counts them.
local M = {}

local api = vim.api
local uv = vim.uv or vim.loop
local bridge = require("mcpdiff.bridge")

local DEBOUNCE_MS = 100
local CTRL_V = "\22"

local state = {
  active = false,
  group = nil,
  timer = nil,
  last_key = nil, -- what was sent last, to send only changes
  latest = nil, -- the last selection sent (getLatestSelection)
  kept = nil, -- {buf, line, col}: a visual selection just left, kept until the cursor moves
}

local function file_url(path)
  return "file://" .. path
end

-- char_end returns the byte column just after the character starting at col (1-based).
local function char_end(line, col)
  local byte = line:byte(col)
  if not byte then
    return #line
  end
  local len = byte >= 0xF0 and 4 or byte >= 0xE0 and 3 or byte >= 0xC0 and 2 or 1
  return math.min(col - 1 + len, #line)
end

local function line_at(buf, lnum)
  return api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1] or ""
end

local function ordered(p1, p2)
  if p1[1] > p2[1] or (p1[1] == p2[1] and p1[2] > p2[2]) then
    return p2, p1
  end
  return p1, p2
end

local function make(buf, text, sl, sc, el, ec)
  local path = api.nvim_buf_get_name(buf)
  return {
    text = text,
    filePath = path,
    fileUrl = file_url(path),
    selection = {
      start = { line = sl, character = sc },
      ["end"] = { line = el, character = ec },
      isEmpty = text == "",
    },
  }
end

-- visual builds the selection between two {line, col} positions (1-based) in a mode.
local function visual(buf, mode, p1, p2)
  local s, e = ordered(p1, p2)
  if mode == "V" then
    local last = line_at(buf, e[1])
    local lines = api.nvim_buf_get_lines(buf, s[1] - 1, e[1], false)
    return make(buf, table.concat(lines, "\n"), s[1] - 1, 0, e[1] - 1, #last)
  end
  if mode == CTRL_V then
    local c1, c2 = math.min(p1[2], p2[2]), math.max(p1[2], p2[2])
    local parts = {}
    local end_col = 0
    for lnum = s[1], e[1] do
      local line = line_at(buf, lnum)
      local stop = char_end(line, c2)
      end_col = stop
      table.insert(parts, line:sub(c1, stop))
    end
    return make(buf, table.concat(parts, "\n"), s[1] - 1, c1 - 1, e[1] - 1, end_col)
  end
  local stop = char_end(line_at(buf, e[1]), e[2])
  local sc = math.min(s[2] - 1, #line_at(buf, s[1]))
  local text = table.concat(api.nvim_buf_get_text(buf, s[1] - 1, sc, e[1] - 1, stop, {}), "\n")
  return make(buf, text, s[1] - 1, sc, e[1] - 1, stop)
end

local function trackable(buf)
  return vim.bo[buf].buftype == "" and api.nvim_buf_get_name(buf) ~= ""
end

-- current computes the selection of the current window, or nil where none is tracked
-- (terminals, scratch and unnamed buffers).
function M.current()
  local buf = api.nvim_get_current_buf()
  if not trackable(buf) then
    return nil
  end
  local mode = api.nvim_get_mode().mode
  if mode == "v" or mode == "V" or mode == CTRL_V then
    local v = vim.fn.getpos("v")
    local c = vim.fn.getpos(".")
    return visual(buf, mode, { v[2], v[3] }, { c[2], c[3] })
  end
  local cur = api.nvim_win_get_cursor(0)
  return make(buf, "", cur[1] - 1, cur[2], cur[1] - 1, cur[2])
end

local function key_of(sel)
  local s = sel.selection
  return table.concat(
    { sel.filePath, s.start.line, s.start.character, s["end"].line, s["end"].character, sel.text },
    "\0"
  )
end

local function send(sel)
  local key = key_of(sel)
  if key == state.last_key then
    return
  end
  state.last_key = key
  state.latest = sel
  bridge.notify_go("mcpdiff_selection", sel)
end

local function update()
  if not state.active then
    return
  end
  local sel = M.current()
  if not sel then
    return
  end
  local kept = state.kept
  if kept and sel.text == "" then
    local cur = api.nvim_win_get_cursor(0)
    if kept.buf == api.nvim_get_current_buf() and kept.line == cur[1] and kept.col == cur[2] then
      return -- keep the visual selection the user just made
    end
  end
  state.kept = nil
  send(sel)
end

local function schedule_update()
  state.timer = state.timer or uv.new_timer()
  state.timer:stop()
  state.timer:start(DEBOUNCE_MS, 0, vim.schedule_wrap(update))
end

-- on_visual_left sends a visual selection at once when visual mode ends, so that
-- going to the Claude terminal right after keeps it (claudecode.nvim #246).
local function on_visual_left()
  local buf = api.nvim_get_current_buf()
  if not trackable(buf) then
    return
  end
  local s, e = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if s[2] == 0 then
    return
  end
  local mode = vim.fn.visualmode()
  if mode == "V" then
    e[3] = 1
  end
  if state.timer then
    state.timer:stop()
  end
  local cur = api.nvim_win_get_cursor(0)
  state.kept = { buf = buf, line = cur[1], col = cur[2] }
  send(visual(buf, mode, { s[2], s[3] }, { e[2], e[3] }))
end

-- set_active turns tracking on while a client is connected (and track_selection is on).
function M.set_active(on)
  if on == state.active then
    return
  end
  state.active = on
  if not on then
    if state.timer then
      state.timer:stop()
    end
    pcall(api.nvim_del_augroup_by_id, state.group)
    state.group, state.last_key, state.kept = nil, nil, nil
    return
  end
  state.group = api.nvim_create_augroup("mcpdiff_selection", { clear = true })
  api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "BufEnter", "TextChanged" }, {
    group = state.group,
    callback = schedule_update,
  })
  api.nvim_create_autocmd("ModeChanged", {
    group = state.group,
    callback = function()
      local old = vim.v.event.old_mode or ""
      local first = old:sub(1, 1)
      if first == "v" or first == "V" or first == CTRL_V then
        on_visual_left()
      else
        schedule_update()
      end
    end,
  })
  schedule_update()
end

-- latest returns the last selection sent (nil when none).
function M.latest()
  return state.latest
end

local function relative_to_cwd(path)
  local cwd = vim.fn.getcwd()
  if path == cwd then
    return "./"
  end
  if path:sub(1, #cwd + 1) == cwd .. "/" then
    return path:sub(#cwd + 2)
  end
  return path
end

-- mention sends an at_mentioned for the current file, with its 1-based line range
-- (line1..line2) when has_range. Paths under the cwd are sent relative to it.
function M.mention(line1, line2, has_range)
  local buf = api.nvim_get_current_buf()
  if not trackable(buf) then
    vim.notify(
      "mcpdiff: this buffer is not a file; open the file to send first",
      vim.log.levels.WARN
    )
    return false
  end
  if not bridge.running() then
    vim.notify(
      "mcpdiff: the bridge is not running; start it with :McpDiffStart",
      vim.log.levels.WARN
    )
    return false
  end
  local params = { filePath = relative_to_cwd(api.nvim_buf_get_name(buf)) }
  if has_range then
    params.lineStart = math.min(line1, line2) - 1
    params.lineEnd = math.max(line1, line2) - 1
  end
  bridge.notify_go("mcpdiff_mention", params)
  return true
end

return M
