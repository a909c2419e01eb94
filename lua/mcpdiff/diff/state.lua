-- What every part of a diff view shares: the open views (one table each, kept for
-- the view's life) and a few small helpers.
local M = {}

local api = vim.api

-- Keyed by the proposal buffer, never reused: two views of one tab name (a newer
-- openDiff while the IDE server tears the older down) are two views. Which view a
-- tab name names, and when a newer diff replaces one, is the IDE server's to say.
M.views = {} -- proposal buffer -> view
M.staged = {} -- proposal buffer -> {buf, req, inline} between prepare() and show()

function M.cfg()
  return require("mcpdiff.config").values
end

function M.valid_win(w)
  return w and api.nvim_win_is_valid(w)
end

function M.valid_buf(b)
  return b and api.nvim_buf_is_valid(b)
end

function M.wipe(b)
  if M.valid_buf(b) then
    pcall(api.nvim_buf_delete, b, { force = true })
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

-- is_pending tells whether view is still shown and waiting for the user.
function M.is_pending(view)
  return M.views[view.buf] == view and view.status == "pending"
end

return M
