package filetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
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

// modify runs one tool call that changes files through the queue of its files
// (enqueue, below): read the files (holding their locks), compute the changes, then write
// them (write: refuse files with unsaved changes in Neovim, log them in the edit
// history, put them in place) and reload Neovim's buffers. Nothing is written when
// any step fails.
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
	return s.enqueue(sc.pol, &call{ctx: ctx, files: files, opts: o, conv: conv, note: note, tool: tool, compute: compute}), nil
}

// Every call that changes files takes one road. It waits in the queue of the files
// it changes; the call at the head of a queue runs every call waiting behind it as
// one batch, in arrival order. Agents send edits of one file in parallel: done one
// by one, each would read the file, write it through a temp file and a rename, and
// take the history's lock on its own. In a batch the file is read once; each call's
// change is computed on the content the call before it left (a call that fails
// changes nothing, and the next one goes on from the same content); each call is
// recorded in the history as its own edit, in its own conversation; and the file is
// written once, with the content after the last one. A call that changes several
// files, or creates, deletes or moves one, is a batch of its own (one that comes
// after a call that changed the file waits for the next batch). The batch lands
// whole or not at all, like a single call; should another process change a file
// meanwhile, the batch is computed again from a new read. A call is answered as
// soon as its batch is done; the first call still waiting then runs the next batch.

// call is one tool call that changes files.
type call struct {
	ctx     context.Context
	files   []workspace.File
	opts    readOpts
	conv    string
	note    string // what the result ends with (a new conversation's id)
	tool    string
	compute computeFunc
	turn    chan struct{} // closed when this call is to run the next batch
	done    chan struct{} // closed once res is set
	res     *mcp.CallToolResult
	changes []fileChange // what it changed in its batch
	text    string       // its result, once its batch lands
}

// fileQueue is the calls waiting to change the same files.
type fileQueue struct {
	mu      sync.Mutex
	waiting []*call
	busy    bool // a batch runs
}

// queueKey names a call's files by the root the first is reached through (a batch
// of one file is recorded in that root's history) and their absolute paths, sorted
// and joined by NUL.
type queueKey struct {
	root  *workspace.Root
	paths string
}

func keyOf(files []workspace.File) queueKey {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Abs
	}
	slices.Sort(paths)
	return queueKey{files[0].Root, strings.Join(paths, "\x00")}
}

// enqueue runs c through the queue of its files and returns its result.
func (s *Server) enqueue(pol *workspace.Policy, c *call) *mcp.CallToolResult {
	c.turn, c.done = make(chan struct{}), make(chan struct{})
	v, _ := s.queues.LoadOrStore(keyOf(c.files), &fileQueue{})
	q := v.(*fileQueue)
	q.mu.Lock()
	q.waiting = append(q.waiting, c)
	lead := !q.busy
	q.busy = true
	q.mu.Unlock()
	if !lead {
		select {
		case <-c.done:
			return c.res
		case <-c.turn:
		}
	}
	// c is first in the queue, hence first in the batch, which answers it (the calls
	// it leaves come after it).
	rest := s.runBatch(pol, q.take())
	q.mu.Lock()
	q.waiting = append(rest, q.waiting...)
	if len(q.waiting) > 0 {
		close(q.waiting[0].turn)
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	return c.res
}

// take removes from the queue the calls a batch may take: every call waiting, or,
// for calls that change several files, the first one.
func (q *fileQueue) take() []*call {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.waiting)
	if n > 0 && len(q.waiting[0].files) > 1 {
		n = 1
	}
	calls := q.waiting[:n:n]
	q.waiting = q.waiting[n:]
	return calls
}

// runBatch runs calls as one batch, answers those it ran, and returns the calls it
// left for the next batch.
func (s *Server) runBatch(pol *workspace.Policy, calls []*call) (rest []*call) {
	files := calls[0].files
	defer lockAll(pol, files)()
	ctx := calls[0].ctx
	if len(calls) > 1 {
		// The write outlives a cancelled first call: the others are waiting on it.
		ctx = context.WithoutCancel(ctx)
	}
	for attempt := 0; ; attempt++ {
		o := batchOpts(calls)
		ts, err := s.readTargets(files, o)
		if err != nil {
			answer(calls, func(*call) *mcp.CallToolResult { return fail(err) })
			return nil
		}
		changed, rest := computeInTurn(ts, calls, o)
		err = s.write(ctx, changed, o.private)
		if errors.Is(err, workspace.ErrChanged) && attempt < 3 {
			continue // another process changed a file: compute every call again
		}
		var changes []fileChange
		ran := calls[:len(calls)-len(rest)]
		answer(ran, func(c *call) *mcp.CallToolResult {
			switch {
			case c.res != nil:
				return c.res
			case err != nil:
				return fail(err)
			}
			changes = append(changes, c.changes...)
			return mcp.NewToolResultText(c.text + c.note)
		})
		if len(changes) > 0 {
			s.reloadBuffers(changes)
		}
		return rest
	}
}

// answer sets each call's result and lets it return.
func answer(calls []*call, result func(*call) *mcp.CallToolResult) {
	for _, c := range calls {
		c.res = result(c)
		close(c.done)
	}
}

// batchOpts is how a batch reads its files: as its most lenient call would (each
// call then checks what it needs: admit), and as private only if every call is.
func batchOpts(calls []*call) readOpts {
	o := readOpts{private: true}
	for _, c := range calls {
		o.mayBeMissing = o.mayBeMissing || c.opts.mayBeMissing
		o.binaryOK = o.binaryOK || c.opts.binaryOK
		o.private = o.private && c.opts.private
	}
	return o
}

// admit checks the files a call is given as the call's own readOpts would have read
// them: readTargets checked them only as the batch's most lenient call needs.
func admit(ts []*target, read, own readOpts) error {
	for _, t := range ts {
		if !t.Exists && read.mayBeMissing && !own.mayBeMissing {
			return missing(t.file)
		}
		// Only bytes as read can be binary: a text tool's change leaves text.
		if t.Exists && t.Info != nil && read.binaryOK && !own.binaryOK {
			if err := checkText(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// computeInTurn computes each call's changes on the files as the call before it
// left them, starting from the files as read, and returns the calls that change
// them and those left for the next batch. The others are answered here. The memory
// to reuse goes to the first call that changes a file (the calls after it start
// from what it built there).
func computeInTurn(read []*target, calls []*call, o readOpts) (changed, rest []*call) {
	state := read
	for i, c := range calls {
		c.changes, c.res, c.text = nil, nil, ""
		if err := c.ctx.Err(); err != nil {
			c.res = fail(err)
			continue
		}
		ts := make([]*target, len(state))
		for j, t := range state {
			copied := *t
			ts[j] = &copied
		}
		if err := admit(ts, o, c.opts); err != nil {
			c.res = fail(err)
			continue
		}
		changes, text, err := c.compute(ts)
		switch {
		case err != nil:
			c.res = fail(err)
			continue
		case len(changes) == 0:
			c.res = mcp.NewToolResultText(text + c.note)
			continue
		}
		content := len(ts) == 1 && len(changes) == 1 && changes[0].t == ts[0] && ts[0].Exists &&
			(changes[0].op == history.Edit || changes[0].op == history.Replace)
		if !content && len(changed) > 0 {
			// Only a change of an existing file's content chains on the one before.
			return changed, calls[i:]
		}
		c.changes, c.text = changes, text
		changed = append(changed, c)
		if !content {
			return changed, calls[i+1:]
		}
		// The next call starts from these bytes; only the file read has an identity
		// on disk.
		state = []*target{{file: ts[0].file, Was: workspace.Was{Content: changes[0].after, Exists: true}}}
	}
	return changed, nil
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
				if err := checkText(t); err != nil {
					return nil, err
				}
			}
		case errors.Is(err, fs.ErrNotExist) && o.mayBeMissing:
		case errors.Is(err, fs.ErrNotExist):
			return nil, missing(f)
		default:
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// checkText refuses a file that is not text.
func checkText(t *target) error {
	if err := edit.CheckText(t.Content); err != nil {
		return errorf("%s: %v", t.file.Abs, err)
	}
	return nil
}

// missing is the error of a file a call needs that does not exist.
func missing(f workspace.File) error {
	return errorf("file not found: %s (check the path; relative paths are resolved against %s)", f.Abs, f.Root.Path())
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

// write logs the changes of a batch's calls in the edit history of their workspace
// roots and puts them on disk: per root, one history.Batch, a commit per call,
// whose files are one workspace.Tx (checked unchanged since read, staged, put in
// place, undone on failure), the roots one after the other in path order; a failure
// in a later root undoes the earlier ones. A file several calls changed in turn is
// written once, with what the last one left.
func (s *Server) write(ctx context.Context, calls []*call, private bool) error {
	var changes []fileChange
	for _, c := range calls {
		changes = append(changes, c.changes...)
	}
	if len(changes) == 0 {
		return nil
	}
	if err := s.checkBuffers(changes); err != nil {
		return err
	}
	var batches []history.Batch
	var txs []*workspace.Tx
	var nets [][]fileChange
	for _, root := range byRoot(changes) {
		store, err := s.store(root)
		if err != nil {
			return err
		}
		b := history.Batch{Store: store}
		var inRoot []fileChange
		for _, c := range calls {
			commit := history.Commit{Conversation: c.conv, Tool: c.tool, Source: history.SourceMCP}
			for _, ch := range c.changes {
				if ch.t.file.Root == root {
					commit.Changes = append(commit.Changes, ch.record())
					inRoot = append(inRoot, ch)
				}
			}
			if len(commit.Changes) > 0 {
				b.Commits = append(b.Commits, commit)
			}
		}
		net := netChanges(inRoot)
		tx := s.tx(net)
		tx.TakeTemp = store.TakeTemp
		b.Files, txs, nets = tx, append(txs, tx), append(nets, net)
		batches = append(batches, b)
	}
	if _, err := s.recordAll(ctx, batches); err != nil {
		return explainApplyError(err)
	}
	for i, tx := range txs {
		s.keepWritten(tx, nets[i], private)
	}
	return nil
}

// netChanges is what changes put on disk: a file the calls of a batch changed in
// turn (each from what the one before left) goes from what the first read to what
// the last left.
func netChanges(changes []fileChange) []fileChange {
	if len(changes) < 2 || changes[0].t.file.Abs != changes[len(changes)-1].t.file.Abs {
		return changes
	}
	net := changes[len(changes)-1]
	net.t = changes[0].t
	return []fileChange{net}
}

// keepWritten remembers the content edits left in the files tx wrote, so that the
// next call need not read it back (contents.go).
func (s *Server) keepWritten(tx *workspace.Tx, net []fileChange, private bool) {
	for _, c := range net {
		if c.op == history.Edit || c.op == history.Replace {
			info, settled := tx.Written(c.t.file)
			s.written.keep(c.t.file.Abs, info, settled, c.after, c.t.Content, private)
		}
	}
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

// byRoot lists the workspace roots of changes, each of which has its own history
// store, ordered by their paths: stores are locked in that order, so two calls that
// span the same roots never wait for each other in a cycle.
func byRoot(changes []fileChange) []*workspace.Root {
	var roots []*workspace.Root
	for _, c := range changes {
		if !slices.Contains(roots, c.t.file.Root) {
			roots = append(roots, c.t.file.Root)
		}
	}
	slices.SortStableFunc(roots, func(a, b *workspace.Root) int { return strings.Compare(a.Path(), b.Path()) })
	return roots
}

// tx is the workspace.Tx that puts changes on disk.
func (s *Server) tx(changes []fileChange) *workspace.Tx {
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
	for _, path := range changedPaths(changes) {
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
	return nil
}

// reloadBuffers reloads Neovim's unmodified buffers of the changed files.
func (s *Server) reloadBuffers(changes []fileChange) {
	if s.cfg.Buffers == nil {
		return
	}
	if err := s.cfg.Buffers.Reload(changedPaths(changes)...); err != nil {
		s.cfg.Logf("reload Neovim buffers: %v", err)
	}
}

// changedPaths are the files changes touch, each once (a batch may change one file
// many times), in order.
func changedPaths(changes []fileChange) []string {
	var paths []string
	for _, c := range changes {
		for _, p := range []string{c.t.file.Abs, c.dest.Abs} {
			if p != "" && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	return paths
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
