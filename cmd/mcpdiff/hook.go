package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcpdiff/mcpdiff/bridge/filetools"
	"github.com/mcpdiff/mcpdiff/bridge/ide"
	"github.com/mcpdiff/mcpdiff/internal/claudehooks"
)

// runHook is `mcpdiff hook`, run by Claude Code with one hook event on stdin. It
// never exits 2 (Claude Code would block the tool): a deny is printed on stdout.
func runHook(start time.Time, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "mcpdiff hook: takes no arguments (got %q); Claude Code runs it with the event on stdin\n", args)
		return 1
	}
	if f, ok := stdin.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintln(stderr, "mcpdiff hook is Claude Code's hook handler: it reads one hook event as JSON on stdin.\n"+
				"Install it with `mcpdiff hooks install`, or start Claude Code with :McpDiffClaude in Neovim.")
			return 1
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(claudehooks.Budget))
	defer cancel()
	r := claudehooks.Handle(ctx, stdin, claudehooks.Options{
		Nvim:        os.Getenv("NVIM"),
		LockDirs:    ide.LockDirs(),
		MaxFileSize: filetools.DefaultMaxFileSize,
	})
	if len(r.Stdout) > 0 {
		stdout.Write(r.Stdout)
	}
	if r.Message != "" {
		fmt.Fprintln(stderr, r.Message)
	}
	return r.Code
}
