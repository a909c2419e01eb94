// Package nvim is the Go side of mcpdiff's Neovim integration: the ide.Editor that
// draws Claude Code's openDiff proposals in Neovim (through the Lua plugin), the
// `mcpdiff nvim` bridge process the plugin starts, and Buffers, a small client that
// lets the MCP file server ask a running Neovim about unsaved buffers.
package nvim

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unsafe"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/bridge/ide"
	"github.com/mcpdiff/mcpdiff/nvim/neovims"
)

// Editor implements ide.Editor on a Neovim that runs the mcpdiff Lua plugin.
type Editor struct {
	v    *nvimrpc.Nvim
	logf func(format string, args ...any)

	callTimeout time.Duration // bound on a call answering a user event

	// The views shown, by proposal buffer: where Lua's answers go. The diffs
	// themselves are the IDE server's (ide.Server keeps the only registry of them);
	// a buffer number is never reused, so an answer reaches its own view only.
	mu    sync.Mutex
	views map[int]*view

	life    context.Context // ends with Close: stops the background work below
	endLife context.CancelFunc
	watches sync.WaitGroup // clean-ups
}

// NewEditor returns an Editor calling into the Neovim at v. logf may be nil.
func NewEditor(v *nvimrpc.Nvim, logf func(format string, args ...any)) *Editor {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	life, end := context.WithCancel(context.Background())
	return &Editor{
		v:           v,
		logf:        logf,
		callTimeout: 5 * time.Second,
		views:       map[int]*view{},
		life:        life,
		endLife:     end,
	}
}

// Close stops the background work (clean-ups) and waits for it.
func (e *Editor) Close() {
	e.endLife()
	e.watches.Wait()
}

var _ ide.Editor = (*Editor)(nil)

// prepared is what mcpdiff.diff.prepare answers.
type prepared struct {
	Buf   int    `msgpack:"buf"`
	Texts bool   `msgpack:"texts"` // show wants both texts to diff (the inline layout)
	Error string `msgpack:"error"`
}

// view is one proposal drawn in Neovim: Lua's view of tab whose proposal buffer is buf.
type view struct {
	e       *Editor
	tab     string
	buf     int
	path    string
	answers chan ide.Answer // buffered: the user's one answer
}

func (v *view) Answer() <-chan ide.Answer { return v.answers }

// answer passes the user's answer on; a second one goes nowhere.
func (v *view) answer(a ide.Answer) {
	select {
	case v.answers <- a:
	default:
	}
}

// Close tears the view down, firing McpDiffClosed.
func (v *view) Close(ctx context.Context, how ide.Teardown) error {
	v.e.forget(v)
	reason := closedByClient
	switch how {
	case ide.ClientWrites:
		reason = closedAccepted
	case ide.Replaced:
		reason = closedReplaced
	}
	if err := closeView(ctx, v.e.v, "close the diff", v, reason); err != nil {
		return fmt.Errorf("close the diff %q: %w", v.tab, err)
	}
	return nil
}

// Written reloads the file's buffers that have no unsaved changes: the client wrote
// the accepted file (the IDE server waited for it).
func (v *view) Written(ctx context.Context) error {
	if _, err := neovims.ReloadBuffers(ctx, v.e.v, []string{v.path}); err != nil {
		return fmt.Errorf("reload %s: %w", v.path, err)
	}
	return nil
}

func (e *Editor) forget(v *view) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.views[v.buf] == v {
		delete(e.views, v.buf)
	}
}

// viewOf is the view whose proposal buffer is buf, or nil (closed meanwhile).
func (e *Editor) viewOf(buf int) *view {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.views[buf]
}

// Show draws the proposal: Lua checks the file and makes the proposal buffer, Go
// fills it with one nvim_buf_set_lines (no huge string split in Lua), Lua draws the
// view. It returns once the view is drawn.
func (e *Editor) Show(ctx context.Context, req ide.DiffRequest) (ide.View, error) {
	lines, format := splitText(req.Contents)
	luaReq := map[string]any{
		"tab":      req.TabName,
		"path":     req.OldPath,
		"new_file": req.NewFile,
		"dos":      format.crlf,
		"bomb":     format.bom,
		"eol":      format.finalNewline,
	}
	var prep prepared
	err := neovims.CallLua(ctx, e.v, "prepare the diff", "diff.prepare", &prep, luaReq)
	if err != nil {
		return nil, fmt.Errorf("open the diff of %s: %w", req.OldPath, err)
	}
	if prep.Error == "dirty" {
		return nil, &ide.ToolError{
			Code:    -32000,
			Message: "Cannot create diff: file has unsaved changes",
			Data:    fmt.Sprintf("Please save (:w) or discard (:e!) changes to %s before creating diff", req.OldPath),
		}
	}
	buf := nvimrpc.Buffer(prep.Buf)
	// Known before it is drawn: the user may answer as soon as it is.
	v := &view{e: e, tab: req.TabName, buf: prep.Buf, path: req.NewPath, answers: make(chan ide.Answer, 1)}
	e.mu.Lock()
	e.views[v.buf] = v
	e.mu.Unlock()

	// Two requests, not one batch: nvim_call_atomic makes a 100,000-line
	// nvim_buf_set_lines twice as slow.
	err = neovims.Call(ctx, "fill the proposal", func() error {
		return e.v.Request("nvim_buf_set_lines", nil, buf, 0, -1, true, lines)
	})
	if err == nil {
		show := []any{req.TabName}
		if prep.Texts {
			// The inline layout diffs these; Lua would take long to build them. The
			// original's bytes are never changed: its lines can be read in place.
			orig, _ := splitText(unsafe.String(unsafe.SliceData(req.Original), len(req.Original)))
			show = append(show, map[string]string{"orig": diffText(orig), "prop": diffText(lines)})
		}
		err = neovims.CallLua(ctx, e.v, "draw the diff", "diff.show", nil, show...)
	}
	if err != nil {
		e.forget(v)
		e.dropHalfDrawn(v)
		return nil, fmt.Errorf("open the diff of %s: %w", req.OldPath, err)
	}
	return v, nil
}

// closeReason is a `reason` of the User McpDiffClosed event that the Go side gives;
// close_reasons in lua/mcpdiff/diff/init.lua is the list of all of them, which
// TestCloseReasonsAreDocumented checks these against.
type closeReason string

const (
	closedAccepted closeReason = "accepted" // the proposal was saved, FILE_SAVED sent
	closedByClient closeReason = "closed"   // Claude Code closed it (closeAllDiffTabs, or after an answer)
	closedFailed   closeReason = "failed"   // drawing it failed, or openDiff was cancelled meanwhile
	closedReplaced closeReason = "replaced" // a new openDiff of its tab name took its place
)

// closeView tears down view in Neovim (the one of its tab name whose proposal
// buffer is its own: not a newer diff's), firing McpDiffClosed.
func closeView(ctx context.Context, v *nvimrpc.Nvim, what string, view *view, reason closeReason) error {
	return neovims.CallLua(ctx, v, what, "diff.close", nil, view.tab, string(reason), view.buf)
}

// dropHalfDrawn removes what a failed Show left in Neovim, in the background: the
// caller's ctx may be over, and Show must return with it.
func (e *Editor) dropHalfDrawn(v *view) {
	e.watches.Add(1)
	go func() {
		defer e.watches.Done()
		ctx, cancel := context.WithTimeout(e.life, e.callTimeout)
		defer cancel()
		if err := closeView(ctx, e.v, "drop the diff", v, closedFailed); err != nil {
			e.logf("nvim: %v", err)
		}
	}()
}

// luaFormat is a proposal's textFormat as Lua sends it back with an answer (as it
// got it in prepare's request).
type luaFormat struct {
	Dos  bool `msgpack:"dos"`
	Bomb bool `msgpack:"bomb"`
	EOL  bool `msgpack:"eol"`
}

// accept answers FILE_SAVED for the view of the proposal buffer buf: the exact
// proposal when the buffer is untouched, else its lines in the proposal's format.
// empty: the buffer holds no line at all (Neovim shows one empty line either way),
// which is the empty text.
func (e *Editor) accept(buf int, changed, empty bool, lf luaFormat) {
	v := e.viewOf(buf)
	if v == nil {
		return
	}
	if !changed {
		v.answer(ide.Answer{AsProposed: true})
		return
	}
	format := textFormat{crlf: lf.Dos, bom: lf.Bomb, finalNewline: lf.EOL}
	if empty {
		v.answer(ide.Answer{Accepted: true, Text: format.joinLines(nil)})
		return
	}
	ctx, cancel := context.WithTimeout(e.life, e.callTimeout)
	defer cancel()
	var lines [][]byte
	err := neovims.Call(ctx, "read the proposal", func() (err error) {
		lines, err = e.v.BufferLines(nvimrpc.Buffer(buf), 0, -1, false)
		return err
	})
	if err != nil {
		// Without the user's text, nothing must be written.
		e.logf("nvim: accept %q: %v; answering DIFF_REJECTED", v.tab, err)
		v.answer(ide.Answer{})
		return
	}
	v.answer(ide.Answer{Accepted: true, Text: format.joinLines(lines)})
}

// reject answers DIFF_REJECTED for the view of the proposal buffer buf.
func (e *Editor) reject(buf int) {
	if v := e.viewOf(buf); v != nil {
		v.answer(ide.Answer{})
	}
}
