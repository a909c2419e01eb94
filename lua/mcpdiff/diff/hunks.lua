-- Hunks of an openDiff proposal: where the proposal differs from the original file,
-- and which of them a range of lines touches, shared by both diff layouts.
--
-- Each side of a diff is read through a "side": { text = what vim.diff compares,
-- count = its number of lines, slice = function(start, n) -> those lines }, so that
-- a 100,000-line text the Go side already sent is never split into a Lua list.
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

-- compute returns the hunks between two sides.
function M.compute(old, new)
  local hunks = {}
  for _, h in ipairs(vim.diff(old.text, new.text, options())) do
    table.insert(hunks, { a_start = h[1], a_count = h[2], b_start = h[3], b_count = h[4] })
  end
  return hunks
end

-- lines_of returns a buffer's lines; an empty buffer (nothing to write, as after
-- deleting every line) has none, unlike one holding a single empty line.
local function lines_of(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, true)
  if #lines == 1 and lines[1] == "" and M.is_empty(buf) then
    return {}
  end
  return lines
end

-- side reads a buffer as a side of a diff. text, when given, is the buffer's text as
-- M.text would make it (the Go side sends it with the lines); else it is read.
function M.side(buf, text)
  if text then
    return {
      text = text,
      count = M.is_empty(buf) and 0 or api.nvim_buf_line_count(buf),
      slice = function(start, n)
        return api.nvim_buf_get_lines(buf, start - 1, start - 1 + n, true)
      end,
    }
  end
  local lines = lines_of(buf)
  return {
    text = M.text(lines),
    count = #lines,
    slice = function(start, n)
      return vim.list_slice(lines, start, start + n - 1)
    end,
  }
end

-- text_side reads a text made as M.text makes it (the Go side sends the original's)
-- as a side of a diff. Indexing its lines takes 3-13 ms for 100,000 lines, less than
-- Neovim takes to load them into a buffer.
function M.text_side(text)
  local starts = { 1 } -- byte offset of every line's start, and one past the end
  local pos = 1
  while true do
    local nl = text:find("\n", pos, true)
    if not nl then
      break
    end
    pos = nl + 1
    starts[#starts + 1] = pos
  end
  return {
    text = text,
    count = #starts - 1,
    slice = function(start, n)
      local out = {}
      for i = start, start + n - 1 do
        out[#out + 1] = text:sub(starts[i], starts[i + 1] - 2)
      end
      return out
    end,
  }
end

-- none is the side of a file that does not exist yet.
M.none = {
  text = "",
  count = 0,
  slice = function()
    return {}
  end,
}

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

-- key names a hunk by where it stands in the original and what the proposal (side
-- new) puts there: it survives changes elsewhere in the proposal, and changes when
-- the hunk's own text is edited (which then needs deciding again).
function M.key(h, new)
  return h.a_start
    .. "\n"
    .. h.a_count
    .. "\n"
    .. table.concat(new.slice(h.b_start, h.b_count), "\n")
end

return M
