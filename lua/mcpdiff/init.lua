-- mcpdiff: Neovim as the IDE of coding agents. See :help mcpdiff.
local M = {}

-- The version of this Lua plugin; `mcpdiff version` must report the same one.
M.version = require("mcpdiff.version")

local function notify(msg, level)
  vim.notify("mcpdiff: " .. msg, level or vim.log.levels.INFO)
end

-- follow_clients tracks the selection for Claude Code while a client is connected
-- (and the option track_selection is on).
local function follow_clients(n)
  local track = require("mcpdiff.config").values.track_selection
  require("mcpdiff.selection").set_active(track and n > 0)
end

local subscribed = false

-- subscribe has the modules that follow the bridge listen to it, once: each is
-- loaded when its event first happens.
local function subscribe()
  if subscribed then
    return
  end
  subscribed = true
  local bridge = require("mcpdiff.bridge")
  bridge.on("attached", function()
    require("mcpdiff.changes").attach()
  end)
  bridge.on("clients", follow_clients)
  bridge.on("stopped", function(reason)
    local diff = package.loaded["mcpdiff.diff"]
    if diff then
      diff.close_all(reason)
    end
    local selection = package.loaded["mcpdiff.selection"]
    if selection then
      selection.set_active(false)
    end
  end)
end

-- start implements :McpDiffStart: the bridge, with the modules that follow it.
-- Returns true when a bridge runs.
function M.start()
  subscribe()
  return require("mcpdiff.bridge").start()
end

-- setup validates the options and starts the bridge (unless auto_start = false)
-- right after. Calling it again applies the new options; a running bridge is kept.
function M.setup(opts)
  local config = require("mcpdiff.config")
  local ok, err, warnings = config.apply(opts)
  for _, w in ipairs(warnings or {}) do
    notify(w, vim.log.levels.WARN)
  end
  if not ok then
    notify(err, vim.log.levels.ERROR)
    return false
  end
  -- Options that act on a running bridge take effect now, not on its next event.
  local bridge = package.loaded["mcpdiff.bridge"]
  if bridge and bridge.running() then
    follow_clients(bridge.clients())
  end
  local changes = package.loaded["mcpdiff.changes"]
  if changes then
    changes.redraw() -- signs on or off
  end
  M.set_keymaps(config.values.keymaps)
  -- From now on each file buffer keeps the stamp of what it read (the reload rule).
  require("mcpdiff.buffers").track()
  if config.values.auto_start then
    -- Off Neovim's start-up path: the job starts on the first turn of the event loop.
    vim.schedule(M.start)
  end
  return true
end

-- decide dispatches :McpDiffAccept / :McpDiffReject. In a diff view (no ID) it answers
-- for the proposal, or with a range { line1, line2 } for the proposal's hunks there;
-- elsewhere it decides recorded history edits: ID, else the pending changes of the
-- current file touching range, else all pending edits of the file.
local function decide(action, id, range)
  local diff = require("mcpdiff.diff")
  local proposal = (id == nil or id == "") and diff.current() or nil
  if proposal then
    diff.answer(action, proposal, range)
    return
  end
  require("mcpdiff.history").decide(action, id, { range = range })
end

-- accept implements :[range]McpDiffAccept [ID].
function M.accept(id, range)
  decide("accept", id, range)
end

-- reject implements :[range]McpDiffReject [ID].
function M.reject(id, range)
  decide("reject", id, range)
end

-- hunks returns the pending changes of history edits in a buffer (see :help
-- mcpdiff.hunks(); the name the contract gives it).
function M.hunks(bufnr)
  return require("mcpdiff.changes").changes(bufnr)
end

-- next_pending and prev_pending move the cursor to the next or previous pending
-- change of the history.
function M.next_pending()
  return require("mcpdiff.changes").jump(1)
end

function M.prev_pending()
  return require("mcpdiff.changes").jump(-1)
end

-- preview_pending shows the pending changes of the cursor's line in a float.
function M.preview_pending()
  return require("mcpdiff.changes").preview()
end

-- The names before 0.3, kept for one release.
M.next_hunk, M.prev_hunk, M.preview_hunk = M.next_pending, M.prev_pending, M.preview_pending

-- quickfix fills the quickfix list with the pending changes under the working folder.
function M.quickfix()
  return require("mcpdiff.changes").quickfix()
end

-- The global keys set_keymaps mapped, so that setup() called again can take back
-- those its new options no longer name.
local global_keys = {}

-- set_keymaps sets the global keymaps of pending changes, each only where no mapping
-- (the user's, or another plugin's) is in the way.
function M.set_keymaps(keymaps)
  local maps = {
    { keymaps.next_pending, M.next_pending, "next pending change" },
    { keymaps.prev_pending, M.prev_pending, "previous pending change" },
    { keymaps.preview_pending, M.preview_pending, "preview the pending changes of the line" },
  }
  -- Take back the keys an earlier setup() mapped while they are still ours (one the
  -- user mapped since stays); those still wanted are mapped again below.
  for lhs in pairs(global_keys) do
    local current = vim.fn.maparg(lhs, "n", false, true)
    if current.buffer == 0 and (current.desc or ""):find("^mcpdiff: ") then
      vim.api.nvim_del_keymap("n", lhs)
    end
  end
  global_keys = {}
  for _, m in ipairs(maps) do
    if m[1] and vim.fn.maparg(m[1], "n") == "" then
      global_keys[m[1]] = true
      -- The API, not vim.keymap: setup() stays off the module loader.
      vim.api.nvim_set_keymap(
        "n",
        m[1],
        "",
        { callback = m[2], desc = "mcpdiff: " .. m[3], noremap = true }
      )
    end
  end
end

-- send implements :McpDiffSend: an @-mention of the file (and lines) for Claude Code.
function M.send(line1, line2, has_range)
  require("mcpdiff.selection").mention(line1, line2, has_range)
end

return M
