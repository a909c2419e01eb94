// Command mcpdiff is the one binary of mcpdiff: the MCP file-tool server, the Neovim
// bridge, and the CLI that reviews, accepts and rejects recorded agent edits.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/mcpdiff/mcpdiff"
)

var version = mcpdiff.Version

// commit is set by the Makefile (-ldflags "-X main.commit=..."); origin is "release"
// in the binaries scripts/release builds, which carry no commit (their sums are
// committed before the tag).
var (
	commit = "unknown"
	origin = ""
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) (code int) {
	if len(args) == 0 {
		printUsage(os.Stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help":
		name = "help"
	case "--version", "-v":
		name = "version"
	}
	c := lookupCommand(name)
	if c == nil {
		fmt.Fprintf(os.Stderr, "mcpdiff: unknown command %q; `mcpdiff help` lists them\n", name)
		return exitUsage
	}
	if wantsHelp(args[1:]) {
		c.printHelp(os.Stdout)
		return exitOK
	}
	if c.history {
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
	return c.run(args[1:])
}
