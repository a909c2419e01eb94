package filetools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// queued says whether a batch of path runs, and how many calls wait behind it.
func (s *Server) queued(root *workspace.Root, path string) (busy bool, waiting int) {
	v, ok := s.queues.Load(queueKey{root, path})
	if !ok {
		return false, 0
	}
	q := v.(*fileQueue)
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.busy, len(q.waiting)
}

// Edits of one file sent in parallel run as one batch: every call lands (one that
// fails changes nothing, and the calls after it go on from the same content), each
// is an edit of its own in the history, in its own conversation, and rejecting one
// takes back only its line.
func TestParallelEditsOfAFileLandAsOneBatch(t *testing.T) {
	root := testenv.TempDir(t)
	path := filepath.Join(root, "a.txt")
	var lines, want []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("line %02d", i))
		want = append(want, fmt.Sprintf("LINE %02d", i))
	}
	writeFile(t, path, strings.Join(lines, "\n")+"\n", 0o644)
	c, srv := serveServer(t, Config{Roots: []string{root}})
	f, err := srv.fixed.Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	// Hold the file, so that the first call waits with its batch of one while the
	// others queue behind it: they then run as the next batch.
	unlock := srv.fixed.Lock(f.Abs)
	results := make([]string, 21)
	failed := make([]bool, 21)
	var wg sync.WaitGroup
	for i := range 21 {
		old, new := "", ""
		switch {
		case i == 10:
			old, new = "no such line", "x" // fails in the middle of the batch
		case i < 10:
			old, new = lines[i], want[i]
		default:
			old, new = lines[i-1], want[i-1]
		}
		wg.Go(func() {
			results[i], failed[i] = c.call("edit_file", map[string]any{"path": path, "old_string": old, "new_string": new})
		})
		if i == 0 {
			testenv.Eventually(t, "the first call to take its turn", func() bool { busy, _ := srv.queued(f.Root, f.Abs); return busy })
		}
	}
	testenv.Eventually(t, "20 calls to queue up", func() bool { _, n := srv.queued(f.Root, f.Abs); return n == 20 })
	unlock()
	wg.Wait()
	for i, text := range results {
		if failed[i] != (i == 10) {
			t.Errorf("call %d: failed %v: %s", i, failed[i], text)
		}
	}
	if !strings.Contains(results[10], "not found") {
		t.Errorf("the failing call says %q", results[10])
	}
	expectFile(t, path, strings.Join(want, "\n")+"\n", 0o644)

	store := testenv.OpenStore(t, root)
	list, err := store.List(history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	convs := map[string]bool{}
	for _, e := range list.Entries {
		convs[e.ConversationID] = true
	}
	if len(list.Entries) != 20 || len(convs) != 20 {
		t.Fatalf("the history holds %d edits in %d conversations, want 20 in 20", len(list.Entries), len(convs))
	}
	var fifth *history.Entry
	for _, e := range list.Entries {
		if strings.Contains(testenv.ReadFile(t, filepath.Join(root, ".mcp", "edit_history", *e.DiffFile)), "+LINE 05") {
			fifth = e
		}
	}
	if fifth == nil {
		t.Fatal("no edit wrote LINE 05")
	}
	if _, err := store.Decide(context.Background(), history.Selection{IDs: []string{fifth.EditID}}, history.Rejected, false); err != nil {
		t.Fatal(err)
	}
	want[5] = lines[5]
	expectFile(t, path, strings.Join(want, "\n")+"\n", 0o644)
}

// Every call that changes a file waits in its queue: write_file of an existing file
// joins the edits around it in one batch (logged at one instant, written once); a
// delete after them waits for the next batch, and the calls after the delete see
// the file gone, as they would one by one.
func TestEveryChangeOfAFileGoesThroughItsQueue(t *testing.T) {
	root := testenv.TempDir(t)
	path := filepath.Join(root, "a.txt")
	writeFile(t, path, "one\ntwo\n", 0o644)
	c, srv := serveServer(t, Config{Roots: []string{root}})
	f, err := srv.fixed.Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"edit_file", map[string]any{"old_string": "one", "new_string": "ONE"}},
		{"write_file", map[string]any{"content": "ONE\ntwo\nthree\n"}},
		{"edit_file", map[string]any{"old_string": "two", "new_string": "TWO"}},
		{"delete_file", map[string]any{}},
		{"edit_file", map[string]any{"old_string": "ONE", "new_string": "1"}}, // the file is gone
		{"write_file", map[string]any{"content": "new\n"}},
	}
	var batches []int // the calls of each batch recorded
	srv.recordAll = func(ctx context.Context, bs []history.Batch) ([][]*history.Entry, error) {
		batches = append(batches, len(bs[0].Commits))
		return history.RecordAll(ctx, bs)
	}
	unlock := srv.fixed.Lock(f.Abs)
	results := make([]string, len(calls))
	failed := make([]bool, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		call.args["path"] = path
		wg.Go(func() { results[i], failed[i] = c.call(call.tool, call.args) })
		if i == 0 {
			testenv.Eventually(t, "the first call to take its turn", func() bool { busy, _ := srv.queued(f.Root, f.Abs); return busy })
		} else {
			testenv.Eventually(t, fmt.Sprintf("call %d to queue up", i), func() bool { _, n := srv.queued(f.Root, f.Abs); return n == i })
		}
	}
	unlock()
	wg.Wait()
	for i, text := range results {
		if failed[i] != (i == 4) {
			t.Errorf("%s (call %d): failed %v: %s", calls[i].tool, i, failed[i], text)
		}
	}
	if !strings.Contains(results[4], "file not found") {
		t.Errorf("the edit after the delete says %q", results[4])
	}
	expectFile(t, path, "new\n", 0o644)

	list, err := testenv.OpenStore(t, root).List(history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ops []history.Operation
	for _, e := range list.Entries {
		ops = append(ops, e.Operation)
	}
	want := []history.Operation{history.Edit, history.Replace, history.Edit, history.Delete, history.Create}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("the history holds %v, want %v", ops, want)
	}
	// The first call runs alone (the others queue while it waits for the file).
	if fmt.Sprint(batches) != "[1 2 1 1]" {
		t.Errorf("the calls were recorded in batches of %v, want [1 2 1 1]", batches)
	}
}
