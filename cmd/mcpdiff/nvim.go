package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpdiff/mcpdiff"

	"github.com/mcpdiff/mcpdiff/bridge/ide"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/nvim"
)

// runNvim is `mcpdiff nvim`: the Neovim bridge, started by the Lua plugin with
// jobstart({bin, "nvim"}, {rpc = true}). Its stdin/stdout are Neovim's msgpack-RPC
// channel; it ends (removing its lock file) when Neovim closes the channel.
func runNvim(args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(os.Stderr, "mcpdiff nvim: takes no arguments (got %q); the Neovim plugin starts it\n", args)
		return 2
	}
	if info, err := os.Stdin.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintln(os.Stderr, "mcpdiff nvim speaks msgpack-RPC with Neovim on stdin/stdout and is started by the plugin:\n"+
			"  require(\"mcpdiff\").setup()   or   :McpDiffStart")
		return 2
	}
	// stdout is the RPC channel: a stray print anywhere must not corrupt it.
	rpcOut := os.Stdout
	os.Stdout = os.Stderr
	logger := log.New(os.Stderr, "mcpdiff nvim: ", log.Ltime)
	log.SetOutput(os.Stderr)
	// When Neovim has closed its end, a write must fail with EPIPE, not kill us
	// before the lock file is removed.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	err := nvim.RunBridge(ctx, os.Stdin, rpcOut, nvim.BridgeOptions{
		Version: mcpdiff.Version,
		// Diffs accepted in Neovim go into the edit history of their workspace.
		NewRecorder: func(folders []string) ide.Recorder { return history.NewDiffRecorder(folders) },
		Logf:        logger.Printf,
	})
	if err != nil {
		logger.Printf("%v", err)
		return 1
	}
	return 0
}
