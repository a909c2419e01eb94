package filetools

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

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
