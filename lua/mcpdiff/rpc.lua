-- The Lua functions the Go side (`mcpdiff nvim`; `mcpdiff hook` for bridge.claimed)
-- calls, the one list of them. Go calls them by name only through CallLua in
-- nvim/neovims/rpc.go:
-- require("mcpdiff.rpc").call(name, ...); TestGoCallsOnlyTheseLuaFunctions checks
-- that the names Go uses and the names listed here are the same set. Each entry
-- requires its module when called, so loading this list loads nothing else.
-- (buffers.lua is the exception: Go runs it embedded, in Neovims that may not have
-- the plugin; see nvim/neovims/buffers.go.)
local M = {}

---@type table<string, function>
M.functions = {
  -- Neovim's description for the lock file and the IDE server (neovimInfo in Go).
  ["bridge.neovim_info"] = function()
    return require("mcpdiff.bridge").neovim_info()
  end,

  -- The IDE server listens: where, and the binary's version.
  ---@param info mcpdiff.BridgeInfo
  ["bridge._attached"] = function(info)
    require("mcpdiff.bridge")._attached(info)
  end,

  -- The number of connected clients changed.
  ---@param n integer
  ["bridge._clients"] = function(n)
    require("mcpdiff.bridge")._clients(n)
  end,

  -- Claude Code's PostToolUse hook (`mcpdiff hook`, connected to this Neovim) asks
  -- which of its writes the bridge accepted and recorded.
  ---@param writes mcpdiff.Written[]
  ---@return boolean[]?
  ["bridge.claimed"] = function(writes)
    return require("mcpdiff.bridge").claimed(writes)
  end,

  -- openDiff, step 1: check the file, make the empty proposal buffer.
  ---@param req mcpdiff.DiffRequest
  ---@return {buf: integer, texts: true?}|{error: "dirty"}
  ["diff.prepare"] = function(req)
    return require("mcpdiff.diff").prepare(req)
  end,

  -- openDiff, step 2: Go has filled the proposal buffer; draw the view.
  ---@param tab string
  ---@param texts? mcpdiff.DiffTexts only when prepare asked for them
  ["diff.show"] = function(tab, texts)
    return require("mcpdiff.diff").show(tab, texts)
  end,

  -- Tear a view down without answering (closeReason in nvim/editor.go): the view of
  -- tab whose proposal buffer is buf.
  ---@param tab string
  ---@param reason "accepted"|"closed"|"failed"
  ---@param buf integer
  ["diff.close"] = function(tab, reason, buf)
    return require("mcpdiff.diff").close(tab, reason, buf)
  end,

  -- New pending hunks of open files, and the stores that changed.
  ---@param update mcpdiff.HunksUpdate
  ["hunks._update"] = function(update)
    require("mcpdiff.hunks")._update(update)
  end,

  -- openFile. A file that does not exist is {not_found = true}.
  ---@param args mcpdiff.OpenFileArgs
  ["query.open_file"] = function(args)
    args.filePath = vim.fn.fnamemodify(args.filePath, ":p")
    if vim.fn.filereadable(args.filePath) ~= 1 then
      return { not_found = true }
    end
    return require("mcpdiff.query").open_file(args)
  end,

  -- getDiagnostics: of one file, or (no argument) of every buffer.
  ---@param path? string absolute
  ["query.diagnostics"] = function(path)
    return require("mcpdiff.query").diagnostics(path)
  end,

  -- getCurrentSelection and getLatestSelection.
  ["query.selection"] = function()
    return require("mcpdiff.query").selection()
  end,

  -- getOpenEditors.
  ["query.open_editors"] = function()
    return require("mcpdiff.query").open_editors()
  end,

  -- checkDocumentDirty, and with save saveDocument.
  ---@param path string
  ---@param save boolean
  ["query.document"] = function(path, save)
    return require("mcpdiff.query").document(path, save)
  end,
}

-- call runs the function listed under name with the arguments Go sent.
---@param name string
function M.call(name, ...)
  local f = M.functions[name]
  if not f then
    error("mcpdiff.rpc: no function named " .. tostring(name), 0)
  end
  return f(...)
end

return M
