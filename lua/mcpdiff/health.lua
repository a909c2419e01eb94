-- :checkhealth mcpdiff
local M = {}

local uv = vim.uv or vim.loop

-- Neovim 0.9 renamed health.report_* to vim.health.*; 0.7 only has require("health").
local function reporter()
  local h = vim.health
  if h and h.start then
    return h.start, h.ok, h.warn, h.error, h.info
  end
  h = h or require("health")
  return h.report_start, h.report_ok, h.report_warn, h.report_error, h.report_info
end

local function lock_dir()
  local config_dir = vim.env.CLAUDE_CONFIG_DIR
  if config_dir and config_dir ~= "" then
    return config_dir .. "/ide"
  end
  return (uv.os_homedir() or "~") .. "/.claude/ide"
end

-- binary_version runs `mcpdiff version` (blocking is fine inside :checkhealth).
local function binary_version(bin)
  local out = vim.fn.system({ bin, "version" })
  if vim.v.shell_error ~= 0 then
    return nil, vim.trim(out)
  end
  return out:match("mcpdiff (%S+)"), vim.trim(out)
end

local function history_store()
  local dir = vim.fn.finddir(".mcp/edit_history", vim.fn.getcwd() .. ";")
  if dir == "" then
    return nil
  end
  return vim.fn.fnamemodify(dir, ":p")
end

-- check_files runs `mcpdiff status` in the workspace: it completes a decision an
-- interrupted command left, and warns about each file that differs from its history.
local function check_files(bin, workspace, ok, warn)
  local stderr = {}
  local job = vim.fn.jobstart({ bin, "status", "--json", "--workspace", workspace }, {
    stderr_buffered = true,
    on_stderr = function(_, data)
      stderr = data
    end,
  })
  local code = job > 0 and vim.fn.jobwait({ job }, 10000)[1] or -1
  if code ~= 0 then
    warn(
      ("`mcpdiff status` in %s failed (exit %d): %s"):format(
        workspace,
        code,
        vim.trim(table.concat(stderr, "\n"))
      )
    )
    return
  end
  local warnings = require("mcpdiff.history").warnings(table.concat(stderr, "\n"))
  for _, w in ipairs(warnings) do
    warn(w)
  end
  if #warnings == 0 then
    ok("every recorded file holds what its history says")
  end
end

function M.check()
  local start, ok, warn, err, info = reporter()
  local mcpdiff = require("mcpdiff")
  local bridge = require("mcpdiff.bridge")

  start("mcpdiff: Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7.2") == 1 then
    ok("Neovim " .. version)
  else
    err("Neovim " .. version .. " is too old", { "mcpdiff needs Neovim 0.7.2 or newer" })
  end

  start("mcpdiff: binary")
  local bin, why = bridge.find_bin()
  if not bin then
    err(why)
  else
    local got, out = binary_version(bin)
    if not got then
      err(
        ("%s does not run: %s"):format(bin, out),
        { "Rebuild it: run `make` in " .. bridge.plugin_root() }
      )
    elseif got ~= mcpdiff.version then
      err(
        ("%s is version %s, the Lua plugin is %s"):format(bin, got, mcpdiff.version),
        { "Rebuild it: run `make` in " .. bridge.plugin_root() }
      )
    else
      ok(("%s (%s)"):format(bin, out))
    end
  end

  start("mcpdiff: bridge")
  local state = bridge.info()
  if not state then
    local last = bridge.last_error()
    warn(
      "the bridge is not running" .. (last and (": " .. last) or ""),
      { "Start it with :McpDiffStart" }
    )
  else
    ok(
      ("running (pid of Neovim %s), listening on 127.0.0.1:%d"):format(
        tostring(state.pid),
        state.port
      )
    )
    if uv.fs_stat(state.lock) then
      ok("lock file " .. state.lock)
    else
      err(
        "lock file " .. state.lock .. " is missing",
        { "Claude Code cannot find this Neovim; restart with :McpDiffStop and :McpDiffStart" }
      )
    end
    local status = bridge.status() or {}
    local n = type(status.clients) == "table" and #status.clients or bridge.clients()
    if n > 0 then
      ok(("%d Claude Code client(s) connected"):format(n))
    else
      info("no Claude Code client connected (run :McpDiffClaude, or `claude --ide` in this folder)")
    end
    local refused = tonumber(status.refusedUpgrades) or 0
    if refused > 0 then
      warn(("%d connection(s) refused: wrong token or a browser's Origin header"):format(refused), {
        "A Claude Code that read an older lock file gives up silently: restart it (or run /ide)",
      })
    end
  end
  info("lock files go to " .. lock_dir())
  for _, line in ipairs(bridge.stderr()) do
    info("bridge log: " .. line)
  end

  start("mcpdiff: edit history")
  local store = history_store()
  if not store then
    info(
      "no .mcp/edit_history above " .. vim.fn.getcwd() .. " yet (made by the first recorded edit)"
    )
  else
    if vim.fn.filewritable(store) == 2 then
      ok("store " .. store .. " is writable")
    else
      err("store " .. store .. " is not writable", { "Fix the permissions of that folder" })
    end
    if bin then
      check_files(bin, vim.fn.fnamemodify(store, ":h:h:h"), ok, warn)
    end
  end

  start("mcpdiff: Claude Code")
  local terminal = require("mcpdiff.config").values.terminal
  local cmd = terminal.cmd
  if vim.fn.executable(cmd) == 1 then
    ok(cmd .. " found: " .. vim.fn.exepath(cmd))
    info(
      "Claude Code 2.1.330 and later send diffs to Neovim only in the `default` permission mode "
        .. "(`claude --permission-mode default`); in the others its hooks record its edits (see :help mcpdiff-auto-mode)"
    )
  else
    warn(
      cmd .. " is not on PATH",
      { "Install Claude Code (npm install -g @anthropic-ai/claude-code) or set terminal.cmd" }
    )
  end

  start("mcpdiff: Claude Code hooks")
  M.check_hooks(bin, terminal.hooks, ok, warn, info)
end

-- check_hooks reports whether a Claude Code started in Neovim's working directory
-- records its own edits: with :McpDiffClaude (hooks passed on its command line), or
-- anywhere (hooks in a settings file, `mcpdiff hooks status`).
function M.check_hooks(bin, passed, ok, warn, info)
  if passed then
    ok("Claude Code started with :McpDiffClaude gets the hooks (option terminal.hooks)")
  else
    warn("terminal.hooks is false: Claude Code started with :McpDiffClaude gets no hooks", {
      "Its own edits (auto and acceptEdits modes) are recorded only when the hooks are in a settings file",
    })
  end
  if not bin then
    return
  end
  local out = vim.fn.system({ bin, "hooks", "status", "--json" })
  local decoded, status = pcall(vim.fn.json_decode, out)
  if vim.v.shell_error ~= 0 or not decoded or type(status) ~= "table" then
    warn("`mcpdiff hooks status` failed: " .. vim.trim(out))
    return
  end
  for _, scope in ipairs(status.scopes or {}) do
    if scope.installed then
      ok(("hooks installed in %s (%s settings): %s"):format(scope.path, scope.scope, scope.command))
    end
    if scope.problem and scope.problem ~= vim.NIL then
      warn(("%s (%s settings): %s"):format(scope.path, scope.scope, scope.problem))
    end
  end
  if status.disabledBy and status.disabledBy ~= vim.NIL then
    warn(
      status.disabledBy
        .. " sets disableAllHooks: Claude Code runs no hooks, its edits are not recorded"
    )
  elseif status.active then
    ok("active for a claude started anywhere in " .. vim.fn.getcwd())
  else
    info(
      "a claude started outside Neovim in "
        .. vim.fn.getcwd()
        .. " does not record its edits: "
        .. "run `mcpdiff hooks install` there (see :help mcpdiff-auto-mode)"
    )
  end
end

return M
