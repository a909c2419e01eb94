-- :checkhealth mcpdiff
local M = {}

local uv = vim.uv or vim.loop

-- Neovim 0.9 renamed health.report_* to vim.health.*; 0.7 only has require("health").
local function health_functions()
  local h = vim.health
  if h and h.start then
    return h.start, h.ok, h.warn, h.error, h.info
  end
  h = h or require("health")
  return h.report_start, h.report_ok, h.report_warn, h.report_error, h.report_info
end

-- shell_word is s as one word of a shell command, quoted only where it needs it.
local function shell_word(s)
  return s:match("^[%w/._+,:@=-]+$") and s or vim.fn.shellescape(s)
end

-- reporter returns the report functions. The commands every line suggests (written
-- `mcpdiff ...` in backticks, here and in what the binary says) name cli instead:
-- the binary's full path when `mcpdiff` in a shell does not run it.
local function reporter(cli)
  local start, ok, warn, err, info = health_functions()
  local function naming(text)
    return cli == "mcpdiff" and text
      or (text:gsub("`mcpdiff ", "`" .. cli:gsub("%%", "%%%%") .. " "))
  end
  local function with_commands(report)
    return function(text, advice)
      if type(advice) == "table" then
        advice = vim.tbl_map(naming, advice)
      end
      report(naming(text), advice)
    end
  end
  return start, with_commands(ok), with_commands(warn), with_commands(err), with_commands(info)
end

-- rebuild_advice says how to get a binary of this plugin's version: `make`, which
-- builds it with Go, or without Go, on a release, installs the released one.
local function rebuild_advice()
  local root = require("mcpdiff.bridge").plugin_root()
  return {
    "Build it: run `make` in " .. root .. " (needs Go 1.25 or newer)",
    ('Or, without Go: check out the release v%s (a plugin manager\'s version = "*" or tag) and run `make`, which downloads the released binary for this system and checks it against release/SHA256SUMS'):format(
      require("mcpdiff").version
    ),
  }
end

-- origin says where a binary came from, by what its `version` printed: a release build
-- (without Go, `make` downloads one), or a build from source.
local function origin(out)
  if out:find("(release build", 1, true) then
    return "the released binary, not built here (without Go, `make` downloads it and checks its SHA-256 against release/SHA256SUMS)"
  end
  local commit = out:match("%(commit ([^)]+)%)")
  if commit and commit ~= "unknown" then
    return "built from source by `make` (commit " .. commit .. ")"
  end
  return "built from source (by go build or go install: no commit stamped)"
end

-- binary_version runs `mcpdiff version` (blocking is fine inside :checkhealth).
local function binary_version(bin)
  local out = vim.fn.system({ bin, "version" })
  if vim.v.shell_error ~= 0 then
    return nil, vim.trim(out)
  end
  return out:match("mcpdiff (%S+)"), vim.trim(out)
end

-- check_store reports the edit history above Neovim's working directory as the
-- binary tells it (`mcpdiff status --health --json`, which finds and opens the store
-- as every history command does, completing a decision an interrupted command left)
-- and words it (the warnings and notes of `mcpdiff status`).
local function check_store(ok, warn, err, info)
  local cwd = vim.fn.getcwd()
  local code, stdout, stderr = -1, "", "no answer within 10 s"
  local job = require("mcpdiff.history").run(
    { "status", "--health", "--json" },
    cwd,
    function(c, out, errs)
      code, stdout, stderr = c, out, errs
    end
  )
  if job then
    vim.wait(10000, function()
      return code ~= -1
    end)
  end
  local decoded, facts = pcall(vim.fn.json_decode, stdout)
  if not decoded or type(facts) ~= "table" then
    err(("`mcpdiff status --health` in %s failed (exit %d): %s"):format(cwd, code, stderr), {
      "Run `mcpdiff status --health` in " .. cwd .. " in a shell and fix what it names",
    })
    return
  end
  local store = type(facts.store) == "string" and facts.store or ""
  local failed = code ~= 0 or (type(facts.error) == "string" and facts.error ~= "")
  if store == "" and not failed then
    info("no .mcp/edit_history above " .. cwd .. " yet (made by the first recorded edit)")
    return
  end
  if store ~= "" then
    if facts.writable == true then
      ok("store " .. store .. " is writable")
    else
      err(
        "store " .. store .. " is not writable",
        { "Fix the permissions of that folder: chmod -R u+rwX " .. vim.fn.shellescape(store) }
      )
    end
    if (tonumber(facts.format) or 0) > 0 then
      ok("store format version " .. facts.format)
    else
      info("store " .. store .. " has no FORMAT file yet (written by the first recorded edit)")
    end
  end
  if failed then
    local workspace = type(facts.workspace) == "string" and facts.workspace or cwd
    err(("`mcpdiff status` in %s failed (exit %d): %s"):format(workspace, code, stderr), {
      "Run `mcpdiff status --workspace "
        .. vim.fn.shellescape(workspace)
        .. "` in a shell and fix what it names",
    })
    return
  end
  ok(
    ("%d edit(s) recorded, %d pending (review them with :McpDiffStatus or `mcpdiff status`)"):format(
      tonumber(facts.edits) or 0,
      tonumber(facts.pending) or 0
    )
  )
  local warnings = type(facts.warnings) == "table" and facts.warnings or {}
  local notes = type(facts.info) == "table" and facts.info or {}
  for _, w in ipairs(warnings) do
    warn(w)
  end
  for _, i in ipairs(notes) do
    info(i)
  end
  if #warnings == 0 and #notes == 0 then
    ok("every recorded file holds what its history says")
  end
end

-- start_version starts `cmd --version`; version_of waits for it. :checkhealth starts
-- every CLI's at once: Node CLIs take seconds to start (Gemini CLI about 5), and one
-- after the other they added up.
local function start_version(cmd)
  local run = { out = {} }
  run.job = vim.fn.jobstart({ cmd, "--version" }, {
    stdout_buffered = true,
    on_stdout = function(_, data)
      run.out = data
    end,
    -- A job that ended while other work ran is gone by the time version_of asks:
    -- jobwait then knows no such job, and its exit status is only here.
    on_exit = function(_, code)
      run.code = code
    end,
  })
  return run
end

-- version_of is the first line a start_version run printed, within 10 s, or nil.
local function version_of(run)
  if run.job <= 0 then
    return nil
  end
  if run.code == nil and vim.fn.jobwait({ run.job }, 10000)[1] == -1 then
    vim.fn.jobstop(run.job)
    return nil
  end
  if run.code ~= 0 then
    return nil
  end
  local line = vim.trim(run.out[1] or "")
  return line ~= "" and line or nil
end

-- check_mode reports what Claude Code does with its edits in its permission mode, as
-- the binary reads it from the settings files (`mcpdiff hooks status --json`:
-- permissionMode, and the file that sets it): in `default` it sends each one to
-- Neovim as a diff, in the others it writes them itself, and only the hooks record
-- them (passed: :McpDiffClaude gives them).
local function check_mode(status, passed, ok, warn)
  local mode = type(status.permissionMode) == "string" and status.permissionMode or "auto"
  local from = type(status.permissionModeFrom) == "string" and status.permissionModeFrom or nil
  local active = status.active
  local where = from and ("set in " .. from)
    or "no settings file sets defaultMode: Claude Code's own default"
  local text = ("permission mode %s (%s): "):format(mode, where)
  if mode == "default" then
    ok(text .. "Claude Code sends each edit to Neovim as a diff")
  elseif active then
    ok(text .. "Claude Code writes its edits itself, the hooks record them")
  elseif passed then
    ok(
      text
        .. "Claude Code writes its edits itself; :McpDiffClaude passes the hooks that record them"
    )
  else
    warn(text .. "Claude Code writes its edits itself, and nothing records them", {
      "Run `mcpdiff hooks install` in " .. vim.fn.getcwd() .. " to record them",
      'or set "defaultMode": "default" under "permissions" in '
        .. (from or "its settings")
        .. " to review each edit as a diff",
    })
  end
end

function M.check()
  local mcpdiff = require("mcpdiff")
  local bridge = require("mcpdiff.bridge")
  local cli = require("mcpdiff.cli")
  local bin, why = bridge.find_bin()
  local on_path, found = false, ""
  if bin then
    on_path, found = cli.runs_bin(bin)
  end
  local start, ok, warn, err, info =
    reporter((bin and not on_path) and shell_word(bin) or "mcpdiff")
  local terminal = require("mcpdiff.config").values.terminal
  local versions = {}
  for _, cmd in ipairs(vim.list_extend({ terminal.cmd }, vim.tbl_values(terminal.agents))) do
    if type(cmd) == "string" and not versions[cmd] and vim.fn.executable(cmd) == 1 then
      versions[cmd] = start_version(cmd)
    end
  end

  start("mcpdiff: Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7.2") == 1 then
    ok("Neovim " .. version)
  else
    err("Neovim " .. version .. " is too old", { "mcpdiff needs Neovim 0.7.2 or newer" })
  end

  start("mcpdiff: binary")
  if not bin then
    err(why, rebuild_advice())
  else
    local got, out = binary_version(bin)
    if not got then
      err(("%s does not run: %s"):format(bin, out), rebuild_advice())
    elseif got ~= mcpdiff.version then
      err(
        ("%s is version %s, the Lua plugin is %s"):format(bin, got, mcpdiff.version),
        rebuild_advice()
      )
    else
      ok(("%s is version %s, as the Lua plugin is: %s"):format(bin, got, origin(out)))
    end
    if on_path then
      ok("`mcpdiff` in a shell runs it (" .. found .. ")")
    elseif found ~= "" then
      warn(
        ("`mcpdiff` in a shell runs %s, not this binary: the commands below name %s"):format(
          found,
          bin
        ),
        {
          "Run :McpDiffInstallCli! to link "
            .. cli.default_dir
            .. "/mcpdiff to it, and put that folder before "
            .. vim.fn.fnamemodify(found, ":h")
            .. " in PATH",
        }
      )
    else
      warn(
        ("`mcpdiff` is not a command in your shell: the commands below name %s"):format(bin),
        { "Run :McpDiffInstallCli to link it into " .. cli.default_dir .. " (a folder of PATH)" }
      )
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
    local others = tonumber(status.others) or 0
    if others > 0 then
      info(
        ("%d other Neovim(s) run mcpdiff in this project: Claude Code's /ide names this one %q, and `claude --ide` started outside Neovim connects to %s (see |mcpdiff-many-neovims|)"):format(
          others,
          tostring(status.ideName),
          status.chosen and "this one" or "another one"
        )
      )
    end
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
  for _, line in ipairs(bridge.stderr()) do
    info("bridge log: " .. line)
  end

  start("mcpdiff: edit history")
  if bin then
    check_store(ok, warn, err, info)
  else
    info("without the binary nothing tells of the edit history (see the binary's section above)")
  end

  start("mcpdiff: Claude Code")
  local cmd = terminal.cmd
  if vim.fn.executable(cmd) == 1 then
    local cli_version = version_of(versions[cmd])
    ok(
      ("%s found: %s (%s)"):format(cmd, vim.fn.exepath(cmd), cli_version or "its --version failed")
    )
    info(
      "Claude Code 2.1.330 and later send diffs to Neovim only in the `default` permission mode "
        .. "(`claude --permission-mode default`); in the others its hooks record its edits (see |mcpdiff-auto-mode|)"
    )
  else
    warn(
      cmd .. " is not on PATH",
      { "Install Claude Code (npm install -g @anthropic-ai/claude-code) or set terminal.cmd" }
    )
  end

  start("mcpdiff: Claude Code hooks")
  M.check_hooks(bin, terminal.hooks, ok, warn, info)

  local names = vim.tbl_keys(terminal.agents)
  table.sort(names)
  for _, name in ipairs(names) do
    local agent_cmd = terminal.agents[name]
    if type(agent_cmd) == "string" and vim.fn.executable(agent_cmd) == 1 then
      M.check_agent(
        name,
        agent_cmd,
        versions[agent_cmd],
        bin,
        terminal.hooks,
        start,
        ok,
        warn,
        info
      )
    end
  end
end

-- The agents whose hooks :McpDiffAgent passes for one run.
local PER_RUN = { gemini = true, opencode = true }

-- check_agent reports, for an agent CLI on PATH, its version (version_run, from
-- start_version), where its hooks are, whether it runs them in Neovim's working
-- directory (its own trust gates), and the command that fixes what does not.
function M.check_agent(name, cmd, version_run, bin, passed, start, ok, warn, info)
  local label = ({
    codex = "Codex",
    gemini = "Gemini CLI",
    opencode = "OpenCode",
    copilot = "Copilot CLI",
    cursor = "Cursor",
  })[name] or name
  start("mcpdiff: " .. label)
  ok(
    ("%s found: %s (%s)"):format(
      cmd,
      vim.fn.exepath(cmd),
      version_of(version_run) or "its --version failed"
    )
  )
  if not bin then
    return
  end
  local out = vim.fn.system({ bin, "hooks", "status", "--agent", name, "--json" })
  local decoded, status = pcall(vim.fn.json_decode, out)
  if vim.v.shell_error ~= 0 or not decoded or type(status) ~= "table" then
    warn("`mcpdiff hooks status --agent " .. name .. "` failed: " .. vim.trim(out))
    return
  end
  for _, scope in ipairs(status.scopes or {}) do
    if scope.installed then
      ok(("hooks installed in %s (%s scope): %s"):format(scope.path, scope.scope, scope.command))
    end
    if type(scope.problem) == "string" and scope.problem ~= "" then
      warn(("%s (%s scope): %s"):format(scope.path, scope.scope, scope.problem))
    end
  end
  for _, gate in ipairs(status.gates or {}) do
    warn(label .. " skips the hooks: " .. gate.problem, { gate.fix })
  end
  if status.active then
    ok(label .. " started in " .. vim.fn.getcwd() .. " records its edits in the edit history")
  elseif PER_RUN[name] and passed then
    info(
      (":McpDiffAgent %s passes the hooks for its run; a %s started elsewhere records nothing: run `mcpdiff hooks install --agent %s`"):format(
        name,
        cmd,
        name
      )
    )
  else
    warn(label .. " started in " .. vim.fn.getcwd() .. " records none of its edits", {
      "Run `mcpdiff hooks install --agent " .. name .. "`",
    })
  end
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
  check_mode(status, passed, ok, warn)
  if status.disabledBy and status.disabledBy ~= vim.NIL then
    warn(
      status.disabledBy
        .. " sets disableAllHooks: Claude Code runs no hooks, its edits are not recorded",
      { "Remove disableAllHooks from " .. status.disabledBy }
    )
  elseif status.active then
    ok("active for a claude started anywhere in " .. vim.fn.getcwd())
  else
    info(
      "a claude started outside Neovim in "
        .. vim.fn.getcwd()
        .. " does not record its edits: "
        .. "run `mcpdiff hooks install` there (see |mcpdiff-auto-mode|)"
    )
  end
end

return M
