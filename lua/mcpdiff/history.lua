-- The edit history from Neovim: runs the `mcpdiff` history CLI asynchronously.
local M = {}

local api = vim.api

local function notify(msg, level)
  vim.notify("mcpdiff: " .. msg, level or vim.log.levels.INFO)
end

-- confirm asks a yes/no question (a field, so tests can answer it).
M.confirm = function(question)
  return vim.fn.confirm(question, "&Discard them\n&Cancel", 2) == 1
end

-- confirm_later asks whether to reject the later edits in the way too (a field, so
-- tests can answer it).
M.confirm_later = function(question)
  return vim.fn.confirm(question, "&Reject them too\n&Cancel", 2) == 1
end

-- run starts `mcpdiff <args>` in cwd without blocking; on_done(code, stdout, stderr).
-- A detached run finishes even if Neovim quits meanwhile (a decision is never cut off).
function M.run(args, cwd, on_done, detach)
  local bin, err = require("mcpdiff.bridge").find_bin()
  if not bin then
    notify(err, vim.log.levels.ERROR)
    return nil
  end
  local cmd = { bin }
  vim.list_extend(cmd, args)
  local out, errs = {}, {}
  local ok, job = pcall(vim.fn.jobstart, cmd, {
    cwd = cwd,
    detach = detach or nil,
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      out = data
    end,
    on_stderr = function(_, data)
      errs = data
    end,
    on_exit = function(_, code)
      on_done(code, table.concat(out, "\n"), vim.trim(table.concat(errs, "\n")))
    end,
  })
  if not ok or job <= 0 then
    notify(("could not run %s: %s"):format(bin, tostring(job)), vim.log.levels.ERROR)
    return nil
  end
  return job
end

local function show_outside_changes(path_list, diff)
  vim.cmd("botright new")
  local buf = api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(diff or "", "\n", { plain = true }))
  vim.bo[buf].filetype = "diff"
  vim.bo[buf].modifiable = false
  pcall(api.nvim_buf_set_name, buf, "mcpdiff://outside-changes/" .. table.concat(path_list, ","))
  vim.cmd("redraw")
  return api.nvim_get_current_win()
end

local function count_text(n)
  return n == 1 and "1 edit" or (n .. " edits")
end

-- str is a value of decoded JSON or msgpack as text ("" for nil and null).
function M.str(v)
  if v == nil or v == vim.NIL then
    return ""
  end
  return tostring(v)
end

local str = M.str

-- target is what a decision acts on: the CLI's arguments naming it, the folder to
-- run the CLI in, and how to name it in messages; nil when there is nothing to
-- decide (said with a warning). See M.decide.
local function target(action, id, opts)
  if id and id ~= "" then
    return { action, id }, opts.cwd or vim.fn.getcwd(), id
  end
  local buf = api.nvim_get_current_buf()
  local name = api.nvim_buf_get_name(buf)
  if name == "" or vim.bo[buf].buftype ~= "" then
    notify(
      ("no edit ID given and this buffer is not a file: use :McpDiff%s ID (see :McpDiffStatus)"):format(
        action == "accept" and "Accept" or "Reject"
      ),
      vim.log.levels.WARN
    )
    return nil
  end
  local rel = vim.fn.fnamemodify(name, ":~:.")
  local cwd = vim.fn.fnamemodify(name, ":h")
  if not opts.range then
    return { action, "--file", name }, cwd, "the pending edits of " .. rel
  end
  local l1, l2 = opts.range[1], opts.range[2]
  local lines = l1 == l2 and ("line " .. l1) or ("lines " .. l1 .. "-" .. l2)
  local touched = require("mcpdiff.changes").touched(buf, l1, l2)
  if #touched == 0 then
    notify(("no pending change on %s of %s"):format(lines, rel), vim.log.levels.WARN)
    return nil
  end
  -- The changes the user sees there, by edit: what the lines mean now.
  local args = { action }
  for _, h in ipairs(touched) do
    table.insert(args, h.edit_id .. ":" .. h.block)
  end
  return args, cwd, lines .. " of " .. rel
end

-- decided says what a successful decision did.
local function decided(action, what, res)
  if #(res.edits or {}) == 0 and #(res.files or {}) == 0 then
    notify(("%s: none left to %s"):format(what, action))
    return
  end
  local msg = ("%s: %s %s"):format(
    what,
    action == "accept" and "accepted" or "rejected",
    count_text(#(res.edits or {}))
  )
  if (tonumber(res.changes) or 0) > 0 then
    msg = msg .. (" (%d change%s)"):format(res.changes, res.changes == 1 and "" or "s")
  end
  if type(res.later) == "table" and #res.later > 0 then
    msg = msg
      .. (", with %d later edit%s in the way"):format(#res.later, #res.later == 1 and "" or "s")
  end
  notify(msg)
end

-- overrule asks whether to go on with a refused decision: over changes made outside
-- mcpdiff ("force") or taking the later edits in the way along ("with_later"). It
-- returns the flag to add, or nil (the refusal said, nothing done).
local function overrule(action, what, res, flags)
  if res.kind == "external_change" and not flags.force then
    local win = show_outside_changes(res.files or {}, res.diff)
    local discard = M.confirm(
      (res.message or "The file changed outside the recorded edits.")
        .. "\nDiscard those outside changes and "
        .. action
        .. "?"
    )
    if api.nvim_win_is_valid(win) then
      api.nvim_win_close(win, true)
    end
    if discard then
      return "force"
    end
    notify(action .. " cancelled: the outside changes were kept", vim.log.levels.WARN)
    return nil
  end
  local later = type(res.later) == "table" and res.later or {}
  if res.kind == "conflict" and action == "reject" and not flags.with_later and #later > 0 then
    local names = {}
    for _, l in ipairs(later) do
      table.insert(names, str(l):sub(1, 8))
    end
    local question = ("Rejecting %s: %d later edit%s (%s) changed those lines since; where they would go is a guess.\nReject %s too?"):format(
      what,
      #names,
      #names == 1 and "" or "s",
      table.concat(names, ", "),
      #names == 1 and "it" or "them"
    )
    if M.confirm_later(question) then
      return "with_later"
    end
    notify(
      "reject cancelled: " .. (res.message or "later edits are in the way"),
      vim.log.levels.WARN
    )
    return nil
  end
  if res.kind == "no_change" then -- nothing to decide there: said, not an error
    notify(("%s: %s"):format(what, res.message or ""), vim.log.levels.WARN)
    return nil
  end
  notify(("%s %s refused: %s"):format(action, what, res.message or ""), vim.log.levels.ERROR)
  return nil
end

-- decide accepts or rejects history edits: id (an edit or conversation id is up to
-- the CLI), else the pending changes of the current file that touch opts.range
-- ({ line1, line2 }), else all pending edits of the current file. The CLI refuses a
-- decision that would write a file some Neovim running mcpdiff (this one included:
-- it asks $NVIM) holds with unsaved changes. A refusal the user may overrule (files
-- changed outside mcpdiff, later edits in the way) is asked about, and the decision
-- tried again with that one more flag: at most twice, as each flag is added once.
-- opts: range, force, with_later, cwd, on_done(ok).
function M.decide(action, id, opts)
  opts = opts or {}
  local function finish(ok)
    if opts.on_done then
      opts.on_done(ok)
    end
  end
  local base, cwd, what = target(action, id, opts)
  if not base then
    return finish(false)
  end
  local flags = { force = opts.force, with_later = opts.with_later }
  local function attempt()
    local args = vim.list_extend(vim.deepcopy(base), { "--json" })
    if flags.force then
      table.insert(args, "--force")
    end
    if flags.with_later then
      table.insert(args, "--with-later")
    end
    M.run(args, cwd, function(code, stdout, stderr)
      local decoded, res = pcall(vim.json.decode, stdout)
      if not decoded or type(res) ~= "table" then
        notify(
          ("%s %s failed (exit %d): %s"):format(
            action,
            what,
            code,
            stderr ~= "" and stderr or stdout
          ),
          vim.log.levels.ERROR
        )
        return finish(false)
      end
      -- A decision an interrupted command left, completed first, says so here.
      for _, w in ipairs(M.notices(stderr).warnings) do
        notify(w, vim.log.levels.WARN)
      end
      if res.ok then
        require("mcpdiff.buffers").reload(res.files or {})
        decided(action, what, res)
        return finish(true)
      end
      if res.kind == "no_store" then
        -- Not a failure to the user: nothing was ever recorded here.
        notify(
          ("%s: none, there is no edit history in %s or above it yet"):format(
            what,
            vim.fn.fnamemodify(cwd, ":~")
          ),
          vim.log.levels.WARN
        )
        return finish(false)
      end
      res.message = res.message or stderr
      local flag = overrule(action, what, res, flags)
      if not flag then
        return finish(false)
      end
      flags[flag] = true
      attempt()
    end, true)
  end
  attempt()
end

-- notices picks what the CLI tells besides its answer out of its stderr: warnings
-- (a decision an interrupted command left and the next one completed, corrupted log
-- lines) and info (files changed outside mcpdiff, with the ways out). The Go side
-- words them; every surface shows them as they come.
function M.notices(stderr)
  local out = { warnings = {}, info = {} }
  for _, line in ipairs(vim.split(stderr or "", "\n", { plain = true })) do
    local kind, text = line:match("^mcpdiff: (%a+): (.+)$")
    if kind == "warning" then
      table.insert(out.warnings, text)
    elseif kind == "info" then
      table.insert(out.info, text)
    end
  end
  return out
end

-- show puts the unified diff of an edit into a split.
function M.show(id, cwd)
  M.run({ "show", id }, cwd, function(code, stdout, stderr)
    if code ~= 0 then
      notify(("show %s failed: %s"):format(id, stderr), vim.log.levels.ERROR)
      return
    end
    vim.cmd("botright new")
    local buf = api.nvim_get_current_buf()
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(stdout, "\n", { plain = true }))
    vim.bo[buf].filetype = "diff"
    vim.bo[buf].modifiable = false
    pcall(api.nvim_buf_set_name, buf, "mcpdiff://show/" .. id)
    vim.keymap.set(
      "n",
      "q",
      require("mcpdiff.window").close_current,
      { buffer = buf, nowait = true }
    )
  end)
end

return M
