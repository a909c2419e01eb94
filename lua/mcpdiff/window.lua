-- Which window shows a file for the agent: the diff view's original side and
-- openFile both ask here, so neither replaces a sidebar, a terminal or a proposal.
local api = vim.api

local M = {}

-- Windows of these filetypes are sidebars, never the main editor window.
M.sidebar_filetypes = {
  ["neo-tree"] = true,
  NvimTree = true,
  oil = true,
  minifiles = true,
  netrw = true,
  aerial = true,
  tagbar = true,
  qf = true,
  snacks_picker_list = true,
  snacks_layout_box = true,
  mcpdiff = true, -- the review list (:McpDiffStatus)
}

-- close_current closes the current window (q in mcpdiff's own buffers). The last
-- window, which :close cannot close (E444), shows the file used last instead, else
-- an empty buffer.
function M.close_current()
  if pcall(vim.cmd, "close") then
    return
  end
  local cur, best = api.nvim_get_current_buf(), nil
  for _, info in ipairs(vim.fn.getbufinfo({ buflisted = 1 })) do
    if
      info.bufnr ~= cur
      and vim.bo[info.bufnr].buftype == ""
      and (not best or info.lastused > best.lastused)
    then
      best = info
    end
  end
  if best then
    api.nvim_win_set_buf(0, best.bufnr)
  else
    vim.cmd("enew")
  end
end

-- show_file shows path's buffer (made and listed if need be) in the current window and
-- returns it; mods (such as "keepalt ") go before the command. By the buffer, not
-- `:edit`: an Ex command cannot hold a newline, and the rest of a name with one ran
-- as a command of its own.
function M.show_file(path, mods)
  local buf = vim.fn.bufadd(path)
  vim.bo[buf].buflisted = true
  vim.cmd((mods or "") .. "buffer " .. buf)
  return buf
end

-- filetype_of is the filetype Neovim gives a file by its name, or nil: the diff
-- view's proposal takes it, and openFile answers it.
function M.filetype_of(path)
  if vim.fn.has("nvim-0.8") == 1 then
    local ok, ft = pcall(vim.filetype.match, { filename = path })
    return ok and type(ft) == "string" and ft or nil
  end
  -- Neovim 0.7's match(name, bufnr) sets the filetype of bufnr instead of returning
  -- it: a scratch buffer takes it, with no FileType autocmds run for it.
  local ignore = vim.o.eventignore
  vim.o.eventignore = "all"
  local buf = api.nvim_create_buf(false, true)
  pcall(vim.filetype.match, path, buf)
  local ft = vim.bo[buf].filetype
  api.nvim_buf_delete(buf, { force = true })
  vim.o.eventignore = ignore
  return ft ~= "" and ft or nil
end

function M.is_float(w)
  return api.nvim_win_get_config(w).relative ~= ""
end

-- is_editor tells whether window w may show a file: not a float, not in diff mode,
-- not a terminal, prompt, quickfix or help window, not a sidebar, not a proposal.
function M.is_editor(w)
  if M.is_float(w) or vim.wo[w].diff then
    return false
  end
  local b = api.nvim_win_get_buf(w)
  local bt = vim.bo[b].buftype
  if bt == "terminal" or bt == "prompt" or bt == "quickfix" or bt == "help" then
    return false
  end
  return not M.sidebar_filetypes[vim.bo[b].filetype] and vim.b[b].mcpdiff_tab == nil
end

-- find returns the editor window of the current tab that shows buf, else the
-- current window if it is an editor window, else the first one; nil when the tab
-- has none.
function M.find(buf)
  local first
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if M.is_editor(w) then
      if buf and api.nvim_win_get_buf(w) == buf then
        return w
      end
      first = first or w
    end
  end
  local cur = api.nvim_get_current_win()
  if M.is_editor(cur) then
    return cur
  end
  return first
end

-- make_room opens a new window above the tab's first non-floating one (a tab of
-- only terminals, sidebars or floats) and returns it.
function M.make_room()
  if M.is_float(api.nvim_get_current_win()) then
    for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
      if not M.is_float(w) then
        api.nvim_set_current_win(w)
        break
      end
    end
  end
  vim.cmd("aboveleft new")
  return api.nvim_get_current_win()
end

return M
