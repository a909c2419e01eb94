-- :McpDiffClaude: Claude Code in a terminal split, connected to this Neovim; and
-- :McpDiffAgent: any other agent CLI there, with mcpdiff's hooks where it takes them
-- for one run.
--
-- One terminal per agent: running the command again focuses the terminal it opened
-- (or hides it, from inside it; the process keeps running), as claudecode.nvim's
-- :ClaudeCodeFocus does. The terminal is named mcpdiff://<agent>, its window closes
-- when the process exits with 0 (on an error it stays, to be read), and while a
-- proposal is shown beside it, it shrinks to terminal.diff_size (fit).
local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

-- The agent terminals, by agent name: {name, buf, job, running, split}.
local terminals = {}
-- The terminal windows fit() shrank: window -> {size, fixed} to give back.
local shrunk = {}

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

-- cells is a size option (a fraction of the editor, or a count) in columns, or in
-- lines when not vertical.
local function cells(size, vertical)
  local total = vertical and vim.o.columns or vim.o.lines
  return math.max(size < 1 and math.floor(total * size) or math.floor(size), 1)
end

-- open_window opens the window of a terminal. A split keeps its size when other
-- windows open and close ('winfixwidth'), as a sidebar does: a diff beside it
-- splits the rest.
local function open_window(opts)
  if opts.split == "tab" then
    vim.cmd("tabnew")
    return
  end
  local vertical = opts.split == "vertical"
  vim.cmd(("botright %d%s"):format(cells(opts.size, vertical), vertical and "vnew" or "new"))
  vim.wo[vertical and "winfixwidth" or "winfixheight"] = true
end

-- windows returns the windows of the current tab that show buf.
local function windows(buf)
  local out = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == buf then
      table.insert(out, w)
    end
  end
  return out
end

-- close_windows closes every window showing buf (the last window of Neovim shows
-- an empty buffer instead, as it cannot close) and wipes buf.
local function close_windows(buf)
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    if #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, w, true)
    else
      api.nvim_win_set_buf(w, api.nvim_create_buf(true, false))
    end
  end
  if api.nvim_buf_is_valid(buf) then
    pcall(api.nvim_buf_delete, buf, { force = true })
  end
end

-- exited is called once the process of term ended: with 0 its window closes and
-- its buffer goes; with an error they stay, so that the message can be read.
local function exited(term, code)
  term.running = false
  if code ~= 0 or not api.nvim_buf_is_valid(term.buf) then
    return
  end
  local was_current = api.nvim_get_current_buf() == term.buf
  close_windows(term.buf)
  if terminals[term.name] == term then
    terminals[term.name] = nil
  end
  -- Terminal mode ends with the terminal's window: not insert mode in the next one.
  if was_current and api.nvim_get_mode().mode ~= "n" then
    vim.cmd("stopinsert")
  end
end

-- rename names the terminal buffer buf mcpdiff://<name> (Neovim's term://… name
-- holds the whole command line), dropping the buffer that kept the old name.
local function rename(buf, name)
  local old = api.nvim_buf_get_name(buf)
  if not pcall(api.nvim_buf_set_name, buf, "mcpdiff://" .. name) then
    return
  end
  for _, b in ipairs(api.nvim_list_bufs()) do
    if b ~= buf and api.nvim_buf_get_name(b) == old and not api.nvim_buf_is_loaded(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
end

-- start runs cmd with env in the terminal of agent name: in the window of its
-- previous (exited) terminal when this tab shows one, else in a new window.
local function start(name, cmd, env)
  local opts = require("mcpdiff.config").values.terminal
  local old = terminals[name]
  local reuse = old and api.nvim_buf_is_valid(old.buf) and windows(old.buf)[1]
  if reuse then
    api.nvim_set_current_win(reuse)
    api.nvim_win_set_buf(reuse, api.nvim_create_buf(true, false))
  else
    open_window(opts)
  end
  if old and api.nvim_buf_is_valid(old.buf) then
    close_windows(old.buf)
  end
  local term = { name = name, running = true, split = opts.split }
  local job_opts = {
    env = env,
    on_exit = function(_, code)
      vim.schedule(function()
        exited(term, code)
      end)
    end,
  }
  local job
  if vim.fn.has("nvim-0.11") == 1 then
    job_opts.term = true
    job = vim.fn.jobstart(cmd, job_opts)
  else
    job = vim.fn.termopen(cmd, job_opts)
  end
  term.job, term.buf = job, api.nvim_get_current_buf()
  terminals[name] = term
  -- Hidden (:McpDiffClaude from inside it, :e in its window), it keeps running.
  vim.bo[term.buf].bufhidden = "hide"
  rename(term.buf, name)
  vim.cmd("startinsert")
  return job, term.buf
end

-- show brings the running terminal of agent name forward: it focuses its window in
-- this tab (or opens one for it), and hides it when it is the current window.
-- It returns the job and buffer, or nil when that agent's terminal does not run.
function M.show(name)
  local term = terminals[name]
  -- The process may have ended before its on_exit has run: ask the job.
  if
    not term
    or not term.running
    or not api.nvim_buf_is_valid(term.buf)
    or vim.fn.jobwait({ term.job }, 0)[1] ~= -1
  then
    return nil
  end
  local w = windows(term.buf)[1]
  if w and w == api.nvim_get_current_win() then
    if #api.nvim_tabpage_list_wins(0) > 1 or #api.nvim_list_tabpages() > 1 then
      api.nvim_win_close(w, false)
    end
    return term.job, term.buf
  end
  if w then
    api.nvim_set_current_win(w)
  else
    open_window(require("mcpdiff.config").values.terminal)
    local scratch = api.nvim_get_current_buf()
    api.nvim_win_set_buf(0, term.buf)
    if api.nvim_buf_is_valid(scratch) and scratch ~= term.buf then
      pcall(api.nvim_buf_delete, scratch, { force = true })
    end
  end
  vim.cmd("startinsert")
  return term.job, term.buf
end

-- fit gives a proposal the room: in a tab where a window shows one, the split agent
-- terminals take terminal.diff_size (and keep it while 'equalalways' evens out the
-- other windows); once no proposal is shown there, they get their size back.
function M.fit()
  local diff_size = require("mcpdiff.config").values.terminal.diff_size
  local by_buf = {}
  for _, term in pairs(terminals) do
    if term.split ~= "tab" then
      by_buf[term.buf] = term
    end
  end
  for w, saved in pairs(shrunk) do
    if not api.nvim_win_is_valid(w) then
      shrunk[w] = nil
    elseif not by_buf[api.nvim_win_get_buf(w)] then
      shrunk[w] = nil
      vim.wo[w][saved.option] = saved.fixed
    end
  end
  for _, tab in ipairs(api.nvim_list_tabpages()) do
    local wins = api.nvim_tabpage_list_wins(tab)
    local proposal = false
    for _, w in ipairs(wins) do
      proposal = proposal or vim.b[api.nvim_win_get_buf(w)].mcpdiff_tab ~= nil
    end
    for _, w in ipairs(wins) do
      local term = by_buf[api.nvim_win_get_buf(w)]
      local vertical = term and term.split == "vertical"
      local get = vertical and api.nvim_win_get_width or api.nvim_win_get_height
      local set = vertical and api.nvim_win_set_width or api.nvim_win_set_height
      local option = vertical and "winfixwidth" or "winfixheight"
      if term and proposal and diff_size and not shrunk[w] then
        shrunk[w] = { size = get(w), fixed = vim.wo[w][option], option = option }
        vim.wo[w][option] = true
        set(w, cells(diff_size, vertical))
        api.nvim_win_call(w, function()
          vim.cmd("wincmd =")
        end)
      elseif term and not proposal and shrunk[w] then
        local saved = shrunk[w]
        shrunk[w] = nil
        set(w, saved.size)
        vim.wo[w][option] = saved.fixed
      end
    end
  end
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

-- on_path tells whether cmd runs; if not, says so: install what, or set option.
local function on_path(cmd, what, option)
  if vim.fn.executable(cmd) == 1 then
    return true
  end
  vim.notify(
    ("mcpdiff: %s is not on PATH; install %s or set %s"):format(cmd, what, option),
    vim.log.levels.ERROR
  )
  return false
end

local function warn(warning)
  if warning then
    vim.notify("mcpdiff: " .. warning, vim.log.levels.WARN)
  end
end

-- open_agent starts agent name's CLI (option terminal.agents) with args in its
-- terminal, or shows the one that runs (M.show); Claude Code as :McpDiffClaude does.
function M.open_agent(name, args)
  args = args or {}
  if name == "claude" then
    return M.open(args)
  end
  local running, running_buf = M.show(name)
  if running then
    return running, running_buf
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
  if not on_path(cmd, LABELS[name] or name, "terminal.agents." .. name) then
    return nil
  end
  local env = vim.deepcopy(opts.env)
  -- The hooks ask this Neovim about unsaved buffers: it is the one to find.
  env.NVIM = env.NVIM or vim.v.servername
  if opts.hooks then
    warn(M.agent_hooks(name, env))
  end
  return start(name, vim.list_extend({ cmd }, args), env)
end

-- open starts the configured command (plus extra args) in a terminal window.
-- A running one is shown instead (M.show); extra args then wait for the next start.
function M.open(extra_args)
  local job, buf = M.show("claude")
  if job then
    if extra_args and #extra_args > 0 then
      vim.notify(
        "mcpdiff: Claude Code already runs in this Neovim: its terminal is shown, and the arguments"
          .. " apply when it starts again (after /exit)",
        vim.log.levels.WARN
      )
    end
    return job, buf
  end
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
  if not on_path(opts.cmd, "Claude Code", "terminal.cmd") then
    return nil
  end
  local hooks, warning = hook_args(args)
  warn(warning)
  local cmd = { opts.cmd }
  vim.list_extend(cmd, hooks)
  vim.list_extend(cmd, args)
  return start("claude", cmd, M.environment(info.port, opts.env))
end

return M
