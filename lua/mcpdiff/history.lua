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

-- resolve accepts or rejects history edits: id (an edit or conversation id is up to
-- the CLI), else the pending changes of the current file that touch opts.range
-- ({ line1, line2 }), else all pending edits of the current file. The CLI refuses a
-- decision that would write a file some Neovim running mcpdiff (this one included:
-- it asks $NVIM) holds with unsaved changes. opts: range, force, with_later, cwd,
-- on_done(ok).
function M.resolve(action, id, opts)
  opts = opts or {}
  local function finish(ok)
    if opts.on_done then
      opts.on_done(ok)
    end
  end
  local args = { action }
  local cwd = opts.cwd or vim.fn.getcwd()
  local what
  if id and id ~= "" then
    table.insert(args, id)
    what = id
  else
    local buf = api.nvim_get_current_buf()
    local name = api.nvim_buf_get_name(buf)
    if name == "" or vim.bo[buf].buftype ~= "" then
      notify(
        ("no edit ID given and this buffer is not a file: use :McpDiff%s ID (see :McpDiffStatus)"):format(
          action == "accept" and "Accept" or "Reject"
        ),
        vim.log.levels.WARN
      )
      return finish(false)
    end
    local rel = vim.fn.fnamemodify(name, ":~:.")
    vim.list_extend(args, { "--file", name })
    cwd = vim.fn.fnamemodify(name, ":h")
    what = "the pending edits of " .. rel
    if opts.range then
      local l1, l2 = opts.range[1], opts.range[2]
      local lines = l1 == l2 and ("line " .. l1) or ("lines " .. l1 .. "-" .. l2)
      local touched = require("mcpdiff.hunks").touched(buf, l1, l2)
      if #touched == 0 then
        notify(("no pending change on %s of %s"):format(lines, rel), vim.log.levels.WARN)
        return finish(false)
      end
      -- The changes the user sees there, by edit: what the lines mean now.
      args = { action }
      for _, h in ipairs(touched) do
        table.insert(args, h.edit_id .. ":" .. h.block)
      end
      what = lines .. " of " .. rel
    end
  end
  table.insert(args, "--json")
  if opts.force then
    table.insert(args, "--force")
  end
  if opts.with_later then
    table.insert(args, "--with-later")
  end
  M.run(args, cwd, function(code, stdout, stderr)
    local decoded, res = pcall(vim.json.decode, stdout)
    if not decoded or type(res) ~= "table" then
      notify(
        ("%s %s failed (exit %d): %s"):format(action, what, code, stderr ~= "" and stderr or stdout),
        vim.log.levels.ERROR
      )
      return finish(false)
    end
    -- A decision an interrupted command left, completed first, says so here.
    for _, w in ipairs(M.notices(stderr).warnings) do
      notify(w, vim.log.levels.WARN)
    end
    if res.ok then
      local files = res.files or {}
      require("mcpdiff.buffers").reload(files)
      local msg = ("%s: %s %s"):format(
        what,
        action == "accept" and "accepted" or "rejected",
        count_text(#(res.edits or {}))
      )
      if (tonumber(res.hunks) or 0) > 0 then
        msg = msg .. (" (%d change%s)"):format(res.hunks, res.hunks == 1 and "" or "s")
      end
      if type(res.later) == "table" and #res.later > 0 then
        msg = msg
          .. (", with %d later edit%s in the way"):format(#res.later, #res.later == 1 and "" or "s")
      end
      notify(msg)
      return finish(true)
    end
    if res.kind == "external_change" and not opts.force then
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
        local again = vim.deepcopy(opts)
        again.force = true
        again.on_done = opts.on_done
        return M.resolve(action, id, again)
      end
      notify(action .. " cancelled: the outside changes were kept", vim.log.levels.WARN)
      return finish(false)
    end
    if
      res.kind == "conflict"
      and action == "reject"
      and not opts.with_later
      and type(res.later) == "table"
      and #res.later > 0
    then
      local names = {}
      for _, l in ipairs(res.later) do
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
        local again = vim.deepcopy(opts)
        again.with_later = true
        again.on_done = opts.on_done
        return M.resolve(action, id, again)
      end
      notify(
        "reject cancelled: " .. (res.message or "later edits are in the way"),
        vim.log.levels.WARN
      )
      return finish(false)
    end
    notify(("%s %s refused: %s"):format(action, what, res.message or stderr), vim.log.levels.ERROR)
    finish(false)
  end, true)
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
    vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true })
  end)
end

return M
