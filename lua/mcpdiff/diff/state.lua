-- What every part of a diff view shares: the open views (one table each, kept for
-- the view's life) and a few small helpers.
local M = {}

local api = vim.api

M.views = {} -- tab name -> view
M.staged = {} -- tab name -> {buf, req} between prepare() and show()
M.by_buf = {} -- proposal buffer -> tab name

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

-- is_pending tells whether view is still shown and waiting for the user (a view
-- replaced by a diff of the same tab name is not).
function M.is_pending(view)
  return M.views[view.tab] == view and view.status == "pending"
end

return M
