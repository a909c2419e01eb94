-- :McpDiffClaude: Claude Code in a terminal split, connected to this Neovim; and
-- :McpDiffAgent: any other agent CLI there, with mcpdiff's hooks where it takes them
-- for one run.
local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

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

-- start runs cmd in a terminal job in a new window, with env.
local function start(cmd, env)
  open_window(require("mcpdiff.config").values.terminal)
  local job_opts = { env = env }
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

-- The agents' names as people read them.
local LABELS = {
  codex = "Codex",
  gemini = "Gemini CLI",
  opencode = "OpenCode",
  copilot = "Copilot CLI",
  cursor = "Cursor",
}

-- run_bin runs mcpdiff with args and returns its trimmed output, or nil and why.
local function run_bin(args)
  local bin, why = require("mcpdiff.bridge").find_bin()
  if not bin then
    return nil, why
  end
  local out = vim.fn.system(vim.list_extend({ bin }, args))
  if vim.v.shell_error ~= 0 then
    return nil, vim.trim(out)
  end
  return vim.trim(out)
end

-- install_hint says how to record the agent's edits when this run cannot pass them.
local function install_hint(name, why)
  return ("%s's own edits are recorded only with its hooks installed (%s): run `mcpdiff hooks install --agent %s`"):format(
    LABELS[name],
    why,
    name
  )
end

-- agent_hooks adds to env what gives this run of agent name mcpdiff's hooks, where
-- the CLI takes them for one run without weakening its own trust checks (Gemini CLI:
-- a system-defaults settings file in a private folder; OpenCode: its configuration in
-- OPENCODE_CONFIG_CONTENT); otherwise it returns a warning saying to install them.
function M.agent_hooks(name, env)
  if name == "gemini" then
    local existing = env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH or vim.env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH
    if existing or uv.fs_stat("/etc/gemini-cli/system-defaults.json") then
      return install_hint(
        name,
        "this machine has system defaults of its own, which a run's would replace"
      )
    end
    local path, err = run_bin({ "hooks", "settings", "--agent", "gemini" })
    if not path then
      return install_hint(name, err)
    end
    env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH = path
    return nil
  elseif name == "opencode" then
    local config, err = run_bin({ "hooks", "settings", "--agent", "opencode" })
    if not config then
      return install_hint(name, err)
    end
    local given = env.OPENCODE_CONFIG_CONTENT or vim.env.OPENCODE_CONFIG_CONTENT
    if given and given ~= "" then
      local ok, user = pcall(vim.fn.json_decode, given)
      if not ok or type(user) ~= "table" then
        return install_hint(name, "OPENCODE_CONFIG_CONTENT is set and is not JSON")
      end
      user.plugin = type(user.plugin) == "table" and user.plugin or {}
      vim.list_extend(user.plugin, vim.fn.json_decode(config).plugin)
      config = vim.fn.json_encode(user)
    end
    env.OPENCODE_CONFIG_CONTENT = config
    return nil
  end
  local out, err = run_bin({ "hooks", "status", "--agent", name, "--json" })
  local ok, status = pcall(vim.fn.json_decode, out or "")
  if not out or not ok or type(status) ~= "table" then
    return install_hint(name, "`mcpdiff hooks status` failed: " .. tostring(err))
  end
  if status.active then
    return nil
  end
  local gate = type(status.gates) == "table" and status.gates[1]
  if gate then
    return ("%s skips mcpdiff's hooks here: %s; to open it: %s"):format(
      LABELS[name],
      gate.problem,
      gate.fix
    )
  end
  return install_hint(name, "they are not installed for " .. vim.fn.getcwd())
end

-- open_agent starts agent name's CLI (option terminal.agents) with args in a terminal
-- window; Claude Code as :McpDiffClaude does.
function M.open_agent(name, args)
  args = args or {}
  if name == "claude" then
    return M.open(args)
  end
  local opts = require("mcpdiff.config").values.terminal
  local cmd = opts.agents[name]
  if not cmd then
    local names = vim.tbl_keys(opts.agents)
    table.sort(names)
    vim.notify(
      ("mcpdiff: unknown agent %q: use claude, %s"):format(
        tostring(name),
        table.concat(names, ", ")
      ),
      vim.log.levels.ERROR
    )
    return nil
  end
  if vim.fn.executable(cmd) ~= 1 then
    vim.notify(
      ("mcpdiff: %s is not on PATH; install %s or set terminal.agents.%s"):format(
        cmd,
        LABELS[name] or name,
        name
      ),
      vim.log.levels.ERROR
    )
    return nil
  end
  local env = vim.deepcopy(opts.env)
  -- The hooks ask this Neovim about unsaved buffers: it is the one to find.
  env.NVIM = env.NVIM or vim.v.servername
  if opts.hooks then
    local warning = M.agent_hooks(name, env)
    if warning then
      vim.notify("mcpdiff: " .. warning, vim.log.levels.WARN)
    end
  end
  return start(vim.list_extend({ cmd }, args), env)
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
  return start(cmd, M.environment(info.port, opts.env))
end

return M
