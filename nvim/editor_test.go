package nvim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
