-- Hunks of an openDiff proposal: where the proposal differs from the original file,
-- and which of them a range of lines touches. Pure functions over lists of lines
-- (plus the buffer and 'diffopt' readers they need), shared by both diff layouts.
--
-- A hunk is { a_start, a_count, b_start, b_count } as vim.diff's "indices" give it:
-- lines a_start .. a_start+a_count-1 of the original became lines b_start ..
-- b_start+b_count-1 of the proposal. A side with count 0 starts at the line before
-- the place the other side's lines stand at (0 when at the top).
local M = {}

local api = vim.api

local has_linematch = vim.fn.has("nvim-0.9") == 1

-- options turns 'diffopt' into vim.diff options, so that the hunks decided on are the
-- ones diff mode shows. (icase has no vim.diff counterpart; it is ignored.)
local function options()
  local opts = { result_type = "indices" }
  for _, item in ipairs(vim.split(vim.o.diffopt, ",", { plain = true })) do
    local name, value = item:match("^([^:]+):?(.*)$")
    if name == "algorithm" and value ~= "" then
      opts.algorithm = value
    elseif name == "indent-heuristic" then
      opts.indent_heuristic = true
    elseif name == "iwhite" then
      opts.ignore_whitespace_change = true
    elseif name == "iwhiteall" then
      opts.ignore_whitespace = true
    elseif name == "iwhiteeol" then
      opts.ignore_whitespace_change_at_eol = true
    elseif name == "iblank" then
      opts.ignore_blank_lines = true
    elseif name == "linematch" and has_linematch and tonumber(value) then
      opts.linematch = tonumber(value)
    end
  end
  return opts
end

-- text is the input vim.diff compares: every line ends with a newline, so that a
-- missing final newline is never a difference (it follows the proposal's format).
function M.text(lines)
  if #lines == 0 then
    return ""
  end
  return table.concat(lines, "\n") .. "\n"
end

-- compute returns the hunks between two texts made by M.text.
function M.compute(old_text, new_text)
  local hunks = {}
  for _, h in ipairs(vim.diff(old_text, new_text, options())) do
    table.insert(hunks, { a_start = h[1], a_count = h[2], b_start = h[3], b_count = h[4] })
  end
  return hunks
end

-- lines returns a buffer's lines; an empty buffer (nothing to write, as after
-- deleting every line) has none, unlike one holding a single empty line.
function M.lines(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, true)
  if #lines == 1 and lines[1] == "" and M.is_empty(buf) then
    return {}
  end
  return lines
end

-- is_empty tells whether a buffer holds no line at all (Neovim shows one empty line
-- either way; only the byte count tells them apart).
function M.is_empty(buf)
  if api.nvim_buf_line_count(buf) ~= 1 then
    return false
  end
  return api.nvim_buf_call(buf, function()
    return vim.fn.wordcount().bytes == 0
  end)
end

-- span returns the lines a hunk occupies on one side ("a" original, "b" proposal):
-- its own lines, or for a side where it has none, the line its other side's lines
-- are shown above (the last line when they stand at the end).
function M.span(h, side, line_count)
  local start, count = h[side .. "_start"], h[side .. "_count"]
  if count > 0 then
    return start, start + count - 1
  end
  local at = math.max(1, math.min(start + 1, line_count))
  return at, at
end

-- touched returns the hunks that lines line1..line2 of one side touch.
function M.touched(hunks, side, line1, line2, line_count)
  local out = {}
  for _, h in ipairs(hunks) do
    local first, last = M.span(h, side, line_count)
    if first <= line2 and last >= line1 then
      table.insert(out, h)
    end
  end
  return out
end

-- key names a hunk by where it stands in the original and what the proposal puts
-- there: it survives changes elsewhere in the proposal, and changes when the hunk's
-- own text is edited (which then needs deciding again).
function M.key(h, new_lines)
  local parts = { h.a_start, h.a_count }
  for i = h.b_start, h.b_start + h.b_count - 1 do
    table.insert(parts, new_lines[i])
  end
  return table.concat(parts, "\n")
end

return M
