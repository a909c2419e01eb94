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

-- run starts `mcpdiff <args>` in cwd without blocking; on_done(code, stdout, stderr).
function M.run(args, cwd, on_done)
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

-- resolve accepts or rejects history edits: id (an edit or conversation id is up to
-- the CLI), else the pending edits of the current file. opts: force, cwd, on_done(ok).
function M.resolve(action, id, opts)
  opts = opts or {}
  local args = { action }
  local cwd = opts.cwd or vim.fn.getcwd()
  local what
  if id and id ~= "" then
    table.insert(args, id)
    what = id
  else
    local name = api.nvim_buf_get_name(0)
    if name == "" or vim.bo.buftype ~= "" then
      notify(
        ("no edit ID given and this buffer is not a file: use :McpDiff%s ID (see :McpDiffStatus)"):format(
          action == "accept" and "Accept" or "Reject"
        ),
        vim.log.levels.WARN
      )
      return
    end
    vim.list_extend(args, { "--file", name })
    cwd = vim.fn.fnamemodify(name, ":h")
    what = "the pending edits of " .. vim.fn.fnamemodify(name, ":~:.")
  end
  table.insert(args, "--json")
  if opts.force then
    table.insert(args, "--force")
  end
  local function finish(ok)
    if opts.on_done then
      opts.on_done(ok)
    end
  end
  M.run(args, cwd, function(code, stdout, stderr)
    local decoded, res = pcall(vim.json.decode, stdout)
    if not decoded or type(res) ~= "table" then
      notify(("%s %s failed (exit %d): %s"):format(action, what, code, stderr ~= "" and stderr or stdout), vim.log.levels.ERROR)
      return finish(false)
    end
    -- A decision an interrupted command left, completed first, says so here.
    for _, w in ipairs(M.warnings(stderr)) do
      notify(w, vim.log.levels.WARN)
    end
    if res.ok then
      require("mcpdiff.buffers").reload(res.files or {})
      notify(("%s: %s %s"):format(what, action == "accept" and "accepted" or "rejected", count_text(#(res.edits or {}))))
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
        return M.resolve(action, id, again)
      end
      notify(action .. " cancelled: the outside changes were kept", vim.log.levels.WARN)
      return finish(false)
    end
    notify(("%s %s refused: %s"):format(action, what, res.message or stderr), vim.log.levels.ERROR)
    finish(false)
  end)
end

-- warnings picks the warning lines out of the CLI's stderr: files that differ from
-- their history (with the way out), a decision an interrupted command left and the
-- next one completed, corrupted log lines.
function M.warnings(stderr)
  local out = {}
  for _, line in ipairs(vim.split(stderr or "", "\n", { plain = true })) do
    local w = line:match("^mcpdiff: warning: (.+)$")
    if w then
      table.insert(out, w)
    end
  end
  return out
end

-- entries lists history entries (`mcpdiff status --json`); on_done(list or nil, err,
-- warnings).
function M.entries(cwd, on_done)
  return M.run({ "status", "--json" }, cwd, function(code, stdout, stderr)
    local ok, list = pcall(vim.json.decode, stdout)
    if code ~= 0 or not ok or type(list) ~= "table" then
      on_done(nil, stderr ~= "" and stderr or ("mcpdiff status failed (exit " .. code .. ")"), {})
      return
    end
    on_done(list, nil, M.warnings(stderr))
  end)
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
