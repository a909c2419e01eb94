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
