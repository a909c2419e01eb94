//go:build unix

package serve

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Twenty concurrent edits of different lines of one file all land: calls to one file
// are serialised, and none is reported as a success while being lost.
func TestConcurrentEditsOfOneFileAllLand(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", numberedLines(20, nil))
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, isErr := s.call("edit_file", map[string]any{"path": "a.txt", "old_string": fmt.Sprintf("line %d\n", i+1), "new_string": fmt.Sprintf("edited %d\n", i+1)})
			if isErr {
				errs <- text
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	got := s.Read("a.txt")
	for i := 0; i < 20; i++ {
		if !strings.Contains(got, fmt.Sprintf("edited %d\n", i+1)) {
			t.Fatalf("edit %d was lost:\n%s", i, got)
		}
	}
	if n := len(s.entries()); n != 20 {
		t.Fatalf("history has %d entries, want 20", n)
	}
}

// A call stuck waiting (here: another process holds the history lock) does not
// block other calls.
func TestSlowCallDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "a\n")
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": "b"}) // creates the store
	lock := flock.New(filepath.Join(s.dir, ".mcp", "edit_history", "history.lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		text, _ := s.call("edit_file", map[string]any{"path": "a.txt", "old_string": "b", "new_string": "c"})
		done <- text
	}()
	// While that edit waits for the lock, reads are answered.
	for i := 0; i < 5; i++ {
		if got := s.ok("read_files", map[string]any{"path": "a.txt"}); got != "1 | b" {
			t.Fatalf("read during the stuck edit: %q", got)
		}
	}
	select {
	case text := <-done:
		t.Fatalf("the edit finished while the lock was held: %q", text)
	default:
	}
	lock.Unlock()
	select {
	case text := <-done:
		if !strings.Contains(text, "Successfully replaced 1") {
			t.Fatalf("edit after the lock was released: %q", text)
		}
	case <-time.After(testenv.Scaled(30 * time.Second)):
		t.Fatal("the edit never finished after the lock was released")
	}
	s.expect("a.txt", "c\n")
}

// Pipelined calls sent without waiting (as a client may) are all answered, each
// with its own file's content.
func TestPipelinedCallsAllAnswered(t *testing.T) {
	t.Parallel()
	s := start(t)
	for i := range 50 {
		s.Write(fmt.Sprintf("f%d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(30*time.Second))
	defer cancel()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.c.Call(ctx, "read_files", map[string]any{"path": fmt.Sprintf("f%d.txt", i)})
			if err != nil {
				t.Error(err)
				return
			}
			want := fmt.Sprintf("1 | file %d", i)
			if got := res.Content[0].(mcp.TextContent).Text; res.IsError || got != want {
				t.Errorf("read of f%d.txt answered %q, want %q", i, got, want)
			}
		}()
	}
	wg.Wait()
}
