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
	v := testenv.EmbedNeovim(tb, testenv.Neovims(tb)[0], dir, testenv.Env("HOME="+dir, "XDG_STATE_HOME="+dir), "-u", "NONE")
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
				view, err := e.Show(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := view.Close(ctx, ide.NothingWritten); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// A view is its own proposal, whatever its tab name: a newer diff under the same tab
// name neither takes the old view's answer nor is torn down by the old view's Close.
func TestAViewAnswersAndClosesOnlyItself(t *testing.T) {
	v := pluginNvim(t)
	e := NewEditor(v, t.Logf)
	defer e.Close()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	show := func(contents string) *view {
		t.Helper()
		shown, err := e.Show(ctx, ide.DiffRequest{TabName: "tab", OldPath: path, NewPath: path, Contents: contents, Original: []byte("a\n")})
		if err != nil {
			t.Fatal(err)
		}
		return shown.(*view)
	}
	drawn := func() (bufs []int) {
		t.Helper()
		if err := v.ExecLua(`local out = {}
for _, view in pairs(require("mcpdiff.diff.state").views) do table.insert(out, view.buf) end
return out`, &bufs); err != nil {
			t.Fatal(err)
		}
		return bufs
	}
	old := show("old\n")
	newer := show("newer\n") // Lua replaced the old view under the same tab name
	if got := drawn(); len(got) != 1 || got[0] != newer.buf {
		t.Fatalf("views drawn: %v, want the newer one (%d)", got, newer.buf)
	}

	e.accept(old.buf, false, false, luaFormat{})
	if a := testenv.Receive(t, old.Answer(), "the old view's answer"); !a.AsProposed {
		t.Errorf("the old view's answer is %+v, want accepted as proposed", a)
	}
	if err := old.Close(ctx, ide.NothingWritten); err != nil {
		t.Fatal(err)
	}
	if got := drawn(); len(got) != 1 || got[0] != newer.buf {
		t.Fatalf("after the old view's Close, views drawn: %v, want the newer one (%d)", got, newer.buf)
	}
	select {
	case a := <-newer.Answer():
		t.Fatalf("the newer view got the old view's answer: %+v", a)
	default:
	}

	e.reject(newer.buf)
	if a := testenv.Receive(t, newer.Answer(), "the newer view's answer"); a.Accepted || a.AsProposed {
		t.Errorf("the newer view's answer is %+v, want a rejection", a)
	}
	if err := newer.Close(ctx, ide.NothingWritten); err != nil {
		t.Fatal(err)
	}
	if got := drawn(); len(got) != 0 {
		t.Fatalf("views drawn after both closed: %v", got)
	}
}
