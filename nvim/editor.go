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
)

// Answerer receives the user's answer to a diff (ide.Server implements it, and
// keeps the only registry of open diffs: Neovim's side keeps none).
type Answerer interface {
	Answer(tabName string, accepted bool, text string)
	AcceptProposal(tabName string)
}

// Editor implements ide.Editor on a Neovim that runs the mcpdiff Lua plugin.
// Set Answers before the first OpenDiff.
type Editor struct {
	v    *nvimrpc.Nvim
	logf func(format string, args ...any)

	// Answers receives what the user answers in Neovim.
	Answers Answerer

	callTimeout time.Duration // bound on a call answering a user event

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

// OpenDiff draws the proposal: Lua checks the file and makes the proposal buffer,
// Go fills it with one nvim_buf_set_lines (no huge string split in Lua), Lua draws
// the view. It returns once the view is drawn.
func (e *Editor) OpenDiff(ctx context.Context, req ide.DiffRequest) error {
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
	err := callLua(ctx, e.v, "prepare the diff", "diff.prepare", &prep, luaReq)
	if err != nil {
		return fmt.Errorf("open the diff of %s: %w", req.OldPath, err)
	}
	if prep.Error == "dirty" {
		return &ide.ToolError{
			Code:    -32000,
			Message: "Cannot create diff: file has unsaved changes",
			Data:    fmt.Sprintf("Please save (:w) or discard (:e!) changes to %s before creating diff", req.OldPath),
		}
	}
	buf := nvimrpc.Buffer(prep.Buf)

	// Two requests, not one batch: nvim_call_atomic makes a 100,000-line
	// nvim_buf_set_lines twice as slow.
	err = call(ctx, "fill the proposal", func() error {
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
		err = callLua(ctx, e.v, "draw the diff", "diff.show", nil, show...)
	}
	if err != nil {
		e.dropHalfDrawn(req.TabName)
		return fmt.Errorf("open the diff of %s: %w", req.OldPath, err)
	}
	return nil
}

// closeReason is a `reason` of the User McpDiffClosed event that the Go side gives;
// close_reasons in lua/mcpdiff/diff/init.lua is the list of all of them, which
// TestCloseReasonsAreDocumented checks these against.
type closeReason string

const (
	closedAccepted closeReason = "accepted" // the proposal was saved, FILE_SAVED sent
	closedByClient closeReason = "closed"   // Claude Code closed it (closeAllDiffTabs, or after an answer)
	closedFailed   closeReason = "failed"   // drawing it failed, or openDiff was cancelled meanwhile
)

// closeView tears down the view of tabName in Neovim, firing McpDiffClosed.
func closeView(ctx context.Context, v *nvimrpc.Nvim, what, tabName string, reason closeReason) error {
	return callLua(ctx, v, what, "diff.close", nil, tabName, string(reason))
}

// dropHalfDrawn removes what a failed OpenDiff left in Neovim, in the background: the
// caller's ctx may be over, and OpenDiff must return with it.
func (e *Editor) dropHalfDrawn(tabName string) {
	e.watches.Add(1)
	go func() {
		defer e.watches.Done()
		ctx, cancel := context.WithTimeout(e.life, e.callTimeout)
		defer cancel()
		if err := closeView(ctx, e.v, "drop the diff", tabName, closedFailed); err != nil {
			e.logf("nvim: %v", err)
		}
	}()
}

// CloseDiff tears the view down.
func (e *Editor) CloseDiff(ctx context.Context, tabName string, outcome ide.Teardown) error {
	reason := closedByClient
	if outcome == ide.ClientWrites {
		reason = closedAccepted
	}
	if err := closeView(ctx, e.v, "close the diff", tabName, reason); err != nil {
		return fmt.Errorf("close the diff %q: %w", tabName, err)
	}
	return nil
}

// luaFormat is a proposal's textFormat as Lua sends it back with an answer (as it
// got it in prepare's request).
type luaFormat struct {
	Dos  bool `msgpack:"dos"`
	Bomb bool `msgpack:"bomb"`
	EOL  bool `msgpack:"eol"`
}

// accept answers FILE_SAVED: the exact proposal when the buffer is untouched, else
// the lines of the proposal buffer buf in the proposal's format. empty: the buffer
// holds no line at all (Neovim shows one empty line either way), which is the
// empty text.
func (e *Editor) accept(tabName string, changed, empty bool, buf int, lf luaFormat) {
	if e.Answers == nil {
		return
	}
	if !changed {
		e.Answers.AcceptProposal(tabName)
		return
	}
	format := textFormat{crlf: lf.Dos, bom: lf.Bomb, finalNewline: lf.EOL}
	if empty {
		e.Answers.Answer(tabName, true, format.joinLines(nil))
		return
	}
	ctx, cancel := context.WithTimeout(e.life, e.callTimeout)
	defer cancel()
	var lines [][]byte
	err := call(ctx, "read the proposal", func() (err error) {
		lines, err = e.v.BufferLines(nvimrpc.Buffer(buf), 0, -1, false)
		return err
	})
	if err != nil {
		// Without the user's text, nothing must be written.
		e.logf("nvim: accept %q: %v; answering DIFF_REJECTED", tabName, err)
		e.Answers.Answer(tabName, false, "")
		return
	}
	e.Answers.Answer(tabName, true, format.joinLines(lines))
}

func (e *Editor) reject(tabName string) {
	if e.Answers != nil {
		e.Answers.Answer(tabName, false, "")
	}
}

// Reload reloads path's buffers that have no unsaved changes: the client wrote the
// file of an accepted diff (the IDE server waited for it).
func (e *Editor) Reload(ctx context.Context, path string) error {
	if _, err := reloadBuffers(ctx, e.v, []string{path}); err != nil {
		return fmt.Errorf("reload %s: %w", path, err)
	}
	return nil
}
