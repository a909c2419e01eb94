-- :McpDiffInstallCli: makes `mcpdiff` a shell command. A plugin manager builds the
-- binary inside the plugin folder, which is on no PATH; a symbolic link to it in a
-- folder of PATH makes the shell commands of the help work, and follows every
-- rebuild of the binary.
local M = {}

local uv = vim.uv or vim.loop

-- default_dir is where the link goes when no folder is named: the folder for a user's
-- own commands (XDG base directories), on PATH in most distributions' shell profiles.
M.default_dir = "~/.local/bin"

local function notify(msg, level)
  vim.notify("mcpdiff: " .. msg, level or vim.log.levels.INFO)
end

-- absolute is dir with a leading ~ expanded, made absolute, without a trailing slash.
-- Nothing else is expanded: a folder's name may hold any character.
local function absolute(dir)
  if dir == "~" or dir:sub(1, 2) == "~/" then
    dir = (vim.env.HOME or "") .. dir:sub(2)
  end
  if dir:sub(1, 1) ~= "/" then
    dir = vim.fn.getcwd() .. "/" .. dir
  end
  dir = dir:gsub("/+$", "")
  return dir == "" and "/" or dir
end

-- same_place says whether two paths name one file or folder (links resolved);
-- paths that do not exist are compared as written.
local function same_place(a, b)
  return (uv.fs_realpath(a) or a) == (uv.fs_realpath(b) or b)
end

-- on_path says whether dir is one of $PATH's folders.
local function on_path(dir)
  for _, entry in ipairs(vim.split(vim.env.PATH or "", ":", { plain = true })) do
    if entry ~= "" and same_place(absolute(entry), dir) then
      return true
    end
  end
  return false
end

-- runs_bin says whether the `mcpdiff` a shell finds on PATH is bin itself, and
-- returns that command's path ("" when there is none).
function M.runs_bin(bin)
  local found = vim.fn.exepath("mcpdiff")
  return found ~= "" and same_place(found, bin), found
end

-- link_to makes link a symbolic link to bin; a link already there is replaced by a
-- rename, so that the command never goes missing.
local function link_to(bin, link)
  local tmp = ("%s.mcpdiff-%d.tmp"):format(link, uv.os_getpid())
  uv.fs_unlink(tmp)
  local ok, err = uv.fs_symlink(bin, tmp)
  if ok then
    ok, err = uv.fs_rename(tmp, link)
    if not ok then
      uv.fs_unlink(tmp)
    end
  end
  return ok, err
end

-- install links the plugin's binary as dir/mcpdiff (dir: a folder of PATH, default
-- ~/.local/bin). It never replaces anything but a link, and a link to another
-- file only when replace is set (:McpDiffInstallCli!). Returns whether the link is
-- in place; every outcome is said with vim.notify.
function M.install(dir, replace)
  local function refuse(msg)
    notify(msg, vim.log.levels.ERROR)
    return false
  end
  local bin, why = require("mcpdiff.bridge").find_bin()
  if not bin then
    return refuse(why)
  end
  bin = vim.fn.fnamemodify(bin, ":p")
  dir = absolute((dir == nil or dir == "") and M.default_dir or dir)
  if not on_path(dir) then
    return refuse(
      ('%s is not on PATH, so a link there would not make `mcpdiff` a command: add it to PATH in your shell\'s profile (export PATH=%s:"$PATH") and start Neovim again, or name a folder that is on PATH: :McpDiffInstallCli DIR'):format(
        dir,
        vim.fn.shellescape(dir)
      )
    )
  end
  local link = dir .. "/mcpdiff"
  local st = uv.fs_lstat(link)
  if st and st.type ~= "link" then
    return refuse(
      ("%s is there and is not a link (a %s): it is left alone. Remove it yourself, or name another folder of PATH: :McpDiffInstallCli DIR"):format(
        link,
        st.type
      )
    )
  end
  local done
  if st and same_place(link, bin) then
    done = ("%s already links to %s"):format(link, bin)
  else
    if st and not replace then
      return refuse(
        ("%s links to %s, not to this plugin's binary %s: :McpDiffInstallCli! replaces the link"):format(
          link,
          uv.fs_readlink(link) or "?",
          bin
        )
      )
    end
    if vim.fn.isdirectory(dir) == 0 and vim.fn.mkdir(dir, "p") == 0 then
      return refuse(("could not make the folder %s"):format(dir))
    end
    local ok, err = link_to(bin, link)
    if not ok then
      return refuse(("could not link %s to %s: %s"):format(link, bin, tostring(err)))
    end
    done = ("linked %s to %s"):format(link, bin)
  end
  local runs, found = M.runs_bin(bin)
  if not runs then
    notify(
      ("%s, but %s comes first on PATH: a shell runs that one. Remove it, or put %s before its folder in PATH"):format(
        done,
        found,
        dir
      ),
      vim.log.levels.WARN
    )
    return true
  end
  notify(done .. ": `mcpdiff` in a shell runs this plugin's binary")
  return true
end

return M
