package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

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

	go giveBackMemory(ctx)
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

// giveBackMemory returns the heap a big diff left behind to the system. A diff of a
// 10,000-line file passes through this process as a WebSocket frame, its JSON and
// the lines sent to Neovim: tens of megabytes that Go's collector keeps mapped for
// minutes, while the bridge otherwise lives in a few. Four times a second it reads how much
// heap is mapped, and when that grew by 8 MB since the last release, it collects
// and releases; a proposal still on screen stays live, and is not collected again
// until the heap grows once more.
func giveBackMemory(ctx context.Context) {
	const slack = 8 << 20
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	mapped := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64() + sample[1].Value.Uint64() + sample[2].Value.Uint64()
	}
	floor := mapped()
	tick := time.NewTicker(250 * time.Millisecond) // reading the metrics costs microseconds
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if mapped() > floor+slack {
				debug.FreeOSMemory()
				floor = mapped()
			}
		}
	}
}
