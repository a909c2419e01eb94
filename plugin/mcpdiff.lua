-- mcpdiff user commands. Nothing else runs at start-up: the modules load on first use
-- and the bridge starts from require("mcpdiff").setup(). See :help mcpdiff.
if vim.g.loaded_mcpdiff then
  return
end
vim.g.loaded_mcpdiff = true

local command = vim.api.nvim_create_user_command

-- The commands without arguments: name, module, the module's function, description.
local plain = {
  { "McpDiffStart", "mcpdiff", "start", "start the bridge (IDE server for Claude Code)" },
  { "McpDiffStop", "mcpdiff.bridge", "stop", "stop the bridge, remove its lock file" },
  { "McpDiffStatus", "mcpdiff.review", "open", "bridge status and edit history review" },
  { "McpDiffQuickfix", "mcpdiff", "quickfix", "pending edits of the history in the quickfix list" },
  { "McpDiffNextPending", "mcpdiff", "next_pending", "go to the next pending change" },
  { "McpDiffPrevPending", "mcpdiff", "prev_pending", "go to the previous pending change" },
  {
    "McpDiffPreviewPending",
    "mcpdiff",
    "preview_pending",
    "preview the pending changes of the cursor's line",
  },
  -- The names before 0.3, kept for one release ("hunk" is a proposal's word).
  { "McpDiffNextHunk", "mcpdiff", "next_pending", "old name of :McpDiffNextPending" },
  { "McpDiffPrevHunk", "mcpdiff", "prev_pending", "old name of :McpDiffPrevPending" },
  { "McpDiffPreviewHunk", "mcpdiff", "preview_pending", "old name of :McpDiffPreviewPending" },
}
for _, c in ipairs(plain) do
  local name, module, fn, desc = c[1], c[2], c[3], c[4]
  command(name, function()
    require(module)[fn]()
  end, { desc = "mcpdiff: " .. desc })
end

-- range: { line1, line2 } when the command was given a range, else nil.
local function range_of(args)
  return args.range > 0 and { args.line1, args.line2 } or nil
end

-- :McpDiffAccept and :McpDiffReject decide alike, each the other way.
for name, decision in pairs({ McpDiffAccept = "accept", McpDiffReject = "reject" }) do
  command(name, function(args)
    require("mcpdiff")[decision](args.args, range_of(args))
  end, {
    nargs = "?",
    range = true,
    desc = "mcpdiff: "
      .. decision
      .. " the diff in view (or its hunks in range), or history edits (of these lines)",
  })
end

command("McpDiffSend", function(args)
  require("mcpdiff").send(args.line1, args.line2, args.range > 0)
end, { range = true, desc = "mcpdiff: @-mention the file (or the lines) in Claude Code" })

command("McpDiffClaude", function(args)
  require("mcpdiff.terminal").open(args.fargs)
end, { nargs = "*", desc = "mcpdiff: run Claude Code in a terminal connected to this Neovim" })

command("McpDiffAgent", function(args)
  require("mcpdiff.terminal").open_agent(args.fargs[1], vim.list_slice(args.fargs, 2))
end, {
  nargs = "+",
  complete = function(lead)
    return vim.tbl_filter(function(n)
      return n:find(lead, 1, true) == 1
    end, { "claude", "codex", "copilot", "cursor", "gemini", "opencode" })
  end,
  desc = "mcpdiff: run an agent CLI (codex, gemini, opencode, copilot, cursor, claude) in a terminal, recording its edits",
})

command("McpDiffInstallCli", function(args)
  require("mcpdiff.cli").install(args.args, args.bang)
end, {
  nargs = "?",
  bang = true,
  complete = "dir",
  desc = "mcpdiff: make `mcpdiff` a shell command (a link to the plugin's binary in ~/.local/bin or DIR)",
})
