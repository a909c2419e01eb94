package filetools

import (
	"context"
	"errors"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Agents send edits of one file in parallel. Done one by one, each would read the
// file, write it through a temp file and a rename, and take the history's lock on
// its own. Instead the edits of a file queue up: the call at the head of the queue
// runs every call waiting behind it as a batch, in arrival order. The file is read
// once; each call's change is computed on the content the call before it left (a
// call that fails changes nothing, and the next one goes on from the same content);
// each call is recorded in the history as its own edit, in its own conversation;
// and the file is written once, with the content after the last one. The batch
// lands whole or not at all, like a single call. A call is answered as soon as its
// batch is done; the first call still waiting then runs the next batch.

// queuedCall is one tool call in a file's queue.
type queuedCall struct {
	ctx     context.Context
	conv    string
	note    string // what the result ends with (a new conversation's id)
	tool    string
	compute computeFunc
	private bool          // readOpts.private
	turn    chan struct{} // closed when this call is to run the next batch
	done    chan struct{} // closed once res is set
	res     *mcp.CallToolResult
	change  *fileChange // what it changed in its batch (nil: nothing)
	text    string      // its result, once its batch lands
}

// fileQueue is the calls waiting to change one file.
type fileQueue struct {
	mu      sync.Mutex
	waiting []*queuedCall
	busy    bool // a batch runs
}

// queueKey names a file by the root it is reached through, since a batch is
// recorded in that root's history.
type queueKey struct {
	root *workspace.Root
	abs  string
}

// editInQueue runs a call that changes the one existing file f through f's queue.
func (s *Server) editInQueue(pol *workspace.Policy, f workspace.File, c *queuedCall) *mcp.CallToolResult {
	c.turn, c.done = make(chan struct{}), make(chan struct{})
	v, _ := s.queues.LoadOrStore(queueKey{f.Root, f.Abs}, &fileQueue{})
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
	q.mu.Lock()
	batch := q.waiting
	q.waiting = nil
	q.mu.Unlock()
	s.runBatch(pol, f, batch)
	q.mu.Lock()
	if len(q.waiting) > 0 {
		close(q.waiting[0].turn)
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	return c.res
}

// runBatch runs calls on f as one batch and answers each of them.
func (s *Server) runBatch(pol *workspace.Policy, f workspace.File, calls []*queuedCall) {
	defer func() {
		for _, c := range calls {
			close(c.done)
		}
	}()
	defer pol.Lock(f.Abs)()
	// The write outlives a cancelled first call: the others are waiting on it.
	ctx := context.WithoutCancel(calls[0].ctx)
	for attempt := 0; ; attempt++ {
		private := true
		for _, c := range calls {
			private = private && c.private
		}
		ts, err := s.readTargets([]workspace.File{f}, readOpts{private: private})
		if err != nil {
			for _, c := range calls {
				c.res = fail(err)
			}
			return
		}
		changed := computeInTurn(ts[0], calls)
		err = s.writeBatch(ctx, changed, private)
		if errors.Is(err, workspace.ErrChanged) && attempt < 3 {
			continue // another process wrote f: compute every call again
		}
		var changes []fileChange
		for _, c := range changed {
			if err != nil {
				c.res = fail(err)
			} else {
				c.res = mcp.NewToolResultText(c.text + c.note)
				changes = append(changes, *c.change)
			}
		}
		if len(changes) > 0 {
			s.reloadBuffers(changes[len(changes)-1:])
		}
		return
	}
}

// computeInTurn computes each call's change on the content the one before it left,
// starting from the file as read, and returns the calls that change the file. The
// others are answered here. The memory to reuse goes to the first call that changes
// the file (the calls after it start from what it built there).
func computeInTurn(read *target, calls []*queuedCall) []*queuedCall {
	f, was, reuse := read.file, read.Was, read.reuse
	var changed []*queuedCall
	for _, c := range calls {
		c.change, c.res = nil, nil
		if err := c.ctx.Err(); err != nil {
			c.res = fail(err)
			continue
		}
		t := &target{file: f, Was: was, reuse: reuse}
		changes, text, err := c.compute([]*target{t})
		switch {
		case err != nil:
			c.res = fail(err)
		case len(changes) == 0:
			c.res = mcp.NewToolResultText(text + c.note)
		case len(changes) > 1 || changes[0].t != t || (changes[0].op != history.Edit && changes[0].op != history.Replace):
			c.res = fail(errorf("internal error: %s changed more than its one file's content", c.tool))
		default:
			c.change, c.text = &changes[0], text
			// The next call starts from these bytes; only the file read has an
			// identity on disk.
			was, reuse = workspace.Was{Content: changes[0].after, Exists: true}, nil
			changed = append(changed, c)
		}
	}
	return changed
}

// writeBatch is write for the calls of a batch that change its file: each call is
// a commit of its own in the file's history, and one transaction writes the last
// content.
func (s *Server) writeBatch(ctx context.Context, calls []*queuedCall, private bool) error {
	if len(calls) == 0 {
		return nil
	}
	first, last := calls[0].change, calls[len(calls)-1].change
	if err := s.checkBuffers([]fileChange{*last}); err != nil {
		return err
	}
	store, err := s.store(first.t.file.Root)
	if err != nil {
		return err
	}
	commit := func(c *queuedCall) history.Commit {
		return history.Commit{Conversation: c.conv, Tool: c.tool, Source: history.SourceMCP, Changes: []history.Change{c.change.record()}}
	}
	sc := history.StoreCommit{Store: store}
	for _, c := range calls[:len(calls)-1] {
		sc.Batched = append(sc.Batched, commit(c))
	}
	tx := workspace.NewTx(s.cfg.Sync)
	tx.TakeTemp = store.TakeTemp
	tx.Write(first.t.file, first.t.Was, last.after)
	sc.Commit = commit(calls[len(calls)-1])
	sc.Commit.Files = tx
	if _, err = s.recordAll(ctx, []history.StoreCommit{sc}); err != nil {
		return explainApplyError(err)
	}
	info, settled := tx.Written(first.t.file)
	s.written.keep(first.t.file.Abs, info, settled, last.after, first.t.Was.Content, private)
	return nil
}
