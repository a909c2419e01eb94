-- The version of mcpdiff: the Lua plugin's, and the binary's (it embeds this file).
return "0.2.0"
