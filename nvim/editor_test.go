package nvim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/bridge/ide"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// pluginNvim starts an embedded Neovim with the plugin's Lua on the runtimepath
// (no bridge: the Editor under test plays its part).
func pluginNvim(tb testing.TB) *nvimrpc.Nvim {
	tb.Helper()
	dir := tb.TempDir()
	v := testenv.EmbedNeovim(tb, testNvim(tb), dir, testenv.Env("HOME="+dir, "XDG_STATE_HOME="+dir), "-u", "NONE")
	tb.Cleanup(func() { v.Close() })
	if err := v.ExecLua(`vim.opt.rtp:prepend(...)`, nil, testenv.RepoRoot()); err != nil {
		tb.Fatal(err)
	}
	return v
}

func BenchmarkOpenDiff(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			v := pluginNvim(b)
			e := NewEditor(v, nil)
			defer e.Close()
			var orig, prop strings.Builder
			for i := range n {
				fmt.Fprintf(&orig, "line %d: the quick brown fox jumps over the lazy dog\n", i)
				if i%100 == 50 {
					fmt.Fprintf(&prop, "line %d: CHANGED\n", i)
				} else {
					fmt.Fprintf(&prop, "line %d: the quick brown fox jumps over the lazy dog\n", i)
				}
			}
			path := filepath.Join(b.TempDir(), "f.txt")
			if err := os.WriteFile(path, []byte(orig.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				tab := fmt.Sprintf("tab %d", i)
				req := ide.DiffRequest{TabName: tab, OldPath: path, NewPath: path, Contents: prop.String()}
				if err := e.OpenDiff(ctx, req); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := e.CloseDiff(ctx, tab, ide.NothingWritten); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// Waiting for the write of an accepted diff ends when a later diff of the file is
// accepted: however many of its diffs were accepted and not written (yet), one wait
// per file polls it.
func TestALaterAcceptedDiffOfAFileEndsTheEarlierWait(t *testing.T) {
	var log syncLog
	e := NewEditor(pluginNvim(t), log.printf)
	defer e.Close()
	e.reloadTimeout = 200 * time.Millisecond
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.reloadWhenWritten(path, "first\n")
	e.reloadWhenWritten(path, "second\n")
	e.watches.Wait() // the second wait gives up after reloadTimeout
	gaveUp := 0
	for _, line := range log.lines() {
		if strings.Contains(line, "was not written within") {
			gaveUp++
		}
	}
	if gaveUp != 1 {
		t.Errorf("%d waits gave up, want 1 (the earlier one ended when the later began): %q", gaveUp, log.lines())
	}
}

// A write of the accepted text caught half-way is not taken for the write: the reload
// would show the truncated file and put every window's cursor on line 1. Each
// written() call is one poll.
func TestWriteSeenWaitsForTheWholeWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("hello world\nsecond line\n")
	w := newWriteSeen(path, "hello edited\nsecond line\n")
	if w.written() {
		t.Fatal("written before the file changed")
	}
	write("") // truncated: the client's write has begun
	if w.written() {
		t.Fatal("a truncated file taken for the write")
	}
	write("hello edited\nsecond line\n")
	if !w.written() {
		t.Fatal("the accepted text is in the file, and the write was not seen")
	}

	// The client wrote something else (say, formatted): seen once it stays so a poll.
	write("hello world\nsecond line\n")
	w = newWriteSeen(path, "hello edited\nsecond line\n")
	write("hello edited\nsecond line, formatted\n")
	if w.written() {
		t.Fatal("another text taken for the write on the poll that first saw it")
	}
	if !w.written() {
		t.Fatal("another text, unchanged for a poll, not taken for the write")
	}
}
