package filetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// target is a file a tool call reads or changes, as it was when the call read it.
type target struct {
	file workspace.File
	workspace.Was
	// reuse is memory the call may build the file's new content in (or nil): that of
	// an earlier content nothing refers to any more (contents.go).
	reuse []byte
}

// fileChange is one change a tool computed.
type fileChange struct {
	op    history.Operation
	t     *target        // the file changed; for a move, the source
	dest  workspace.File // destination of a move
	after []byte         // new content (create, replace, edit)
}

// computeFunc turns the current content of a call's files into changes and the
// result text. It is pure: it may run again if a file changes under it.
type computeFunc func(ts []*target) ([]fileChange, string, error)

// toolError is an error whose message is shown to the model as it is.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &toolError{fmt.Sprintf(format, args...)} }

// fail is the isError result of a failed call: what went wrong and what to do.
func fail(err error) *mcp.CallToolResult {
	msg := err.Error()
	if !strings.HasPrefix(msg, "Error: ") {
		msg = "Error: " + msg
	}
	return mcp.NewToolResultError(msg)
}

// readOpts say how a call reads its files.
type readOpts struct {
	mayBeMissing bool // a missing file is a target that does not exist (create, write)
	binaryOK     bool // bytes are not checked for being text (move, delete)
	linkItself   bool // the first path names a symlink itself, not its target (move, delete)
	// private: the call keeps no reference to the bytes it reads once it is over, and
	// builds its new content in target.reuse (edit_file): memory to reuse later.
	private bool
}

// modify runs one tool call that changes files: read the files (holding their
// locks), compute the changes, then write them (write: refuse files with unsaved
// changes in Neovim, log them in the edit history, put them in place) and reload
// Neovim's buffers. Nothing is written when any step fails; a file another process
// changed meanwhile makes the call start again from its read. An edit of one
// existing file goes through the file's queue (queue.go), batched with the edits
// sent alongside it.
func (s *Server) modify(ctx context.Context, req mcp.CallToolRequest, tool string, paths []string, o readOpts, compute computeFunc) (*mcp.CallToolResult, error) {
	conv, note, err := conversation(req)
	if err != nil {
		return fail(err), nil
	}
	sc, err := s.scope(ctx)
	if err != nil {
		return fail(err), nil
	}
	files, err := resolveAll(sc, paths, o.linkItself)
	if err != nil {
		return fail(err), nil
	}
	if len(files) == 1 && !o.mayBeMissing && !o.binaryOK && !o.linkItself { // an edit of one existing file
		return s.editInQueue(sc.pol, files[0], &queuedCall{ctx: ctx, conv: conv, note: note, tool: tool, compute: compute, private: o.private}), nil
	}
	defer lockAll(sc.pol, files)()
	for attempt := 0; ; attempt++ {
		ts, err := s.readTargets(files, o)
		if err != nil {
			return fail(err), nil
		}
		changes, result, err := compute(ts)
		if err != nil {
			return fail(err), nil
		}
		err = s.write(ctx, conv, tool, changes)
		if errors.Is(err, workspace.ErrChanged) && attempt < 3 {
			continue
		}
		if err != nil {
			return fail(err), nil
		}
		if len(changes) > 0 {
			s.reloadBuffers(changes)
		}
		return mcp.NewToolResultText(result + note), nil
	}
}

// conversation is the call's mcp_conversation_id, or a new one plus the note that
// tells the client to pass it on.
func conversation(req mcp.CallToolRequest) (id, note string, err error) {
	id = strings.TrimSpace(req.GetString("mcp_conversation_id", ""))
	if id != "" {
		if !history.ValidConversationID(id) {
			return "", "", errorf("mcp_conversation_id %q is not a valid id: use the id a previous call returned (at most 128 letters, digits, '_', '-', '.'; not starting with '.')", id)
		}
		return id, "", nil
	}
	id = history.NewConversationID()
	return id, "\n\nmcp_conversation_id: " + id + " (new conversation: pass this id as mcp_conversation_id on every later file-changing call of this turn)", nil
}

// resolveAll resolves client paths, refusing one file named twice; with linkItself
// the first one is not followed if it is a symlink (a delete or move acts on the name
// it was given, never its target).
func resolveAll(sc scope, paths []string, linkItself bool) ([]workspace.File, error) {
	out := make([]workspace.File, len(paths))
	seen := make(map[string]string, len(paths))
	for i, p := range paths {
		f, err := sc.resolve(p, i == 0 && linkItself)
		if err != nil {
			return nil, err
		}
		// Every change of a call is computed from the file as it was: two of one file
		// would lose the first.
		if first, dup := seen[f.Abs]; dup {
			return nil, errorf("%q and %q are the same file; a call changes each file once: put both changes in one item, or make two calls", first, p)
		}
		seen[f.Abs] = p
		out[i] = f
	}
	return out, nil
}

// lockAll takes the in-process locks of files in a fixed order (no deadlock between
// calls that share files) and returns the function that releases them.
func lockAll(pol *workspace.Policy, files []workspace.File) func() {
	abs := make([]string, 0, len(files))
	seen := map[string]bool{}
	for _, f := range files {
		if !seen[f.Abs] {
			seen[f.Abs] = true
			abs = append(abs, f.Abs)
		}
	}
	sort.Strings(abs)
	unlocks := make([]func(), len(abs))
	for i, a := range abs {
		unlocks[i] = pol.Lock(a)
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}

func (s *Server) readTargets(files []workspace.File, o readOpts) ([]*target, error) {
	ts := make([]*target, len(files))
	for i, f := range files {
		if f.Rel == "." {
			return nil, errorf("%s is the workspace root folder itself; the file tools work on files inside it and never move or delete the root", f.Abs)
		}
		t := &target{file: f}
		content, spare, info, settled, err := s.readFile(f, o.private)
		switch {
		case err == nil:
			if s.cfg.FileRead != nil {
				s.cfg.FileRead(int64(len(content)))
			}
			t.Was, t.reuse = workspace.Was{Content: content, Exists: true, Info: info, Settled: settled}, spare
			if !o.binaryOK {
				if err := edit.CheckText(content); err != nil {
					return nil, errorf("%s: %v", f.Abs, err)
				}
			}
		case errors.Is(err, fs.ErrNotExist) && o.mayBeMissing:
		case errors.Is(err, fs.ErrNotExist):
			return nil, errorf("file not found: %s (check the path; relative paths are resolved against %s)", f.Abs, f.Root.Path())
		default:
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// readFile reads f, or takes the bytes this server last wrote to it, and for a
// private read memory to build its new content in (contents.go). settled says
// whether info can tell a later write in place (workspace.Settled).
func (s *Server) readFile(f workspace.File, private bool) (content, spare []byte, info fs.FileInfo, settled bool, err error) {
	if s.written.has(f.Abs) {
		if info, err := f.Root.Stat(f.Rel); err == nil && info.Mode().IsRegular() && info.Size() <= s.cfg.MaxFileSize {
			if b, spare, ok := s.written.content(f.Abs, info, private); ok {
				return b, spare, info, true, nil
			}
		}
	}
	at := time.Now()
	content, info, err = f.Root.ReadFile(f.Rel, s.cfg.MaxFileSize)
	return content, nil, info, err == nil && workspace.Settled(info, at), err
}

// write logs changes in the edit history of their workspace roots and puts them on
// disk: per root, a history commit whose files are a workspace transaction (checked
// unchanged since read, staged, put in place, undone on failure), the roots one after
// the other in path order; a failure in a later root undoes the earlier ones.
func (s *Server) write(ctx context.Context, conv, tool string, changes []fileChange) error {
	if len(changes) == 0 {
		return nil
	}
	if err := s.checkBuffers(changes); err != nil {
		return err
	}
	var commits []history.StoreCommit
	for _, group := range byRoot(changes) {
		store, err := s.store(group[0].t.file.Root)
		if err != nil {
			return err
		}
		tx := s.transaction(group)
		tx.TakeTemp = store.TakeTemp
		c := history.Commit{Conversation: conv, Tool: tool, Source: history.SourceMCP, Files: tx}
		for _, ch := range group {
			c.Changes = append(c.Changes, ch.record())
		}
		commits = append(commits, history.StoreCommit{Store: store, Commit: c})
	}
	_, err := s.recordAll(ctx, commits)
	return explainApplyError(err)
}

// explainApplyError says that a call whose files were put back recorded nothing.
func explainApplyError(err error) error {
	var ae *workspace.ApplyError
	if errors.As(err, &ae) {
		if len(ae.Lost) > 0 {
			return fmt.Errorf("%w. Nothing was recorded in the edit history", err)
		}
		return fmt.Errorf("%w, and nothing was recorded in the edit history. Fix the cause, then call again", err)
	}
	return err
}

// byRoot groups changes by workspace root, each of which has its own history store,
// ordered by the roots' paths: stores are locked in that order, so two calls that
// span the same roots never wait for each other in a cycle.
func byRoot(changes []fileChange) [][]fileChange {
	index := map[*workspace.Root]int{}
	var groups [][]fileChange
	for _, c := range changes {
		r := c.t.file.Root
		i, ok := index[r]
		if !ok {
			i = len(groups)
			index[r] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		return groups[i][0].t.file.Root.Path() < groups[j][0].t.file.Root.Path()
	})
	return groups
}

// transaction is the workspace transaction that puts changes on disk.
func (s *Server) transaction(changes []fileChange) *workspace.Tx {
	tx := workspace.NewTx(s.cfg.Sync)
	for _, c := range changes {
		switch c.op {
		case history.Delete:
			tx.Delete(c.t.file, c.t.Was)
		case history.Move:
			tx.Move(c.t.file, c.t.Was, c.dest)
		default:
			tx.Write(c.t.file, c.t.Was, c.after)
		}
	}
	return tx
}

func (c fileChange) record() history.Change {
	h := history.Change{Op: c.op, Path: c.t.file.Abs, Before: c.t.Content, BeforeExists: c.t.Exists, BeforeInfo: c.t.Info, After: c.after}
	if c.op == history.Move {
		h.Path, h.From = c.dest.Abs, c.t.file.Abs
	}
	return h
}

// checkBuffers refuses to change a file that has unsaved changes in Neovim.
func (s *Server) checkBuffers(changes []fileChange) error {
	if s.cfg.Buffers == nil {
		return nil
	}
	for _, c := range changes {
		for _, path := range c.paths() {
			dirty, err := s.cfg.Buffers.Modified(path)
			if err != nil {
				// Fail closed: the answer could have been yes. (Buffers whose
				// Neovim exited answers false, nil.)
				return errorf("%v", err)
			}
			if dirty {
				return errorf("%s has unsaved changes in the editor (Neovim); ask the user to save or discard them, then try again", path)
			}
		}
	}
	return nil
}

// reloadBuffers reloads Neovim's unmodified buffers of the changed files.
func (s *Server) reloadBuffers(changes []fileChange) {
	if s.cfg.Buffers == nil {
		return
	}
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.paths()...)
	}
	if err := s.cfg.Buffers.Reload(paths...); err != nil {
		s.cfg.Logf("reload Neovim buffers: %v", err)
	}
}

func (c fileChange) paths() []string {
	if c.op == history.Move {
		return []string{c.t.file.Abs, c.dest.Abs}
	}
	return []string{c.t.file.Abs}
}

// readText reads one text file for a read tool.
func (s *Server) readText(ctx context.Context, path string) (*target, error) {
	f, err := s.resolveOne(ctx, path)
	if err != nil {
		return nil, err
	}
	ts, err := s.readTargets([]workspace.File{f}, readOpts{})
	if err != nil {
		return nil, err
	}
	return ts[0], nil
}

// resolveOne resolves the path a tool was given within the caller's roots.
func (s *Server) resolveOne(ctx context.Context, path string) (workspace.File, error) {
	sc, err := s.scope(ctx)
	if err != nil {
		return workspace.File{}, err
	}
	return sc.resolve(path, false)
}

// sessionID identifies the calling client (views are per client).
func sessionID(ctx context.Context) string {
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		return sess.SessionID()
	}
	return ""
}
