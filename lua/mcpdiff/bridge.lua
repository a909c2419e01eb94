-- The bridge process: `mcpdiff nvim`, started as an RPC job. It serves Claude Code's
-- IDE protocol. This module depends on the options alone: what the other modules do
-- when the bridge attaches, stops or its clients come and go, they do as listeners
-- (M.on; init.lua subscribes them).
local M = {}

local uv = vim.uv or vim.loop

local state = {
  job = nil, -- job id (= RPC channel) of the running bridge
  info = nil, -- what the Go side reported on attach: port, lock, token, version, pid
  stopping = false, -- true while a deliberate stop is in progress
  recover = nil, -- {port, token} of a bridge that died, reused by the next start
  clients = 0, -- connected Claude Code clients
  stderr = {}, -- last lines the bridge logged
  last_error = nil, -- the last start-up problem, for :checkhealth
}

local MAX_STDERR_LINES = 50

-- The events listeners hear, each with its arguments.
local listeners = {
  attached = {}, -- (info: mcpdiff.BridgeInfo) the IDE server listens
  clients = {}, -- (n: integer) the number of connected clients changed
  stopped = {}, -- (reason: string) the bridge stopped or exited: views are void
}

local function notify(msg, level)
  vim.notify("mcpdiff: " .. msg, level or vim.log.levels.INFO)
end

-- plugin_root is the folder holding lua/, plugin/ and bin/.
function M.plugin_root()
  local source = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(source, ":p:h:h:h")
end

-- find_bin returns the mcpdiff binary, or nil and a message that says what to do.
function M.find_bin()
  local configured = require("mcpdiff.config").values.bin
  local root = M.plugin_root()
  local bin = configured or (root .. "/bin/mcpdiff")
  if vim.fn.executable(bin) == 1 then
    return bin
  end
  if configured then
    return nil, ("the binary %s (option `bin`) is missing or not executable"):format(bin)
  end
  return nil, ("the binary %s is missing: run `make` in %s"):format(bin, root)
end

local function on_stderr(_, data)
  for _, line in ipairs(data or {}) do
    if line ~= "" then
      table.insert(state.stderr, line)
      if #state.stderr > MAX_STDERR_LINES then
        table.remove(state.stderr, 1)
      end
    end
  end
end

-- on calls fn with the event's arguments each time the event happens, after the
-- listeners subscribed before it: "attached", "clients" or "stopped".
---@param event "attached"|"clients"|"stopped"
---@param fn function
function M.on(event, fn)
  local list = listeners[event]
  if not list then
    error("mcpdiff.bridge: no event named " .. tostring(event), 2)
  end
  table.insert(list, fn)
end

-- emit calls the event's listeners; one that fails is reported and the others
-- still run.
local function emit(event, ...)
  for _, fn in ipairs(listeners[event]) do
    local ok, err = pcall(fn, ...)
    if not ok then
      notify(("a listener of %q failed: %s"):format(event, tostring(err)), vim.log.levels.ERROR)
    end
  end
end

-- exiting reports whether Neovim is quitting (v:exiting is set from VimLeavePre on):
-- it then stops its jobs itself, with SIGTERM.
local function exiting()
  return vim.v.exiting ~= vim.NIL
end

local function on_exit(job, code)
  if job ~= state.job then
    return -- an older bridge that was already replaced
  end
  local unexpected = not state.stopping and not exiting()
  local info = state.info
  state.job, state.info, state.stopping, state.clients = nil, nil, false, 0
  emit("stopped", "bridge stopped")
  if not unexpected then
    return
  end
  local detail = state.stderr[#state.stderr]
  if info then
    -- Claude Code would keep finding a lock file whose pid (Neovim) is alive.
    os.remove(info.lock)
    state.recover = { port = info.port, token = info.token }
  end
  state.last_error = ("the bridge exited unexpectedly (exit code %d)%s"):format(
    code,
    detail and (": " .. detail) or ""
  )
  notify(
    state.last_error .. ". Its lock file was removed; run :McpDiffStart to restart it.",
    vim.log.levels.ERROR
  )
end

-- current_file is the file of the current buffer, "" when it has none.
local function current_file()
  if vim.bo.buftype ~= "" then
    return ""
  end
  local name = vim.api.nvim_buf_get_name(0)
  return name ~= "" and vim.fn.fnamemodify(name, ":p") or ""
end

local did_autocmds = false

-- ensure_autocmds creates, once, what a running bridge needs from Neovim's events.
local function ensure_autocmds()
  if did_autocmds then
    return
  end
  did_autocmds = true
  local group = vim.api.nvim_create_augroup("mcpdiff", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", { group = group, callback = M.shutdown })
  -- Claude Code started with --ide finds the IDE whose workspace holds its cwd.
  vim.api.nvim_create_autocmd("DirChanged", {
    group = group,
    callback = function()
      M.notify_go("mcpdiff_cwd", vim.fn.getcwd())
    end,
  })
  -- With other Neovims in the workspace, the lock file names the file open here, and
  -- the one focused last is the one `claude --ide` connects to.
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function()
      local file = current_file()
      if file ~= "" then -- a terminal, a list or a new buffer keeps the file named
        M.notify_go("mcpdiff_current", file)
      end
    end,
  })
  vim.api.nvim_create_autocmd("FocusGained", {
    group = group,
    callback = function()
      M.notify_go("mcpdiff_focus")
    end,
  })
  -- A file saved here is the user's own edit: the bridge records it in the file's
  -- history (if it has one), so it never shows as changed outside mcpdiff. The stat
  -- lets it tell the save from a later write by someone else.
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    callback = function(args)
      if vim.bo[args.buf].buftype ~= "" then
        return
      end
      local path = vim.fn.fnamemodify(args.file, ":p")
      local st = (vim.uv or vim.loop).fs_stat(path)
      if st then
        M.notify_go("mcpdiff_saved", path, st.size, st.mtime.sec, st.mtime.nsec or 0)
      end
    end,
  })
end

-- start launches the bridge unless it runs already. Returns true when a bridge runs.
function M.start()
  if state.job then
    return true
  end
  if exiting() then
    -- A start scheduled by setup() can run while `nvim +qa` quits: the job would only
    -- be killed again.
    return false
  end
  ensure_autocmds()
  local bin, err = M.find_bin()
  if not bin then
    state.last_error = err
    notify(err, vim.log.levels.ERROR)
    return false
  end
  -- What the Go side would otherwise ask Neovim first, which answers only once its
  -- start-up is over: the lock file then waits for nothing.
  local env = { MCPDIFF_NEOVIM = vim.fn.json_encode(M.neovim_info()) }
  if state.recover then
    -- Same port and token: a running Claude Code reconnects by itself.
    env.MCPDIFF_IDE_PORT = tostring(state.recover.port)
    env.MCPDIFF_IDE_TOKEN = state.recover.token
  end
  local opts = { rpc = true, on_stderr = on_stderr, on_exit = on_exit, env = env }
  state.stderr = {}
  local ok, job = pcall(vim.fn.jobstart, { bin, "nvim" }, opts)
  if not ok or job <= 0 then
    state.last_error = ("could not start %s: %s"):format(bin, tostring(job))
    notify(state.last_error, vim.log.levels.ERROR)
    return false
  end
  state.job, state.stopping, state.last_error = job, false, nil
  return true
end

-- neovim_info is what the bridge needs to know of this Neovim: its PID, cwd, RPC
-- address (where Claude Code's hook asks about unsaved buffers) and the workspace
-- folders of running language servers.
function M.neovim_info()
  local folders, seen = {}, {}
  -- Not loaded yet means no language server runs; loading it would cost start-up.
  local lsp = package.loaded["vim.lsp"]
  local get = lsp and (lsp.get_clients or lsp.get_active_clients) or function()
    return {}
  end
  for _, client in ipairs(get()) do
    for _, f in ipairs(client.workspace_folders or {}) do
      local path = vim.uri_to_fname(f.uri)
      if not seen[path] then
        seen[path] = true
        table.insert(folders, path)
      end
    end
  end
  return {
    pid = vim.fn.getpid(),
    cwd = vim.fn.getcwd(),
    lsp = folders,
    server = vim.v.servername,
    file = current_file(),
  }
end

-- stop ends the bridge: the Go side answers pending diffs as rejected, closes the
-- port and removes its lock file, then exits. Waits (bounded) for that to happen.
function M.stop()
  local job = state.job
  if not job then
    return false
  end
  state.stopping = true
  state.recover = nil
  local info = state.info
  emit("stopped", "bridge stopped")
  pcall(vim.fn.chanclose, job)
  if vim.fn.jobwait({ job }, 3000)[1] == -1 then
    vim.fn.jobstop(job)
  end
  if info and uv.fs_stat(info.lock) then
    os.remove(info.lock)
  end
  return true
end

-- shutdown runs on VimLeavePre.
function M.shutdown()
  if state.job then
    M.stop()
  end
end

function M.running()
  return state.job ~= nil
end

-- job_pid is the bridge's process id (0 when it does not run).
function M.job_pid()
  if not state.job then
    return 0
  end
  local ok, pid = pcall(vim.fn.jobpid, state.job)
  return ok and pid or 0
end

-- info returns what the running bridge reported (port, lock, version, pid) or nil.
function M.info()
  return state.info
end

function M.clients()
  return state.clients
end

function M.last_error()
  return state.last_error
end

function M.stderr()
  return state.stderr
end

-- notify_go sends an event to the bridge (never blocks).
function M.notify_go(method, ...)
  if state.job then
    pcall(vim.rpcnotify, state.job, method, ...)
  end
end

-- request asks the running bridge something and waits for the answer; nil when
-- no bridge runs or the request failed.
function M.request(method, ...)
  if not state.job or not state.info then
    return nil
  end
  local ok, answer = pcall(vim.fn.rpcrequest, state.job, method, ...)
  if ok then
    return answer
  end
  return nil
end

-- status asks the bridge for its IDE server status (port, clients, pending diffs).
function M.status()
  return M.request("mcpdiff_status")
end

-- What the Go side reports once its IDE server listens (attach in nvim/bridge.go).
---@class mcpdiff.BridgeInfo
---@field port integer the IDE server's port on 127.0.0.1
---@field lock string its lock file
---@field token string what clients authenticate with
---@field version string the binary's version
---@field pid integer the bridge's process id

-- Called by the Go side once its IDE server listens.
---@param info mcpdiff.BridgeInfo
function M._attached(info)
  local want = require("mcpdiff.version")
  if info.version ~= want then
    state.last_error = ("bin/mcpdiff is version %s but the Lua plugin is %s: rebuild it with `make` in %s"):format(
      tostring(info.version),
      want,
      M.plugin_root()
    )
    notify(state.last_error, vim.log.levels.ERROR)
    state.info = info
    vim.schedule(M.stop)
    return
  end
  state.info = info
  state.recover = nil
  emit("attached", info)
end

-- Called by the Go side whenever the number of connected clients changes.
---@param n integer
function M._clients(n)
  state.clients = n
  emit("clients", n)
end

return M
