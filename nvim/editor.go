// Package nvim is the Go side of mcpdiff's Neovim integration: the ide.Editor that
// draws Claude Code's openDiff proposals in Neovim (through the Lua plugin), the
// `mcpdiff nvim` bridge process the plugin starts, and Buffers, a small client that
// lets the MCP file server ask a running Neovim about unsaved buffers.
package nvim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/bridge/ide"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Answerer receives the user's answer to a diff (ide.Server implements it).
type Answerer interface {
	Answer(tabName string, accepted bool, text string)
}

// Editor implements ide.Editor on a Neovim that runs the mcpdiff Lua plugin.
// Set Answers before the first OpenDiff.
type Editor struct {
	v    *nvimrpc.Nvim
	logf func(format string, args ...any)

	// Answers receives what the user answers in Neovim.
	Answers Answerer

	// How to wait for the agent to write an accepted file before reloading its
	// buffers (variables so tests can shorten them).
	reloadPoll    time.Duration
	reloadTimeout time.Duration
	callTimeout   time.Duration // bound on a call answering a user event

	life    context.Context // ends with Close: stops the background work below
	endLife context.CancelFunc
	watches sync.WaitGroup // reload watchers and clean-ups

	mu      sync.Mutex
	diffs   map[string]*shownDiff    // by tab name
	reloads map[string]chan struct{} // by path: closed to end that path's reload watcher
}

// shownDiff is what Go keeps of a diff Neovim shows.
type shownDiff struct {
	buf      nvimrpc.Buffer
	path     string
	proposal string
	format   textFormat
	accepted string // the text answered with FILE_SAVED
}

// NewEditor returns an Editor calling into the Neovim at v. logf may be nil.
func NewEditor(v *nvimrpc.Nvim, logf func(format string, args ...any)) *Editor {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	life, end := context.WithCancel(context.Background())
	return &Editor{
		v:             v,
		logf:          logf,
		reloadPoll:    10 * time.Millisecond,
		reloadTimeout: 30 * time.Second,
		callTimeout:   5 * time.Second,
		life:          life,
		endLife:       end,
		diffs:         map[string]*shownDiff{},
		reloads:       map[string]chan struct{}{},
	}
}

// Close stops the background work (reload watchers, clean-ups) and waits for it.
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
	e.mu.Lock()
	e.diffs[req.TabName] = &shownDiff{buf: buf, path: req.NewPath, proposal: req.Contents, format: format}
	e.mu.Unlock()

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
		e.forget(req.TabName)
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

// CloseDiff tears the view down. For an accepted diff it then waits (in the
// background, the client writes the file after this returns) for the file to change
// and reloads its unmodified buffers.
func (e *Editor) CloseDiff(ctx context.Context, tabName string, outcome ide.Teardown) error {
	path, accepted, known := e.forget(tabName)
	reason := closedByClient
	if outcome == ide.ClientWrites {
		reason = closedAccepted
	}
	err := closeView(ctx, e.v, "close the diff", tabName, reason)
	if outcome == ide.ClientWrites && known {
		e.reloadWhenWritten(path, accepted)
	}
	if err != nil {
		return fmt.Errorf("close the diff %q: %w", tabName, err)
	}
	return nil
}

// forget drops a diff, returning its file and the text it was accepted with.
func (e *Editor) forget(tabName string) (path, accepted string, known bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.diffs[tabName]
	delete(e.diffs, tabName)
	if d == nil {
		return "", "", false
	}
	return d.path, d.accepted, true
}

func (e *Editor) lookup(tabName string) *shownDiff {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.diffs[tabName]
}

// accept answers FILE_SAVED: the exact proposal when the buffer is untouched, else
// the buffer's lines in the proposal's format. empty: the buffer holds no line at all
// (Neovim shows one empty line either way), which is the empty text.
func (e *Editor) accept(tabName string, changed, empty bool) {
	d := e.lookup(tabName)
	if d == nil || e.Answers == nil {
		return
	}
	text := d.proposal
	if changed && empty {
		text = d.format.joinLines(nil)
	} else if changed {
		ctx, cancel := context.WithTimeout(e.life, e.callTimeout)
		defer cancel()
		var lines [][]byte
		err := call(ctx, "read the proposal", func() (err error) {
			lines, err = e.v.BufferLines(d.buf, 0, -1, false)
			return err
		})
		if err != nil {
			// Without the user's text, nothing must be written.
			e.logf("nvim: accept %q: %v; answering DIFF_REJECTED", tabName, err)
			e.Answers.Answer(tabName, false, "")
			return
		}
		text = d.format.joinLines(lines)
	}
	e.mu.Lock()
	d.accepted = text
	e.mu.Unlock()
	e.Answers.Answer(tabName, true, text)
}

func (e *Editor) reject(tabName string) {
	if e.Answers != nil {
		e.Answers.Answer(tabName, false, "")
	}
}

// reloadWhenWritten reloads path's unmodified buffers once the client has written
// the file (writeSeen), giving up after reloadTimeout. Polling a stat every few
// milliseconds is cheaper and more exact than claudecode.nvim's fixed 100 ms wait. It
// ends the wait of an earlier accepted diff of the file: that one's write has come,
// or will not.
func (e *Editor) reloadWhenWritten(path, accepted string) {
	superseded := make(chan struct{})
	e.mu.Lock()
	if earlier := e.reloads[path]; earlier != nil {
		close(earlier)
	}
	e.reloads[path] = superseded
	e.mu.Unlock()
	e.watches.Add(1)
	go func() {
		defer e.watches.Done()
		defer func() {
			e.mu.Lock()
			if e.reloads[path] == superseded {
				delete(e.reloads, path)
			}
			e.mu.Unlock()
		}()
		w := newWriteSeen(path, accepted)
		if w.holdsText(w.first) {
			e.reload(path)
			return
		}
		deadline := time.NewTimer(e.reloadTimeout)
		defer deadline.Stop()
		tick := time.NewTicker(e.reloadPoll)
		defer tick.Stop()
		for {
			select {
			case <-e.life.Done():
				return
			case <-superseded:
				return
			case <-deadline.C:
				e.logf("nvim: %s was not written within %v of being accepted; its buffers were not reloaded", path, e.reloadTimeout)
				return
			case <-tick.C:
				if w.written() {
					e.reload(path)
					return
				}
			}
		}
	}()
}

// writeSeen tells, poll by poll, when the client has written a file it accepted with
// text: as soon as the file holds text, or once it has changed and then stayed the
// same for a poll (the client wrote something else). A write caught half-way (the
// file truncated, the text not yet in it) is not reloaded: that would show an empty
// buffer and lose every window's place in it.
type writeSeen struct {
	path, text  string
	first, last workspace.Stamp
}

func newWriteSeen(path, text string) *writeSeen {
	return &writeSeen{path: path, text: text, first: workspace.StatStamp(path)}
}

func (w *writeSeen) holdsText(now workspace.Stamp) bool {
	if !now.Exists || now.Size != int64(len(w.text)) {
		return false
	}
	data, err := os.ReadFile(w.path)
	return err == nil && string(data) == w.text
}

// written is one poll.
func (w *writeSeen) written() bool {
	now := workspace.StatStamp(w.path)
	if now.UnchangedSince(w.first) {
		return false
	}
	if w.holdsText(now) {
		return true
	}
	settled := now.UnchangedSince(w.last)
	w.last = now
	return settled
}

func (e *Editor) reload(path string) {
	ctx, cancel := context.WithTimeout(e.life, e.callTimeout)
	defer cancel()
	if _, err := reloadBuffers(ctx, e.v, []string{path}); err != nil && !errors.Is(err, context.Canceled) {
		e.logf("nvim: reload %s: %v", path, err)
	}
}
