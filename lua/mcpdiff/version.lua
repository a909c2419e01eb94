-- The version of mcpdiff, the one place it is written: the Lua plugin requires
-- this file and the Go binary embeds it (version.go), so the two cannot disagree.
return "0.2.0"
