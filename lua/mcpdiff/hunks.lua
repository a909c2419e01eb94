-- The name of mcpdiff.changes before 0.3, kept for one release (see the CHANGELOG):
-- require("mcpdiff.hunks").hunks(buf) is require("mcpdiff.changes").changes(buf). In
-- mcpdiff "hunk" is a proposal's block; the history's are pending changes.
local changes = require("mcpdiff.changes")
return setmetatable({ hunks = changes.changes }, { __index = changes })
