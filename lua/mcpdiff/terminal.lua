-- :McpDiffClaude: Claude Code in a terminal split, connected to this Neovim.
local M = {}

local api = vim.api

local LOOPBACK = { "localhost", "127.0.0.1", "::1" }

-- merge_no_proxy adds the loopback names to a no_proxy value (so an http_proxy does not
-- swallow the local WebSocket, claudecode.nvim #70), keeping what was there.
function M.merge_no_proxy(value)
  local seen, out = {}, {}
  for item in (value or ""):gmatch("[^,]+") do
    item = vim.trim(item)
    if item ~= "" and not seen[item] then
      seen[item] = true
      table.insert(out, item)
    end
  end
  for _, item in ipairs(LOOPBACK) do
    if not seen[item] then
      table.insert(out, item)
    end
  end
  return table.concat(out, ",")
end

-- environment returns the variables the claude process gets.
function M.environment(port, user_env)
  local env = vim.deepcopy(user_env or {})
  env.CLAUDE_CODE_SSE_PORT = tostring(port)
  env.ENABLE_IDE_INTEGRATION = "true" -- only read by Claude Code builds before 2.1.330
  env.FORCE_CODE_TERMINAL = "true"
  env.no_proxy = M.merge_no_proxy(env.no_proxy or vim.env.no_proxy)
  env.NO_PROXY = M.merge_no_proxy(env.NO_PROXY or vim.env.NO_PROXY)
  return env
end

-- hook_settings returns the settings JSON that gives Claude Code mcpdiff's hooks
-- (`mcpdiff hooks settings`: the binary names itself by its absolute path), or nil and
-- why not.
local settings_cache = {}
function M.hook_settings(bin)
  if not settings_cache[bin] then
    local out = vim.fn.system({ bin, "hooks", "settings" })
    if vim.v.shell_error ~= 0 then
      return nil, vim.trim(out)
    end
    settings_cache[bin] = out
  end
  return settings_cache[bin]
end

-- hook_args returns the arguments that pass the hooks (nothing when the user passes
-- settings of their own, or turned them off) and a warning, if any.
local function hook_args(args)
  if not require("mcpdiff.config").values.terminal.hooks then
    return {}
  end
  for _, a in ipairs(args) do
    if a == "--settings" or a:find("^%-%-settings=") then
      return {},
        "your arguments pass --settings, so Claude Code gets no mcpdiff hooks: its own edits are not recorded"
          .. " (add them with `mcpdiff hooks install`)"
    end
  end
  local bin, why = require("mcpdiff.bridge").find_bin()
  local settings, err
  if bin then
    settings, err = M.hook_settings(bin)
  end
  if not settings then
    return {}, "Claude Code's own edits will not be recorded: " .. tostring(err or why)
  end
  return { "--settings", settings }
end

local function open_window(opts)
  if opts.split == "tab" then
    vim.cmd("tabnew")
    return
  end
  local vertical = opts.split == "vertical"
  local total = vertical and vim.o.columns or vim.o.lines
  local size = opts.size < 1 and math.floor(total * opts.size) or math.floor(opts.size)
  vim.cmd(("botright %d%s"):format(math.max(size, 1), vertical and "vnew" or "new"))
end

-- open starts the configured command (plus extra args) in a terminal window.
function M.open(extra_args)
  local bridge = require("mcpdiff.bridge")
  local info = bridge.info()
  if not info then
    vim.notify(
      "mcpdiff: the bridge is not running; start it with :McpDiffStart",
      vim.log.levels.WARN
    )
    return nil
  end
  local opts = require("mcpdiff.config").values.terminal
  local args = vim.list_extend(vim.deepcopy(opts.args), extra_args or {})
  if vim.fn.executable(opts.cmd) ~= 1 then
    vim.notify(
      ("mcpdiff: %s is not on PATH; install Claude Code or set terminal.cmd"):format(opts.cmd),
      vim.log.levels.ERROR
    )
    return nil
  end
  local hooks, warning = hook_args(args)
  if warning then
    vim.notify("mcpdiff: " .. warning, vim.log.levels.WARN)
  end
  local cmd = { opts.cmd }
  vim.list_extend(cmd, hooks)
  vim.list_extend(cmd, args)
  open_window(opts)
  local job_opts = { env = M.environment(info.port, opts.env) }
  local job
  if vim.fn.has("nvim-0.11") == 1 then
    job_opts.term = true
    job = vim.fn.jobstart(cmd, job_opts)
  else
    job = vim.fn.termopen(cmd, job_opts)
  end
  vim.bo.bufhidden = "wipe"
  vim.cmd("startinsert")
  return job, api.nvim_get_current_buf()
end

return M
