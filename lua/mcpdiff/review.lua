-- :McpDiffStatus: the bridge status and the edit history, per conversation and per
-- edit, with keys to show, accept and reject the edit under the cursor.
local M = {}

local api = vim.api

local BUF_NAME = "mcpdiff://status"

local state = {
  buf = nil,
  cwd = nil,
  entries_by_line = {}, -- line number -> history entry
}

local function str(v)
  if v == nil or v == vim.NIL then
    return ""
  end
  return tostring(v)
end

local function relative(path, cwd)
  path = str(path)
  if path:sub(1, #cwd + 1) == cwd .. "/" then
    return path:sub(#cwd + 2)
  end
  return path
end

local function short_time(ts)
  -- 2026-11-22T05:25:31.123Z -> 2026-11-22 05:25:31
  local d, t = str(ts):match("^(%d+%-%d+%-%d+)T(%d+:%d+:%d+)")
  return d and (d .. " " .. t) or str(ts)
end

local function bridge_lines()
  local bridge = require("mcpdiff.bridge")
  local info = bridge.info()
  if not info then
    return { "Bridge: not running (:McpDiffStart)" }
  end
  local status = bridge.status() or {}
  local clients = type(status.clients) == "table" and #status.clients or bridge.clients()
  local lines = { ("Bridge: listening on 127.0.0.1:%d, %d client(s) connected"):format(info.port, clients) }
  for _, d in ipairs(type(status.diffs) == "table" and status.diffs or {}) do
    table.insert(lines, ("  diff %-8s  %s  %s"):format(str(d.status), relative(d.path, state.cwd), str(d.tabName)))
  end
  return lines
end

-- group_entries orders entries per conversation (first edit time), then per edit.
local function group_entries(list)
  local convs, order = {}, {}
  for _, e in ipairs(list) do
    local id = str(e.conversation_id)
    if not convs[id] then
      convs[id] = {}
      table.insert(order, id)
    end
    table.insert(convs[id], e)
  end
  for _, id in ipairs(order) do
    table.sort(convs[id], function(a, b)
      local sa, sb = tonumber(a.seq) or 0, tonumber(b.seq) or 0
      if sa ~= sb then
        return sa < sb
      end
      return (tonumber(a.tool_call_index) or 0) < (tonumber(b.tool_call_index) or 0)
    end)
  end
  table.sort(order, function(a, b)
    return str(convs[a][1].timestamp) < str(convs[b][1].timestamp)
  end)
  return convs, order
end

local function render(entries, err, warnings)
  local buf = state.buf
  if not buf or not api.nvim_buf_is_valid(buf) then
    return
  end
  local lines = bridge_lines()
  table.insert(lines, "")
  -- Files that differ from their history come first: what the list says about them
  -- is not what they hold.
  for _, w in ipairs(warnings or {}) do
    table.insert(lines, "Warning: " .. w)
  end
  if warnings and #warnings > 0 then
    table.insert(lines, "")
  end
  local by_line = {}
  if err then
    table.insert(lines, "History: " .. err)
  elseif not entries then
    table.insert(lines, "History: loading…")
  elseif #entries == 0 then
    table.insert(lines, "History: no recorded edits under " .. state.cwd)
  else
    local convs, order = group_entries(entries)
    for _, id in ipairs(order) do
      table.insert(lines, ("Conversation %s (%d)"):format(id, #convs[id]))
      for _, e in ipairs(convs[id]) do
        table.insert(lines, ("  %s  %s  %-8s  %-7s  %s"):format(
          str(e.edit_id):sub(1, 8),
          short_time(e.timestamp),
          str(e.status),
          str(e.operation),
          relative(e.file_path, state.cwd)
        ))
        by_line[#lines] = e
      end
    end
  end
  table.insert(lines, "")
  table.insert(lines, "<CR> show diff · a accept · r reject · R refresh · q close")
  state.entries_by_line = by_line
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

-- refresh redraws the status and reloads the history.
function M.refresh()
  render(nil)
  require("mcpdiff.history").entries(state.cwd, function(list, err, warnings)
    render(list, err, warnings)
  end)
end

local function entry_under_cursor()
  local line = api.nvim_win_get_cursor(0)[1]
  local e = state.entries_by_line[line]
  if not e then
    vim.notify("mcpdiff: no edit on this line", vim.log.levels.WARN)
  end
  return e
end

local function resolve(action)
  local e = entry_under_cursor()
  if e then
    require("mcpdiff.history").resolve(action, str(e.edit_id), { cwd = state.cwd, on_done = M.refresh })
  end
end

local function set_keymaps(buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = "mcpdiff: " .. desc })
  end
  map("<CR>", function()
    local e = entry_under_cursor()
    if e then
      require("mcpdiff.history").show(str(e.edit_id), state.cwd)
    end
  end, "show the diff of this edit")
  map("a", function()
    resolve("accept")
  end, "accept this edit")
  map("r", function()
    resolve("reject")
  end, "reject this edit")
  map("R", M.refresh, "refresh")
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
    state.buf = buf
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
  M.refresh()
  return state.buf
end

return M
