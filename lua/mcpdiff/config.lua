-- Configuration: defaults, validation and the current values.
-- Kept dependency-free so that setup() stays cheap.
local M = {}

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

-- A keymap is a key or false; "" is no key (mapping it is an error in every view).
local function key_or_false(v)
  return v == false or (type(v) == "string" and v ~= "")
end
local keymap = { key_or_false, "a non-empty string or false" }

local function command(v)
  return type(v) == "string" and v ~= ""
end

-- table_where is a check that v is a table whose every key and value pass ok.
local function table_where(ok)
  return function(v)
    if type(v) ~= "table" then
      return false
    end
    for k, x in pairs(v) do
      if not ok(k, x) then
        return false
      end
    end
    return true
  end
end

-- Each agent's command, a non-empty string.
local commands_by_name = table_where(function(_, c)
  return command(c)
end)

local list_of_strings = table_where(function(k, s)
  return type(k) == "number" and type(s) == "string"
end)

local function positive_number(v)
  return type(v) == "number" and v > 0
end

local function positive_number_or_false(v)
  return v == false or positive_number(v)
end

-- Every option, in the order the help shows them: its dotted name, its default, its
-- check (a type name, or {function, description}; {type, true} is optional) and what
-- the help says of it. The defaults, the validation and the defaults block of
-- :help mcpdiff-config all come from this list (TestHelpShowsTheConfigDefaults).
M.options = {
  {
    "bin",
    nil,
    { "string", true },
    "The mcpdiff binary. nil: <plugin folder>/bin/mcpdiff (built by make).",
  },
  { "auto_start", true, { "boolean" }, "Start the bridge from setup()." },
  {
    "track_selection",
    true,
    { "boolean" },
    "Send your cursor position and visual selection to connected Claude Code clients (never from terminal buffers).",
  },
  {
    "keep_focus",
    false,
    { "boolean" },
    "Keep the cursor where it is when a diff opens, instead of moving it to the proposal.",
  },
  {
    "signs",
    true,
    { "boolean" },
    "Show the pending edits of the history in the sign column of file buffers (|mcpdiff-pending|).",
  },
  { "diff", {}, { "table" }, "How diffs from Claude Code are shown (|mcpdiff-diff|)." },
  {
    "diff.layout",
    "vertical",
    { one_of({ "vertical", "horizontal", "inline" }) },
    '"vertical": side by side; "horizontal": the proposal below; "inline": the proposal alone, in your window (|mcpdiff-inline|).',
  },
  {
    "diff.open_in_new_tab",
    false,
    { "boolean" },
    "Always open diffs in a new tab page (one is used anyway when the tab already shows a diff).",
  },
  { "keymaps", {}, { "table" }, "Keymaps; false disables one." },
  { "keymaps.accept", "<leader>da", keymap, "In a proposal: accept it." },
  { "keymaps.reject", "<leader>dq", keymap, "In a proposal: reject it." },
  {
    "keymaps.accept_hunk",
    "<leader>dk",
    keymap,
    "In a proposal: keep the hunk(s) under the cursor.",
  },
  { "keymaps.reject_hunk", "<leader>dr", keymap, "In a proposal: take their original lines back." },
  {
    "keymaps.next_hunk",
    "]c",
    keymap,
    "Next hunk of a proposal in the inline layout (diff mode has its own ]c and [c).",
  },
  { "keymaps.prev_hunk", "[c", keymap, "Previous hunk of a proposal in the inline layout." },
  {
    "keymaps.next_pending",
    "]h",
    keymap,
    "Global: next pending edit of the history (|mcpdiff-pending|); set only when nothing is mapped to it already, as are the next two.",
  },
  { "keymaps.prev_pending", "[h", keymap, "Global: previous pending edit." },
  {
    "keymaps.preview_pending",
    false,
    keymap,
    "Global: preview the pending edit under the cursor.",
  },
  { "terminal", {}, { "table" }, ":McpDiffClaude and :McpDiffAgent (|mcpdiff-claude|)." },
  { "terminal.cmd", "claude", { command, "a non-empty string" }, "The command." },
  {
    "terminal.args",
    {},
    { list_of_strings, "a list of strings" },
    "Arguments before those of :McpDiffClaude.",
  },
  {
    "terminal.split",
    "vertical",
    { one_of({ "vertical", "horizontal", "tab" }) },
    "Where the terminal opens.",
  },
  {
    "terminal.size",
    0.4,
    { positive_number, "a positive number" },
    "A fraction of the editor (0 < size < 1), or a number of columns or lines.",
  },
  {
    "terminal.diff_size",
    0.2,
    { positive_number_or_false, "a positive number or false" },
    "Its size, like size, while a proposal is shown in its tab, so that the diff gets the room (|mcpdiff-claude|); false keeps it as it is.",
  },
  { "terminal.env", {}, { "table" }, "Extra environment variables for the terminal job." },
  {
    "terminal.agents",
    {
      codex = "codex",
      copilot = "copilot",
      cursor = "cursor-agent",
      gemini = "gemini",
      opencode = "opencode",
    },
    { commands_by_name, "a table of agent names to commands (non-empty strings)" },
    "The command of each agent :McpDiffAgent runs (|mcpdiff-agents|).",
  },
  {
    "terminal.hooks",
    true,
    { "boolean" },
    "Pass the agent the hooks that record its own edits and refuse writes to buffers with unsaved changes, where it takes them for one run (|mcpdiff-auto-mode|).",
  },
}

local schema = {}
M.defaults = {}
for _, o in ipairs(M.options) do
  local name, default, check = o[1], o[2], o[3]
  schema[name] = check
  local group, key = name:match("^([^.]+)%.(.+)$")
  if group then
    M.defaults[group][key] = vim.deepcopy(default)
  else
    M.defaults[name] = vim.deepcopy(default)
  end
end

M.values = vim.deepcopy(M.defaults)

-- wrap splits text into lines of at most width characters, between words.
local function wrap(text, width)
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and #line + 1 + #word > width then
      table.insert(lines, line)
      line = word
    else
      line = line == "" and word or line .. " " .. word
    end
  end
  table.insert(lines, line)
  return lines
end

-- help_defaults is the defaults block of :help mcpdiff-config: a setup() call with
-- every option at its default, each under its description.
function M.help_defaults()
  local out = { '    require("mcpdiff").setup({' }
  local open_group
  for _, o in ipairs(M.options) do
    local name, default, doc = o[1], o[2], o[4]
    local group, key = name:match("^([^.]+)%.(.+)$")
    if open_group and group ~= open_group then
      table.insert(out, "      },")
      open_group = nil
    end
    local indent = group and "        " or "      "
    for _, l in ipairs(wrap(doc, 78 - #indent - 3)) do
      table.insert(out, indent .. "-- " .. l)
    end
    if
      type(default) == "table"
      and next(default) == nil
      and not group
      and schema[name][1] == "table"
    then
      table.insert(out, indent .. name .. " = {")
      open_group = name
    else
      local value = default == nil and "nil" or vim.inspect(default, { newline = " ", indent = "" })
      table.insert(out, indent .. (key or name) .. " = " .. value .. ",")
    end
  end
  if open_group then
    table.insert(out, "      },")
  end
  table.insert(out, "    })")
  return out
end

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
