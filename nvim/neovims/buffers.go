// Package neovims is how a process other than the bridge talks to the user's running
// Neovims: finding those that may hold a file ($NVIM, and the IDE lock files of the
// Neovims running mcpdiff), and asking them over RPC, each call with a deadline,
// whether they hold unsaved changes, to reload buffers, and which writes their bridge
// recorded. The hooks, `mcpdiff serve` and the CLI's decisions use it; it links no MCP
// server, so neither does a hook's process until it needs one (internal/hookcmd).
package neovims

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpdiff/mcpdiff"

	"github.com/neovim/go-client/msgpack/rpc"
	nvimrpc "github.com/neovim/go-client/nvim"
)

// buffersLua runs one function of lua/mcpdiff/buffers.lua (embedded, so it works
// in a Neovim without the plugin) with the call's arguments.
func buffersLua(function string) string {
	return "local M = (function()\n" + mcpdiff.BuffersLua + "\nend)()\nreturn M." + function + "(...)"
}

var (
	modifiedLua = buffersLua("modified")
	unsavedLua  = buffersLua("unsaved")
	reloadLua   = buffersLua("reload")
)

// ReloadBuffers has Neovim re-read its unmodified buffers of paths (absolute),
// keeping cursor and view, and returns how many it re-read.
func ReloadBuffers(ctx context.Context, v *nvimrpc.Nvim, paths []string) (int, error) {
	var n int
	err := ExecLua(ctx, v, "reload buffers", reloadLua, &n, paths)
	return n, err
}

// Buffers answers the MCP file server's questions about a running Neovim's buffers.
// Every call has a deadline (Timeout), so a Neovim that went away or is stuck in a
// prompt gives an error, never a hang. Once Neovim has exited (its connection is
// closed) Buffers stops asking: Modified reports false and Reload does nothing, so
// the file tools go on without buffer checks.
type Buffers struct {
	v *nvimrpc.Nvim
	// Timeout bounds each call (default 2 s).
	Timeout time.Duration
	// Logf, when set, hears that Neovim exited and the checks stopped.
	Logf func(format string, args ...any)

	closed  chan struct{} // closed when the connection ends
	dropped atomic.Bool
}

// Dial connects to the Neovim listening at addr ($NVIM: a socket path or host:port).
func Dial(addr string) (*Buffers, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return DialContext(ctx, addr)
}

// DialContext is Dial, giving up when ctx ends.
func DialContext(ctx context.Context, addr string) (*Buffers, error) {
	if addr == "" {
		return nil, fmt.Errorf("nvim: no address to dial (set $NVIM or pass --nvim ADDR)")
	}
	// Served here, not by go-client, to learn when the connection ends.
	v, err := nvimrpc.Dial(addr, nvimrpc.DialContext(ctx), nvimrpc.DialServe(false), nvimrpc.DialLogf(func(string, ...any) {}))
	if err != nil {
		return nil, fmt.Errorf("nvim: connect to Neovim at %s: %w", addr, err)
	}
	b := &Buffers{v: v, Timeout: 2 * time.Second, closed: make(chan struct{})}
	go func() {
		defer close(b.closed)
		v.Serve()
	}()
	return b, nil
}

// Close ends the connection.
func (b *Buffers) Close() error { return b.v.Close() }

func (b *Buffers) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.Timeout)
}

// Modified reports whether a loaded buffer of path (absolute) has unsaved changes.
// It fails when Neovim does not answer while connected: the caller must then refuse
// the write, as the answer could have been yes.
func (b *Buffers) Modified(path string) (bool, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return false, fmt.Errorf("nvim: %w", err)
	}
	if b.dropped.Load() {
		return false, nil
	}
	ctx, cancel := b.context()
	defer cancel()
	var modified bool
	err = Call(ctx, "check for unsaved changes", func() error { return b.v.ExecLua(modifiedLua, &modified, []string{path}) })
	if err == nil {
		return modified, nil
	}
	if b.gone(err) {
		return false, nil
	}
	return false, fmt.Errorf("could not ask Neovim whether %s has unsaved changes: %s; retry", path, b.cause(err))
}

// Unsaved returns those of paths (absolute) that a loaded buffer holds with unsaved
// changes. It fails, as Modified does, when Neovim does not answer while connected
// (with context.DeadlineExceeded when it did not answer within Timeout).
func (b *Buffers) Unsaved(paths []string) ([]string, error) {
	if b.dropped.Load() {
		return nil, nil
	}
	ctx, cancel := b.context()
	defer cancel()
	var unsaved []string
	err := Call(ctx, "check for unsaved changes", func() error { return b.v.ExecLua(unsavedLua, &unsaved, paths) })
	if err == nil || b.gone(err) {
		return unsaved, nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	return nil, fmt.Errorf("could not ask Neovim whether it has unsaved changes of %s: %s", strings.Join(paths, ", "), b.cause(err))
}

// cause is why a call to Neovim failed, in a few words.
func (b *Buffers) cause(err error) string {
	cause := err.Error()
	if inner := errors.Unwrap(err); inner != nil {
		cause = inner.Error() // without call's "neovim: check for unsaved changes:"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		cause = fmt.Sprintf("no answer within %v (is Neovim busy, or waiting at a prompt?)", b.Timeout)
	}
	cause, _, _ = strings.Cut(cause, "\n") // a Lua error's stack traceback follows
	return cause
}

// Notify shows text in Neovim as a warning (vim.notify), without waiting for the user:
// the message is scheduled, so a Neovim in the middle of something shows it after.
func (b *Buffers) Notify(text string) error {
	if b.dropped.Load() {
		return nil
	}
	ctx, cancel := b.context()
	defer cancel()
	return Call(ctx, "show a message", func() error {
		return b.v.ExecLua("local text = ...; vim.schedule(function() vim.notify(text, vim.log.levels.WARN) end)", nil, text)
	})
}

// Reload re-reads the buffers of these files that have no unsaved changes, keeping
// cursor and view. Files without a buffer are skipped.
func (b *Buffers) Reload(paths ...string) error {
	if b.dropped.Load() {
		return nil
	}
	abs := make([]string, 0, len(paths))
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("nvim: %w", err)
		}
		abs = append(abs, a)
	}
	ctx, cancel := b.context()
	defer cancel()
	_, err := ReloadBuffers(ctx, b.v, abs)
	if err != nil && b.gone(err) {
		return nil
	}
	return err
}

// gone reports whether a call failed because the connection is closed (Neovim
// exited), and if so stops all later calls.
func (b *Buffers) gone(err error) bool {
	var netErr *net.OpError
	switch {
	case errors.Is(err, rpc.ErrClosed):
	case errors.As(err, &netErr):
		// A failed write closes the connection at once; wait for the reader to see it.
		wait := time.NewTimer(b.Timeout)
		defer wait.Stop()
		select {
		case <-b.closed:
		case <-wait.C:
			return false
		}
	default:
		// Neovim answered with an error, or is connected but slow.
		select {
		case <-b.closed:
		default:
			return false
		}
	}
	if !b.dropped.Swap(true) && b.Logf != nil {
		b.Logf("the connection to Neovim closed (it exited): no more checks for unsaved changes")
	}
	return true
}
