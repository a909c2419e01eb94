-- Reloading file buffers after something outside Neovim changed the files, and
-- asking whether any is modified. Self-contained: the Go side runs this same file
-- (embedded in the binary) in any Neovim `mcpdiff serve` talks to, plugin or not.
--
-- The reload rule, the one every trigger (an agent's write through the file tools,
-- a decision, an accepted diff written, a store that changed) goes through: a buffer
-- is re-read when it has no unsaved changes and its file no longer has the stamp the
-- buffer read or wrote it with. A modified buffer is never re-read.
local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

-- The buffer variable holding the stamp of what the buffer read or wrote.
local STAMP = "mcpdiff_stamp"
local GROUP = "mcpdiff_buffers"
-- A file changed within the clock's tick of its stamp may be changed again in that
-- tick without its stat showing it: its stamp then keeps the bytes too. The tick is
-- at most 10 ms where timestamps have nanoseconds (Linux's coarse clock before
-- 6.13), a second where they keep seconds only.
local RACY_FINE, RACY_SECONDS = 0.02, 2
local RACY = "#racy" -- the stamp's suffix when the bytes are kept

-- The bytes of racy stamps, by buffer: shared by this module and the copy Go runs
-- (see nvim/neovims/buffers.go), which both find it here.
local REGISTRY = "mcpdiff.buffers.racy"
package.loaded[REGISTRY] = package.loaded[REGISTRY] or {}
local racy_bytes = package.loaded[REGISTRY]

local function realpath(p)
  return (uv.fs_realpath(p)) or p
end

local function stat_key(st)
  return table.concat({
    st.dev,
    st.ino,
    st.size,
    st.mtime.sec,
    st.mtime.nsec or 0,
    st.ctime.sec,
    st.ctime.nsec or 0,
  }, ":")
end

local function racy(st)
  local m, c = st.mtime.nsec or 0, st.ctime.nsec or 0
  local changed = math.max(st.mtime.sec + m / 1e9, st.ctime.sec + c / 1e9)
  local sec, usec = uv.gettimeofday()
  return changed + ((m ~= 0 or c ~= 0) and RACY_FINE or RACY_SECONDS) >= sec + usec / 1e6
end

-- read is the file's bytes, or nil when it cannot be read.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local bytes = f:read("*a")
  f:close()
  return bytes
end

-- stamp is what the file at path is now: "none" when there is none, else its stat;
-- and its bytes too when it changed within the clock's tick.
function M.stamp(path)
  local st = uv.fs_stat(path)
  if not st then
    return "none"
  end
  if racy(st) then
    return stat_key(st) .. RACY, M.read(path)
  end
  return stat_key(st)
end

-- remember records that buf holds its file as it is now.
local function remember(buf)
  local stamp, bytes = M.stamp(api.nvim_buf_get_name(buf))
  racy_bytes[buf] = bytes
  pcall(api.nvim_buf_set_var, buf, STAMP, stamp)
end

local function forget(buf)
  racy_bytes[buf] = nil
  pcall(api.nvim_buf_del_var, buf, STAMP)
end

-- changed tells whether the file of buf no longer has the stamp the buffer read or
-- wrote it with. A buffer without a stamp (read before the stamps were kept) counts
-- as changed.
function M.changed(buf)
  local ok, recorded = pcall(api.nvim_buf_get_var, buf, STAMP)
  if not ok or type(recorded) ~= "string" then
    return true
  end
  local path = api.nvim_buf_get_name(buf)
  local st = uv.fs_stat(path)
  if not st then
    return recorded ~= "none"
  end
  local key = stat_key(st)
  if recorded == key then
    return false -- stamped after its last change had settled: a later write shows
  end
  if recorded ~= key .. RACY then
    return true
  end
  local bytes = racy_bytes[buf]
  if bytes == nil or M.read(path) ~= bytes then
    return true
  end
  if not racy(st) then
    -- Settled now: the stat alone tells from here on.
    racy_bytes[buf] = nil
    api.nvim_buf_set_var(buf, STAMP, key)
  end
  return false
end

-- track keeps the stamps from now on: taken before a buffer reads its file (a write
-- during the read then shows as a change) and after it writes it. Idempotent.
function M.track()
  local exists, autocmds = pcall(api.nvim_get_autocmds, { group = GROUP })
  if exists and #autocmds > 0 then
    return
  end
  local group = api.nvim_create_augroup(GROUP, { clear = true })
  api.nvim_create_autocmd("BufReadPre", {
    group = group,
    callback = function(args)
      remember(args.buf)
    end,
  })
  api.nvim_create_autocmd("BufWritePost", {
    group = group,
    callback = function(args)
      local name = api.nvim_buf_get_name(args.buf)
      -- Only a write of the buffer's own file (not :w other.txt).
      if
        vim.bo[args.buf].buftype == ""
        and realpath(vim.fn.fnamemodify(args.file, ":p")) == realpath(name)
      then
        remember(args.buf)
      end
    end,
  })
  api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = group,
    callback = function(args)
      racy_bytes[args.buf] = nil
    end,
  })
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

-- reload applies the reload rule to the buffers of the given files: each one
-- without unsaved changes whose file exists and changed since the buffer read it is
-- re-read, keeping each window's view. (:checktime is not enough: a rewrite within
-- the same second, or with the same size and mtime, looks unchanged to it.)
-- Returns the number of buffers reloaded.
function M.reload(paths)
  M.track()
  local count = 0
  for _, buf in ipairs(M.buffers_of(paths)) do
    local name = api.nvim_buf_get_name(buf)
    if not vim.bo[buf].modified and uv.fs_stat(name) and M.changed(buf) then
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
        count = count + 1 -- stamped by track's BufReadPre, before the read
      else
        forget(buf)
      end
    end
  end
  return count
end

return M
