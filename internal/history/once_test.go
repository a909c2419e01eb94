package history

import (
	"context"
	"testing"
	"time"
)

// recordWritten records a change already on disk, as Claude Code's hook does.
func (w *ws) recordWritten(conv, rel, before, after string, once time.Duration) []*Entry {
	w.t.Helper()
	w.writeRaw(rel, after)
	entries, err := w.store.Record(context.Background(), Commit{
		Conversation: conv, Tool: "Edit", Source: SourceClaude, Once: once,
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

// TestOnceBridgeThenHook: a diff accepted in Neovim is recorded by the bridge; the
// hook's PostToolUse of the same write then records nothing.
func TestOnceBridgeThenHook(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "one\n")
	r := NewDiffRecorder([]string{w.dir})
	w.writeRaw("a.txt", "two\n")
	if _, err := r.RecordAccepted("conv_ide", w.abs("a.txt"), []byte("one\n"), true, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if got := w.recordWritten("claude_x_y", "a.txt", "one\n", "two\n", RecordOnceWithin); got != nil {
		t.Fatalf("the hook recorded the bridge's change again: %v", got)
	}
	w.wantOneAccepted()
}

// wantOneAccepted fails unless the history holds exactly one entry, accepted: the
// user accepted the diff in the editor.
func (w *ws) wantOneAccepted() {
	w.t.Helper()
	l, err := w.store.List(Filter{})
	if err != nil {
		w.t.Fatal(err)
	}
	if len(l.Entries) != 1 || l.Entries[0].Status != Accepted {
		w.t.Fatalf("the history holds %d entries (first: %+v), want one, accepted", len(l.Entries), l.Entries[0])
	}
}

// TestOnceHookThenBridge: the other order.
func TestOnceHookThenBridge(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "one\n")
	w.recordWritten("claude_x_y", "a.txt", "one\n", "two\n", RecordOnceWithin)
	r := NewDiffRecorder([]string{w.dir})
	if _, err := r.RecordAccepted("conv_ide", w.abs("a.txt"), []byte("one\n"), true, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	w.wantOneAccepted() // the hook's pending entry, accepted
	// A new file created through openDiff, the same.
	w.recordWrittenNew("claude_x_y", "new.txt", "hi\n")
	if _, err := r.RecordAccepted("conv_ide", w.abs("new.txt"), nil, false, []byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	if n := w.count(); n != 2 {
		t.Fatalf("%d entries, want 2", n)
	}
}

func (w *ws) recordWrittenNew(conv, rel, after string) {
	w.t.Helper()
	w.writeRaw(rel, after)
	_, err := w.store.Record(context.Background(), Commit{
		Conversation: conv, Tool: "Write", Source: SourceClaude, Once: RecordOnceWithin,
		Changes: []Change{{Op: Create, Path: w.abs(rel), After: []byte(after)}},
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// TestOnceIsNotTooEager: a different change, the same change after a reject, or
// the same change long after its first record, is recorded.
func TestOnceIsNotTooEager(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "one\n")
	first := w.recordWritten("c1", "a.txt", "one\n", "two\n", RecordOnceWithin)
	if got := w.recordWritten("c1", "a.txt", "two\n", "three\n", RecordOnceWithin); got == nil {
		t.Fatal("a new change was taken for the one already recorded")
	}

	w.writeRaw("b.txt", "one\n")
	again := w.recordWritten("c2", "b.txt", "one\n", "two\n", RecordOnceWithin)
	w.mustDecide(Rejected, again[0].EditID)
	w.expect("b.txt", "one\n")
	if got := w.recordWritten("c3", "b.txt", "one\n", "two\n", RecordOnceWithin); got == nil {
		t.Fatal("the same change made again after a reject was not recorded")
	}

	w.writeRaw("c.txt", "one\n")
	w.recordWritten("c4", "c.txt", "one\n", "two\n", 0)
	if got := w.recordWritten("c5", "c.txt", "one\n", "two\n", time.Nanosecond); got == nil {
		t.Fatal("a change recorded long ago stopped a new one")
	}
	if first[0].Source != SourceClaude {
		t.Fatalf("source %q", first[0].Source)
	}
}
