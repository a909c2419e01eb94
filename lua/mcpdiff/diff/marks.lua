-- What a diff view draws over its proposal buffer for the hunks (extmarks in one
-- namespace): in the inline layout the changed lines' highlights and the removed
-- lines as virtual lines above where they were; in both layouts a marker on the
-- hunks the user kept.
local M = {}

local api = vim.api
local hunks_mod = require("mcpdiff.diff.hunks")

M.ns = api.nvim_create_namespace("mcpdiff_hunks")

-- Linked with default, so a colour scheme (or the user) can set them; such links
-- survive :highlight clear.
for name, target in pairs({
  McpDiffInlineAdd = "DiffAdd", -- lines the proposal adds
  McpDiffInlineChange = "DiffChange", -- lines the proposal changes (their new text)
  McpDiffInlineDelete = "DiffDelete", -- removed lines, shown as virtual lines
  McpDiffHunkKept = "Comment", -- the marker of a kept hunk
}) do
  api.nvim_set_hl(0, name, { link = target, default = true })
end

local function plural(n, word)
  return n == 1 and ("1 " .. word) or (n .. " " .. word .. "s")
end

-- Removed lines are padded to the screen's width so that their highlight reads as a
-- whole line, like diff mode's filler; a virtual line is cut at the window's edge.
local function removed_lines(orig, h, pad)
  local out = {}
  for _, line in ipairs(orig.slice(h.a_start, h.a_count)) do
    table.insert(out, { { line, "McpDiffInlineDelete" }, { pad, "McpDiffInlineDelete" } })
  end
  return out
end

-- draw redraws the marks of buf. view: { inline, kept = {key = true} }; hunks from
-- diff.hunks.compute between the sides orig and new (buf).
function M.draw(buf, view, hunks, orig, new)
  api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  local any_kept = next(view.kept) ~= nil
  local pad = string.rep(" ", vim.o.columns)
  for _, h in ipairs(hunks) do
    local first = hunks_mod.span(h, "b", new.count)
    local row = first - 1
    if any_kept and view.kept[hunks_mod.key(h, new)] then
      local what = h.b_count > 0 and "kept"
        or ("kept: " .. plural(h.a_count, "line") .. " removed here")
      api.nvim_buf_set_extmark(buf, M.ns, row, 0, {
        virt_text = { { "  ✓ " .. what, "McpDiffHunkKept" } },
        virt_text_pos = "eol",
      })
    elseif view.inline then
      if h.b_count > 0 then
        -- One range to the start of the next line, highlighted to the window's edge
        -- (line_hl_group would open the sign column on Neovim 0.7).
        api.nvim_buf_set_extmark(buf, M.ns, row, 0, {
          end_row = row + h.b_count,
          end_col = 0,
          hl_group = h.a_count == 0 and "McpDiffInlineAdd" or "McpDiffInlineChange",
          hl_eol = true,
          priority = 100,
        })
      end
      if h.a_count > 0 then
        -- Above the hunk's first line; removed lines at the very end go below the last.
        local below = h.b_count == 0 and h.b_start >= new.count and new.count > 0
        api.nvim_buf_set_extmark(buf, M.ns, below and new.count - 1 or row, 0, {
          virt_lines = removed_lines(orig, h, pad),
          virt_lines_above = not below,
        })
      end
    end
  end
end

function M.clear(buf)
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  end
end

return M
