package history

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// A save of a file with history is recorded as the user's accepted edit; a file
// without history, one already in its recorded state, and one written again since
// the save are left alone.
func TestRecordUserSave(t *testing.T) {
	w := newWS(t)
	ctx := context.Background()
	w.writeRaw("a.txt", "one\ntwo\n")
	w.recordWritten("claude_x_y", "a.txt", "one\ntwo\n", "one\nTWO\n")
	w.writeRaw("free.txt", "no history\n")
	if err := w.store.RecordUserSave(ctx, w.abs("free.txt"), nil); err != nil || w.count() != 1 {
		t.Fatalf("a file without history: %v, %d entries", err, w.count())
	}
	if err := w.store.RecordUserSave(ctx, w.abs("a.txt"), nil); err != nil || w.count() != 1 {
		t.Fatalf("a file in its recorded state: %v, %d entries", err, w.count())
	}
	w.writeRaw("a.txt", "ONE\nTWO\n")
	notTheSave := func(fs.FileInfo) bool { return false }
	if err := w.store.RecordUserSave(ctx, w.abs("a.txt"), notTheSave); err != nil || w.count() != 1 {
		t.Fatalf("a file written since the save: %v, %d entries", err, w.count())
	}
	if err := w.store.RecordUserSave(ctx, w.abs("a.txt"), nil); err != nil {
		t.Fatal(err)
	}
	l, err := w.store.List(Filter{})
	if err != nil || len(l.Entries) != 2 {
		t.Fatalf("%v, %d entries", err, len(l.Entries))
	}
	e := l.Entries[1]
	if e.Source != SourceUser || e.Status != Accepted || e.ToolName != "save" || !strings.HasPrefix(e.ConversationID, "user_") {
		t.Fatalf("the save is recorded as %+v", e)
	}
	if drifts, err := w.store.Check(); err != nil || len(drifts) != 0 {
		t.Fatalf("after the save the file differs from its history: %v %v", drifts, err)
	}
	// Rejecting the agent's edit keeps the user's.
	if _, err := w.store.Decide(ctx, Selection{IDs: []string{l.Entries[0].EditID}}, Rejected, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.read("a.txt"); got != "ONE\ntwo\n" {
		t.Fatalf("after the reject: %q", got)
	}
}

// A store's write guard is asked with the files a decision or a restore writes,
// and its refusal leaves files and history as they were; a decision that writes no
// file does not ask.
func TestWriteGuardRefusesBeforeAnythingIsWritten(t *testing.T) {
	w := newWS(t)
	ctx := context.Background()
	w.writeRaw("a.txt", "one\n")
	e := w.recordWritten("claude_x_y", "a.txt", "one\n", "two\n")[0]
	var asked [][]string
	refuse := errors.New("unsaved")
	w.store.SetWriteGuard(func(paths []string) error {
		asked = append(asked, paths)
		return refuse
	})
	if _, err := w.store.Decide(ctx, Selection{IDs: []string{e.EditID}}, Accepted, false); err != nil || len(asked) != 0 {
		t.Fatalf("accepting a pending edit writes no file: %v, asked %v", err, asked)
	}
	if _, err := w.store.Decide(ctx, Selection{IDs: []string{e.EditID}}, Rejected, false); !errors.Is(err, refuse) {
		t.Fatalf("reject: %v, want the guard's refusal", err)
	}
	w.writeRaw("a.txt", "by hand\n")
	if _, err := w.store.Restore(ctx, w.abs("a.txt"), true); !errors.Is(err, refuse) {
		t.Fatalf("restore: %v, want the guard's refusal", err)
	}
	if len(asked) != 2 || asked[0][0] != w.abs("a.txt") || asked[1][0] != w.abs("a.txt") {
		t.Fatalf("the guard was asked %v", asked)
	}
	if got, _ := w.read("a.txt"); got != "by hand\n" {
		t.Fatalf("a refused decision wrote the file: %q", got)
	}
	l, _ := w.store.List(Filter{})
	if len(l.Entries) != 1 || l.Entries[0].Status != Accepted {
		t.Fatalf("a refused decision changed the history: %+v", l.Entries)
	}
}

// recordWritten records a change already on disk, as Claude Code's hook does.
func (w *ws) recordWritten(conv, rel, before, after string) []*Entry {
	w.t.Helper()
	w.writeRaw(rel, after)
	entries, err := w.store.Record(context.Background(), Commit{
		Conversation: conv, Tool: "Edit", Source: SourceClaude,
		Changes: []Change{{Op: Edit, Path: w.abs(rel), Before: []byte(before), BeforeExists: true, After: []byte(after)}},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return entries
}

func (w *ws) count() int {
	w.t.Helper()
	l, err := w.store.List(Filter{})
	if err != nil {
		w.t.Fatal(err)
	}
	return len(l.Entries)
}
