-- mcpdiff user commands. Nothing else runs at start-up: the modules load on first use
-- and the bridge starts from require("mcpdiff").setup(). See :help mcpdiff.
if vim.g.loaded_mcpdiff then
  return
end
vim.g.loaded_mcpdiff = true

local command = vim.api.nvim_create_user_command

command("McpDiffStart", function()
  require("mcpdiff.bridge").start()
end, { desc = "mcpdiff: start the bridge (IDE server for Claude Code)" })

command("McpDiffStop", function()
  require("mcpdiff.bridge").stop()
end, { desc = "mcpdiff: stop the bridge, remove its lock file" })

command("McpDiffStatus", function()
  require("mcpdiff.review").open()
end, { desc = "mcpdiff: bridge status and edit history review" })

-- range: { line1, line2 } when the command was given a range, else nil.
local function range_of(args)
  return args.range > 0 and { args.line1, args.line2 } or nil
end

command("McpDiffAccept", function(args)
  require("mcpdiff").accept(args.args, range_of(args))
end, {
  nargs = "?",
  range = true,
  desc = "mcpdiff: accept the diff in view (or its hunks in range), or history edits (of these lines)",
})

command("McpDiffReject", function(args)
  require("mcpdiff").reject(args.args, range_of(args))
end, {
  nargs = "?",
  range = true,
  desc = "mcpdiff: reject the diff in view (or its hunks in range), or history edits (of these lines)",
})

command("McpDiffQuickfix", function()
  require("mcpdiff").quickfix()
end, { desc = "mcpdiff: pending edits of the history in the quickfix list" })

command("McpDiffNextHunk", function()
  require("mcpdiff").next_hunk()
end, { desc = "mcpdiff: go to the next pending edit" })

command("McpDiffPrevHunk", function()
  require("mcpdiff").prev_hunk()
end, { desc = "mcpdiff: go to the previous pending edit" })

command("McpDiffPreviewHunk", function()
  require("mcpdiff").preview_hunk()
end, { desc = "mcpdiff: preview the pending edit under the cursor" })

command("McpDiffSend", function(args)
  require("mcpdiff").send(args.line1, args.line2, args.range > 0)
end, { range = true, desc = "mcpdiff: @-mention the file (or the lines) in Claude Code" })

command("McpDiffClaude", function(args)
  require("mcpdiff.terminal").open(args.fargs)
end, { nargs = "*", desc = "mcpdiff: run Claude Code in a terminal connected to this Neovim" })
