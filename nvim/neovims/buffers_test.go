package neovims

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// testNvim returns the first Neovim found (see testenv.Neovims).
func testNvim(t testing.TB) string {
	t.Helper()
	return testenv.Neovims(t)[0]
}

// listeningNvim starts a headless Neovim listening on a socket, as a user's Neovim
// runs `mcpdiff serve` with $NVIM set, and connects Buffers to it.
func listeningNvim(t *testing.T) (*testenv.ListeningNeovim, *Buffers) {
	t.Helper()
	dir := t.TempDir()
	n := testenv.ListenNeovim(t, testNvim(t), "", append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+dir, "XDG_DATA_HOME="+dir))
	b, err := Dial(n.Sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return n, b
}

func TestBuffersModifiedAndReload(t *testing.T) {
	n, b := listeningNvim(t)
	v := n.Nvim
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.Command("edit " + path + " | normal! 2G"); err != nil {
		t.Fatal(err)
	}

	if modified, err := b.Modified(path); err != nil || modified {
		t.Fatalf("Modified(unchanged buffer) = %v, %v", modified, err)
	}
	if modified, err := b.Modified(filepath.Join(dir, "other.txt")); err != nil || modified {
		t.Fatalf("Modified(file without buffer) = %v, %v", modified, err)
	}

	// Rewrite with the same size and mtime: :checktime would see nothing.
	info, _ := os.Stat(path)
	if err := os.WriteFile(path, []byte("ONE\nTWO\nTHREE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(path, filepath.Join(dir, "other.txt")); err != nil {
		t.Fatal(err)
	}
	lines, err := v.BufferLines(0, 0, -1, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytesToStrings(lines); !reflect.DeepEqual(got, []string{"ONE", "TWO", "THREE"}) {
		t.Fatalf("after Reload the buffer holds %q", got)
	}
	cursor, _ := v.WindowCursor(0)
	if cursor[0] != 2 {
		t.Fatalf("Reload moved the cursor to line %d, want 2", cursor[0])
	}

	// A buffer with unsaved changes is reported and never reloaded.
	if err := v.SetBufferLines(0, 0, 1, false, [][]byte{[]byte("mine")}); err != nil {
		t.Fatal(err)
	}
	if modified, err := b.Modified(path); err != nil || !modified {
		t.Fatalf("Modified(changed buffer) = %v, %v", modified, err)
	}
	if err := b.Reload(path); err != nil {
		t.Fatal(err)
	}
	lines, _ = v.BufferLines(0, 0, 1, false)
	if string(lines[0]) != "mine" {
		t.Fatalf("Reload discarded unsaved changes: %q", lines[0])
	}
}

// Once Neovim has exited, the file tools go on without buffer checks: Modified
// reports false without error, Reload does nothing.
func TestBuffersWhenNeovimIsGone(t *testing.T) {
	n, b := listeningNvim(t)
	var logs syncLog
	b.Logf = logs.printf
	if _, err := b.Modified("/tmp/x"); err != nil {
		t.Fatalf("Modified with Neovim running: %v", err)
	}
	n.Cmd.Process.Kill()
	n.Cmd.Wait()
	for i := 0; i < 2; i++ {
		if modified, err := b.Modified("/tmp/x"); err != nil || modified {
			t.Fatalf("Modified with Neovim gone = %v, %v; want false, nil", modified, err)
		}
		if err := b.Reload("/tmp/x"); err != nil {
			t.Fatalf("Reload with Neovim gone: %v", err)
		}
	}
	if got := logs.lines(); len(got) != 1 || !strings.Contains(got[0], "no more checks") {
		t.Fatalf("logged %q, want one line saying the checks stopped", got)
	}
	if _, err := Dial(n.Sock); err == nil || !strings.Contains(err.Error(), n.Sock) {
		t.Fatalf("Dial to a dead socket: %v, want an error naming %s", err, n.Sock)
	}
}

// A check that fails while Neovim is connected must not look like "no unsaved
// changes": the caller refuses the write.
func TestBuffersWhenNeovimIsBusy(t *testing.T) {
	n, b := listeningNvim(t)
	v := n.Nvim
	b.Timeout = 200 * time.Millisecond
	// A long-running command blocks Neovim's loop: requests wait until it ends.
	busy := filepath.Join(t.TempDir(), "busy")
	go v.ExecLua(`io.open(..., "w"):close() local t = os.clock() while os.clock() - t < 5 do end`, nil, busy)
	testenv.Eventually(t, "Neovim to get busy", func() bool {
		_, err := os.Stat(busy)
		return err == nil
	})
	_, err := b.Modified("/tmp/x")
	if err == nil || !strings.Contains(err.Error(), "could not ask Neovim whether /tmp/x has unsaved changes: no answer within 200ms") ||
		!strings.HasSuffix(err.Error(), "; retry") {
		t.Fatalf("Modified on a busy Neovim: %v, want a refusal that says why and to retry", err)
	}
	if b.dropped.Load() {
		t.Fatal("a slow Neovim stopped the checks")
	}
}

// An error from Neovim itself refuses too, and the checks go on afterwards.
func TestBuffersWhenNeovimAnswersWithAnError(t *testing.T) {
	n, b := listeningNvim(t)
	v := n.Nvim
	if err := v.ExecLua(`_G.real_list_bufs = vim.api.nvim_list_bufs; vim.api.nvim_list_bufs = function() error("boom") end`, nil); err != nil {
		t.Fatal(err)
	}
	_, err := b.Modified("/tmp/x")
	if err == nil || !strings.Contains(err.Error(), "could not ask Neovim whether /tmp/x has unsaved changes: ") ||
		!strings.Contains(err.Error(), "boom") || !strings.HasSuffix(err.Error(), "; retry") {
		t.Fatalf("Modified when Neovim fails: %v, want a refusal naming the cause", err)
	}
	if err := b.Reload("/tmp/x"); err == nil {
		t.Fatal("Reload succeeded when Neovim fails")
	}
	if err := v.ExecLua(`vim.api.nvim_list_bufs = _G.real_list_bufs`, nil); err != nil {
		t.Fatal(err)
	}
	if modified, err := b.Modified("/tmp/x"); err != nil || modified {
		t.Fatalf("Modified after Neovim recovered = %v, %v", modified, err)
	}
}

// syncLog collects Logf lines from any goroutine.
type syncLog struct {
	mu  sync.Mutex
	got []string
}

func (l *syncLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprintf(format, args...))
}

func (l *syncLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

func bytesToStrings(lines [][]byte) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	return out
}
