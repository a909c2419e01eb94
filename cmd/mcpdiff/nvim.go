package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"sync"
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

	var mem memory
	go mem.giveBackWhenQuiet(ctx)
	err := nvim.RunBridge(ctx, os.Stdin, rpcOut, nvim.BridgeOptions{
		Version: mcpdiff.Version,
		// Diffs accepted in Neovim go into the edit history of their workspace.
		NewRecorder: func(folders []string) ide.Recorder { return history.NewDiffRecorder(folders) },
		AfterDiffs:  mem.afterDiffs,
		Logf:        logger.Printf,
	})
	if err != nil {
		logger.Printf("%v", err)
		return 1
	}
	return 0
}

// memory gives back to the system what a burst of work left behind. A diff of a
// 10,000-line file passes through this process as a WebSocket frame, its text and
// the lines sent to Neovim: megabytes that Go's collector would keep mapped for
// minutes, while the bridge otherwise lives in a few; and the code that ran for it
// stays mapped too. Both go when the last open diff closes (afterDiffs, called by
// the IDE server before it answers the close_tab), and a tenth of a second after
// other work stops (giveBackWhenQuiet: start-up, a recording, the review list).
type memory struct {
	mu       sync.Mutex
	released uint64 // the heap's allocation count right after the last give-back
	// diffClosed: the last give-back came as a diff closed. What follows a close
	// (Claude Code's second close_tab, its write of the file, the recording) maps
	// code again without allocating much: the next quiet moment gives back anyway.
	diffClosed bool
}

// afterDiffs gives back what the diffs just closed used.
func (m *memory) afterDiffs() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.giveBackLocked()
	m.diffClosed = true
}

// giveBackLocked collects and releases the heap (debug.FreeOSMemory) and drops the
// mappings of the binary's read-only pages (dropCodePages).
func (m *memory) giveBackLocked() {
	debug.FreeOSMemory()
	dropCodePages()
	m.released = heapAllocated()
}

// giveBackWhenQuiet gives back a tenth of a second after the allocations stop (under
// 256 KB in that time), if more than a few megabytes were allocated since the last
// time, or the last time was a diff's close. Nothing is done while work goes on.
func (m *memory) giveBackWhenQuiet(ctx context.Context) {
	const quiet, idle, slack = 100 * time.Millisecond, 256 << 10, 2 << 20
	// The first quiet moment also ends start-up, whose pages and heap go too.
	last := heapAllocated()
	tick := time.NewTicker(quiet) // reading the metric costs a microsecond
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			now := heapAllocated()
			m.mu.Lock()
			if now-last < idle && (m.released == 0 || m.diffClosed || now > m.released+slack) {
				m.giveBackLocked()
				m.diffClosed = false
				now = m.released
			}
			m.mu.Unlock()
			last = now
		}
	}
}

// heapAllocated is the number of bytes the heap has allocated since the start.
func heapAllocated() uint64 {
	sample := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample[:])
	return sample[0].Value.Uint64()
}
