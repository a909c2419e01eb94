// Command mcpdiff is the one binary of mcpdiff: the MCP file-tool server, the Neovim
// bridge, and the CLI that reviews, accepts and rejects recorded agent edits.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/mcpdiff/mcpdiff"
	"github.com/mcpdiff/mcpdiff/internal/history"
)

var version = mcpdiff.Version

// commit is set by the Makefile (-ldflags "-X main.commit=...").
var commit = "unknown"

const usage = `usage: mcpdiff <command> [flags]

commands:
  serve     MCP server with the file tools (stdio, or --http 127.0.0.1:PORT)
  nvim      the Neovim bridge (started by the Lua plugin, never by hand)
  status    list recorded edits
  show      show the diff of an edit or a conversation
  accept    accept edits
  reject    reject edits and rebuild the files without them
  cleanup   drop fully resolved conversations
  restore   put a file back to its recorded state, discarding changes made since
  adopt     make an edit history you did not make yours (after showing what it holds)
  hook      an agent's hook handler (--agent NAME; run by the agent, never by hand)
  hooks     install, uninstall or show an agent's hooks (install|uninstall|status --agent NAME)
  version   print version and build info
`

func main() {
	os.Exit(run(time.Now(), os.Args[1:]))
}

func run(start time.Time, args []string) (code int) {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "hook":
		return runHook(start, args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "hooks":
		return runHooks(args[1:], os.Stdout, os.Stderr)
	case "version", "--version", "-v":
		fmt.Printf("mcpdiff %s (commit %s)\n", version, commit)
		return 0
	case "help", "-h", "--help":
		fmt.Print(usage)
		return 0
	case "nvim":
		return runNvim(args[1:])
	case "serve":
		return runServe(args[1:], os.Stderr)
	case "status", "show", "accept", "reject", "cleanup", "restore", "adopt":
		// Short-lived commands that read a whole store: collecting garbage would be a
		// fifth of their time, so the collector waits until memory gets large.
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(512 << 20)
		// Their file system calls then all come from one thread, in the order the
		// code makes them: a trace of a decision (strace counts calls per thread)
		// reads as the sequence of steps it is.
		runtime.LockOSThread()
		defer exitOnPanic(&code)
	}
	switch args[0] {
	case "status":
		return runStatus(args[1:], os.Stdout, os.Stderr)
	case "show":
		return runShow(args[1:], os.Stdout, os.Stderr)
	case "accept":
		return runDecide(history.Accepted, args[1:], os.Stdout, os.Stderr)
	case "reject":
		return runDecide(history.Rejected, args[1:], os.Stdout, os.Stderr)
	case "cleanup":
		return runCleanup(args[1:], os.Stdout, os.Stderr)
	case "restore":
		return runRestore(args[1:], os.Stdout, os.Stderr)
	case "adopt":
		return runAdopt(args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	fmt.Fprintf(os.Stderr, "mcpdiff: unknown command %q\n\n%s", args[0], usage)
	return 2
}
