package hookcmd

import (
	"os"
	"time"
)

// A hook's process runs the hook from here and exits, before the packages only
// `serve` and `nvim` need are initialized: mcp-go's server links
// santhosh-tekuri/jsonschema, whose init compiles its meta-schemas (about 3 ms, as
// long as the rest of a hook call), and an agent starts a hook on every edit. Go
// initializes a package once its imports are, the first in import-path order (the
// spec, since Go 1.21); this package and its imports link no MCP server and are ready
// before jsonschema, which sorts after them. tests/hooks checks a hook's init trace.
func init() {
	if len(os.Args) < 2 || os.Args[1] != "hook" || asksHelp(os.Args[2:]) {
		return // main runs the other commands, and prints the hook's help
	}
	os.Exit(Run(time.Now(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
}

// asksHelp reports whether args hold a help flag, which main answers from its table
// of commands.
func asksHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}
