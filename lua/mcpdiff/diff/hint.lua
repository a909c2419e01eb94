-- The key hint of a diff view: the keys that answer the proposal, fitted to the
-- window's width, in the winbar (the status line before Neovim 0.8).
local M = {}

local api = vim.api
local state = require("mcpdiff.diff.state")

local cfg = state.cfg

M.has_winbar = vim.fn.has("nvim-0.8") == 1
-- The window option that shows the key hint: the winbar, or before Neovim 0.8 the
-- status line (end-of-line text on line 1 was out of sight when that line was
-- folded or wider than the window).
M.bar = M.has_winbar and "winbar" or "statusline"

function M.escape(s)
  return (s:gsub("%%", "%%%%"))
end

-- hint_text is the view's key hint that fits in width columns: the longest of a few
-- forms, down to the two keys that always work (side by side windows are narrow).
local function hint_text(view, width)
  if view.status == "accepted" then
    return "mcpdiff: accepted, waiting for the agent to write the file"
  end
  local km = cfg().keymaps
  -- Keys as typed: <leader> is the user's leader (short enough for one line).
  local leader = vim.g.mapleader == nil and "\\"
    or (vim.g.mapleader == " " and "<Space>" or vim.g.mapleader)
  local function key(lhs)
    return (lhs:gsub("<[Ll][Ee][Aa][Dd][Ee][Rr]>", function()
      return leader
    end))
  end
  -- hunk_words nil: without the hunk keys.
  local function form(sep, hunk_words)
    local parts = {
      ":w" .. (km.accept and (sep .. key(km.accept)) or "") .. " accept",
      ":q" .. (km.reject and (sep .. key(km.reject)) or "") .. " reject",
    }
    if km.accept_hunk and hunk_words then
      table.insert(parts, key(km.accept_hunk) .. " keep" .. hunk_words)
    end
    if km.reject_hunk and hunk_words then
      table.insert(parts, key(km.reject_hunk) .. " undo" .. hunk_words)
    end
    return table.concat(parts, " · ")
  end
  -- The accept and reject keys outlast the hunk keys: half of an 80-column screen
  -- still shows them.
  local forms = {
    "mcpdiff: " .. form(" or ", " hunk"),
    form(" or ", " hunk"),
    form("/", ""),
    form(" or ", nil),
    form("/", nil),
    ":w accept · :q reject",
  }
  for _, text in ipairs(forms) do
    if vim.fn.strdisplaywidth(text) + 2 <= width then
      return text
    end
  end
  return forms[#forms]
end

-- show_hint puts the key hint, fitted to the window's width, in the winbar (or the
-- status line) of each window showing the proposal.
function M.show(view)
  for _, w in ipairs(vim.fn.win_findbuf(view.buf)) do
    local text = hint_text(view, api.nvim_win_get_width(w))
    vim.wo[w][M.bar] = "%#DiffAdd# " .. M.escape(text) .. " %*"
  end
end

return M
