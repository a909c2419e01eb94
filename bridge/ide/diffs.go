package ide

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// phase is where a diff is in its life, one step at a time, never back:
//
//	pending → answered → closing → closed
//	              └→ closeDue → closing (torn down while the editor was still drawing it)
//
// with the write of an accepted diff, when the client writes the file while the
// view is still open, taking answered and closing to their written twins: the
// file's buffers are reloaded once the view is closed. A diff leaves Server.diffs
// when close_tab, closeAllDiffTabs, a newer diff of its tab name or its client's
// end takes it (an accepted diff whose write is awaited outlives its client until
// the write is settled), and is torn down then.
type phase int

const (
	pending         phase = iota // drawn or being drawn (view nil), waiting for the user
	answered                     // answered (how says how): the view is still open
	answeredWritten              // answered, and the client wrote the file meanwhile
	closeDue                     // torn down while the editor was drawing: closed once drawn
	closing                      // the view is being torn down, once
	closingWritten               // closing, and the client wrote the file meanwhile
	closed                       // the view is torn down
)

// diff is one openDiff proposal this server opened.
type diff struct {
	req     DiffRequest
	owner   *client
	conv    string
	before  []byte // the old file when openDiff arrived
	existed bool
	answer  chan Answer // buffered: the one answer to the waiting openDiff

	// Guarded by Server.mu.
	phase phase
	how   Teardown    // once answered: ClientWrites (FILE_SAVED), Replaced or NothingWritten
	final string      // the accepted text, once answered with ClientWrites
	view  View        // once the editor has shown it
	watch *writeWatch // while the client's write of the accepted text is awaited
}

// status is the diff's answer, as Server.Status reports it.
func (d *diff) status() string {
	switch {
	case d.phase == pending:
		return "pending"
	case d.how == ClientWrites:
		return "saved"
	}
	return "rejected"
}

// openDiffTool is openDiff as an mcp-go tool (the transport serves the real calls in
// serveOpenDiff; this answers one that reaches mcp-go anyway).
func (s *Server) openDiffTool(ctx context.Context, c *client, args map[string]any) (*mcp.CallToolResult, error) {
	req, err := diffRequestFrom(func(name string) (string, error) { return stringParam(args, name) })
	if err != nil {
		return nil, err
	}
	accepted, text, err := s.openDiff(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if accepted {
		return textResult("FILE_SAVED", text), nil
	}
	return textResult("DIFF_REJECTED", req.TabName), nil
}

// openDiff shows a proposal and blocks until the user decides (accepted, with the
// text to save), close_tab cancels it, or the request ends (client gone, Stop).
func (s *Server) openDiff(ctx context.Context, c *client, req DiffRequest) (accepted bool, text string, err error) {
	s.supersedeWatches(req.NewPath)
	before, existed, err := readOldFile(req.OldPath)
	if err != nil {
		return false, "", err
	}
	req.NewFile, req.Original = !existed, before
	d := &diff{
		req:     req,
		owner:   c,
		conv:    c.conversation(),
		before:  before,
		existed: existed,
		answer:  make(chan Answer, 1),
	}
	replaced, err := s.registerDiff(d)
	if err != nil {
		return false, "", err
	}
	if replaced != nil {
		s.teardown(replaced)
	}
	view, err := s.editor.Show(ctx, req)
	if err != nil {
		s.unregisterDiff(d)
		return false, "", asToolError(err, "Diff setup failed")
	}
	if s.shown(d, view) {
		s.teardown(d) // close_tab, a newer diff of the tab or Stop came while it was drawn
	}

	users := view.Answer()
	for {
		select {
		case a := <-d.answer:
			return a.Accepted, a.Text, nil
		case a := <-users:
			users = nil // at most one
			s.answer(d, a)
		case <-ctx.Done():
			// Nobody can answer this diff any more. Reject it if it is still pending;
			// either way its answer is then waiting in the channel.
			s.closeDiffs(s.takeDiffs(func(x *diff) bool { return x == d && x.phase == pending }))
			a := <-d.answer
			return a.Accepted, a.Text, nil
		}
	}
}

// shown gives d its view, and reports whether d's teardown came while the editor
// was drawing it: then the caller tears it down now.
func (s *Server) shown(d *diff, v View) (closeNow bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.view = v
	return d.phase == closeDue
}

// diffRequestFrom checks openDiff's arguments; arg returns a required string argument
// or the protocol's -32602 error.
func diffRequestFrom(arg func(name string) (string, error)) (DiffRequest, error) {
	var values [4]string
	for i, name := range []string{"old_file_path", "new_file_path", "new_file_contents", "tab_name"} {
		v, err := arg(name)
		if err != nil {
			return DiffRequest{}, err
		}
		values[i] = v
	}
	// The short strings are copied: as substrings of the request's frame they would
	// keep the whole frame (the file's text, megabytes) alive as long as the diff.
	req := DiffRequest{OldPath: strings.Clone(values[0]), NewPath: strings.Clone(values[1]), Contents: values[2], TabName: strings.Clone(values[3])}
	for _, p := range []struct{ name, path string }{{"old_file_path", req.OldPath}, {"new_file_path", req.NewPath}} {
		if !filepath.IsAbs(p.path) {
			return DiffRequest{}, &ToolError{Code: codeInvalidParams, Message: "Invalid params",
				Data: fmt.Sprintf("%s must be an absolute path, got %q", p.name, p.path)}
		}
	}
	if req.TabName == "" {
		return DiffRequest{}, &ToolError{Code: codeInvalidParams, Message: "Invalid params", Data: "tab_name must not be empty"}
	}
	return req, nil
}

// readOldFile reads the file a diff proposes to change; a missing file is a new file.
func readOldFile(path string) (data []byte, existed bool, err error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err == nil && info.IsDir() {
		return nil, false, &ToolError{Code: codeToolFailed, Message: "Cannot open diff",
			Data: fmt.Sprintf("old_file_path %s is a folder; openDiff compares a file with its proposed contents", path)}
	}
	if err == nil && !info.Mode().IsRegular() {
		// A FIFO would block the read until a writer came; a device may never end it.
		return nil, false, &ToolError{Code: codeToolFailed, Message: "Cannot open diff",
			Data: fmt.Sprintf("old_file_path %s is not a regular file (%v); openDiff compares a file with its proposed contents", path, info.Mode().Type())}
	}
	if err == nil {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, false, &ToolError{Code: codeToolFailed, Message: "Cannot open diff", Data: fmt.Sprintf("cannot read %s: %v", path, err)}
	}
	return data, true, nil
}

// registerDiff makes d the diff of its tab name. A diff already using that name is
// replaced: rejected if it was pending, and returned so the caller tears it down.
func (s *Server) registerDiff(d *diff) (replaced *diff, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateRunning {
		return nil, &ToolError{Code: codeToolFailed, Message: "IDE server is stopping", Data: "the editor bridge is shutting down; answer in the terminal"}
	}
	replaced = s.diffs[d.req.TabName]
	if replaced != nil {
		s.resolveLocked(replaced, Answer{}, Replaced)
	}
	s.diffs[d.req.TabName] = d
	return replaced, nil
}

// unregisterDiff forgets d after the editor failed to show it.
func (s *Server) unregisterDiff(d *diff) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.diffs[d.req.TabName] == d {
		delete(s.diffs, d.req.TabName)
	}
}

// resolveLocked answers a pending diff, once: accepted (with a) or, when a is a
// rejection, as rejected says (NothingWritten, or Replaced by a newer diff of its
// tab name). It reports whether d was pending.
func (s *Server) resolveLocked(d *diff, a Answer, rejected Teardown) bool {
	if d.phase != pending {
		return false
	}
	switch {
	case a.AsProposed:
		a = Answer{Accepted: true, Text: d.req.Contents}
		fallthrough
	case a.Accepted:
		d.how, d.final = ClientWrites, a.Text
	default:
		d.how = rejected
	}
	d.phase = answered
	d.answer <- a
	return true
}

// takeDiffs removes the matching diffs, rejecting the pending ones, and returns them
// for teardown.
func (s *Server) takeDiffs(match func(*diff) bool) []*diff {
	s.mu.Lock()
	defer s.mu.Unlock()
	var taken []*diff
	for tab, d := range s.diffs {
		if match(d) {
			s.resolveLocked(d, Answer{}, NothingWritten)
			delete(s.diffs, tab)
			taken = append(taken, d)
		}
	}
	return taken
}

// closeDiffs tears diffs down, then calls AfterDiffs if that left none open.
func (s *Server) closeDiffs(diffs []*diff) {
	for _, d := range diffs {
		s.teardown(d)
	}
	if len(diffs) == 0 || s.opts.AfterDiffs == nil {
		return
	}
	s.mu.Lock()
	none := len(s.diffs) == 0 && s.state == stateRunning
	s.mu.Unlock()
	if none {
		s.opts.AfterDiffs()
	}
}

// teardown closes d's view, once, then reloads the file's buffers if the client
// wrote it meanwhile. d has been answered (and left Server.diffs) before, so how is
// final. While the editor is still drawing the view, openDiff closes it once drawn.
func (s *Server) teardown(d *diff) {
	s.mu.Lock()
	switch {
	case d.phase >= closing:
		s.mu.Unlock()
		return
	case d.view == nil:
		d.phase = closeDue
		s.mu.Unlock()
		return
	case d.phase == answeredWritten:
		d.phase = closingWritten
	default:
		d.phase = closing
	}
	view, how := d.view, d.how
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.editorTimeout)
	defer cancel()
	if err := view.Close(ctx, how); err != nil {
		s.logf("ide: close diff %q: %v", d.req.TabName, err)
	}
	s.mu.Lock()
	due := d.phase == closingWritten
	d.phase = closed
	s.mu.Unlock()
	if due {
		s.reload(d)
	}
}

// answer resolves d with the user's answer from its view, if d is still pending
// (close_tab or a newer diff of the tab may have rejected it first).
func (s *Server) answer(d *diff, a Answer) {
	s.mu.Lock()
	accepted := s.resolveLocked(d, a, NothingWritten) && d.how == ClientWrites
	var w *writeWatch
	unchanged := false
	if accepted {
		w, unchanged = s.watchWriteLocked(d)
	}
	s.mu.Unlock()
	switch {
	case w != nil:
		go s.runWatch(w)
	case unchanged:
		s.logf("ide: %s was accepted unchanged; Claude Code treats that as a rejection, nothing to record", d.req.NewPath)
		s.settle(d)
	}
}

// closeTab answers close_tab: TAB_CLOSED always, and idempotent (the CLI sends it
// twice). For a pending diff it is the only cancellation the CLI ever sends.
func (s *Server) closeTab(_ context.Context, _ *client, args map[string]any) (*mcp.CallToolResult, error) {
	tab, err := stringParam(args, "tab_name")
	if err != nil {
		return nil, err
	}
	s.closeTabNamed(tab)
	return textResult("TAB_CLOSED"), nil
}

// closeTabNamed closes the diff of a tab name, if any, and makes the write watches
// look: Claude Code writes an accepted file right after its close_tabs.
func (s *Server) closeTabNamed(tab string) {
	s.closeDiffs(s.takeDiffs(func(d *diff) bool { return d.req.TabName == tab }))
	s.pokeWatches()
}

// closeAllDiffTabs closes the calling client's diffs, any status, plus those left by
// clients that disconnected, and starts a new conversation: the CLI calls it once at
// the start of every prompt. Another connected client's diffs are its own business.
func (s *Server) closeAllDiffTabs(_ context.Context, c *client, _ map[string]any) (*mcp.CallToolResult, error) {
	closed := s.takeDiffs(func(d *diff) bool { return d.owner == c || d.owner.gone.Load() })
	s.closeDiffs(closed)
	c.startNewTurn()
	return textResult(fmt.Sprintf("CLOSED_%d_DIFF_TABS", len(closed))), nil
}
