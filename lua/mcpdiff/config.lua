-- Configuration: defaults, validation and the current values.
-- Kept dependency-free so that setup() stays cheap.
local M = {}

M.defaults = {
  -- Path of the mcpdiff binary. nil means <plugin root>/bin/mcpdiff (built by `make`).
  bin = nil,
  -- Start the bridge (IDE server for Claude Code) from setup().
  auto_start = true,
  -- Send the cursor/visual selection to connected Claude Code clients.
  track_selection = true,
  -- Keep the cursor where it was when a diff opens, instead of moving it to the proposal.
  keep_focus = false,
  -- Show the pending edits of the history in the sign column of file buffers.
  signs = true,
  diff = {
    -- "vertical" (side by side), "horizontal" (proposal below) or "inline" (one
    -- window: the proposal, with the removed lines shown above where they were).
    layout = "vertical",
    -- Always open diffs in a new tab (a new tab is used anyway when the current tab
    -- already shows a diff window).
    open_in_new_tab = false,
  },
  -- Buffer-local keymaps of the proposal buffer; false disables one.
  keymaps = {
    accept = "<leader>da",
    reject = "<leader>dq",
    -- The hunk under the cursor (or the visual selection's hunks): keep it, or take
    -- the original lines back.
    accept_hunk = "<leader>dk",
    reject_hunk = "<leader>dr",
    -- Next and previous hunk in the inline layout (diff mode has its own ]c and [c).
    next_hunk = "]c",
    prev_hunk = "[c",
    -- Global keymaps to move between pending edits of the history, and to preview
    -- the one under the cursor; each is set only where it shadows no mapping.
    next_pending = "]h",
    prev_pending = "[h",
    preview_pending = false,
  },
  -- :McpDiffClaude
  terminal = {
    cmd = "claude",
    args = {},
    -- "vertical", "horizontal" or "tab"
    split = "vertical",
    -- Fraction of the editor (0 < size < 1) or a number of columns/lines.
    size = 0.4,
    -- Extra environment for the terminal job.
    env = {},
    -- Pass Claude Code the hooks that record its own edits in the edit history and
    -- refuse writes to buffers with unsaved changes (claude --settings).
    hooks = true,
  },
}

M.values = vim.deepcopy(M.defaults)

local function one_of(choices)
  return function(v)
    for _, c in ipairs(choices) do
      if v == c then
        return true
      end
    end
    return false
  end,
    "one of " .. table.concat(choices, ", ")
end

local function string_or_false(v)
  return v == false or type(v) == "string"
end

local function list_of_strings(v)
  if type(v) ~= "table" then
    return false
  end
  for k, s in pairs(v) do
    if type(k) ~= "number" or type(s) ~= "string" then
      return false
    end
  end
  return true
end

local function positive_number(v)
  return type(v) == "number" and v > 0
end

-- Validators per dotted key: a type name, or {function, description}.
local schema = {
  bin = { "string", true },
  auto_start = { "boolean" },
  track_selection = { "boolean" },
  keep_focus = { "boolean" },
  signs = { "boolean" },
  diff = { "table" },
  ["diff.layout"] = { one_of({ "vertical", "horizontal", "inline" }) },
  ["diff.open_in_new_tab"] = { "boolean" },
  keymaps = { "table" },
  ["keymaps.accept"] = { string_or_false, "a string or false" },
  ["keymaps.reject"] = { string_or_false, "a string or false" },
  ["keymaps.accept_hunk"] = { string_or_false, "a string or false" },
  ["keymaps.reject_hunk"] = { string_or_false, "a string or false" },
  ["keymaps.next_hunk"] = { string_or_false, "a string or false" },
  ["keymaps.prev_hunk"] = { string_or_false, "a string or false" },
  ["keymaps.next_pending"] = { string_or_false, "a string or false" },
  ["keymaps.prev_pending"] = { string_or_false, "a string or false" },
  ["keymaps.preview_pending"] = { string_or_false, "a string or false" },
  terminal = { "table" },
  ["terminal.cmd"] = { "string" },
  ["terminal.args"] = { list_of_strings, "a list of strings" },
  ["terminal.split"] = { one_of({ "vertical", "horizontal", "tab" }) },
  ["terminal.size"] = { positive_number, "a positive number" },
  ["terminal.env"] = { "table" },
  ["terminal.hooks"] = { "boolean" },
}

-- Returns the unknown keys of opts (dotted), comparing against the defaults.
local function unknown_keys(opts, defaults, prefix, out)
  for k, v in pairs(opts) do
    local name = prefix .. tostring(k)
    if defaults[k] == nil and schema[name] == nil then
      table.insert(out, name)
    elseif type(v) == "table" and type(defaults[k]) == "table" and next(defaults[k]) ~= nil then
      -- Only non-empty default tables are option groups; args and env are free-form.
      unknown_keys(v, defaults[k], name .. ".", out)
    end
  end
  return out
end

local function lookup(t, dotted)
  local v = t
  for part in dotted:gmatch("[^.]+") do
    if type(v) ~= "table" then
      return nil
    end
    v = v[part]
  end
  return v
end

-- Neovim 0.11 deprecates vim.validate's table form for (name, value, validator, ...).
local validate_per_argument = vim.fn.has("nvim-0.11") == 1

-- validate checks merged values against the schema with vim.validate, in name order
-- so that the first error reported is always the same.
local function validate(merged)
  local names = vim.tbl_keys(schema)
  table.sort(names)
  for _, name in ipairs(names) do
    local validator, extra = schema[name][1], schema[name][2]
    local value = lookup(merged, name)
    local ok, err
    if validate_per_argument then
      local optional = extra == true
      local message = type(extra) == "string" and extra or nil
      ok, err = pcall(vim.validate, name, value, validator, optional, message)
    else
      ok, err = pcall(vim.validate, { [name] = { value, validator, extra } })
    end
    if not ok then
      return false, err
    end
  end
  return true
end

-- apply merges opts over the defaults. Returns ok, error message, warnings.
function M.apply(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    return false, "setup() expects a table, got " .. type(opts)
  end
  local warnings = {}
  local unknown = unknown_keys(opts, M.defaults, "", {})
  if #unknown > 0 then
    table.sort(unknown)
    table.insert(
      warnings,
      "unknown option(s) ignored: " .. table.concat(unknown, ", ") .. " (see :help mcpdiff-config)"
    )
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace, they do not merge index by index.
  if opts.terminal and opts.terminal.args then
    merged.terminal.args = opts.terminal.args
  end
  local ok, err = validate(merged)
  if not ok then
    return false,
      "invalid setup() option: "
        .. tostring(err):gsub("^[^:]+:%d+: ", "", 1)
        .. " (see :help mcpdiff-config)",
      warnings
  end
  M.values = merged
  return true, nil, warnings
end

return M
