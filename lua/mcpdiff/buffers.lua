-- Reloading file buffers after something outside Neovim changed the files, and
-- asking whether any is modified. Self-contained: the Go side runs this same file
-- (embedded in the binary) in any Neovim `mcpdiff serve` talks to, plugin or not.
local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

local function realpath(p)
  return (uv.fs_realpath(p)) or p
end

-- buffers_of returns the loaded normal buffers of the given files, comparing
-- resolved paths (symlinks).
function M.buffers_of(paths)
  local wanted = {}
  for _, p in ipairs(paths) do
    wanted[realpath(p)] = true
    wanted[p] = true
  end
  local out = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(buf)
    if
      name ~= ""
      and api.nvim_buf_is_loaded(buf)
      and vim.bo[buf].buftype == ""
      and (wanted[name] or wanted[realpath(name)])
    then
      table.insert(out, buf)
    end
  end
  return out
end

-- modified tells whether a buffer of one of the files has unsaved changes.
function M.modified(paths)
  for _, buf in ipairs(M.buffers_of(paths)) do
    if vim.bo[buf].modified then
      return true
    end
  end
  return false
end

-- unsaved returns those of the files that a buffer holds with unsaved changes (as
-- they were given).
function M.unsaved(paths)
  local out = {}
  for _, p in ipairs(paths) do
    if M.modified({ p }) then
      table.insert(out, p)
    end
  end
  return out
end

-- reload re-reads every loaded, unmodified buffer of the given files whose file
-- exists, keeping each window's view. :checktime is not enough: a rewrite within the
-- same second (or with the same size and mtime) looks unchanged to it.
-- Returns the number of buffers reloaded.
function M.reload(paths)
  local count = 0
  for _, buf in ipairs(M.buffers_of(paths)) do
    if not vim.bo[buf].modified and uv.fs_stat(api.nvim_buf_get_name(buf)) then
      local saved = {}
      for _, w in ipairs(vim.fn.win_findbuf(buf)) do
        saved[w] = api.nvim_win_call(w, vim.fn.winsaveview)
      end
      local ok = pcall(api.nvim_buf_call, buf, function()
        vim.cmd("silent keepjumps edit!")
      end)
      for w, view in pairs(saved) do
        if api.nvim_win_is_valid(w) then
          api.nvim_win_call(w, function()
            vim.fn.winrestview(view)
          end)
        end
      end
      if ok then
        count = count + 1
      end
    end
  end
  return count
end

return M
