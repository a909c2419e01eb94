package history

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

func (w *ws) cleanup() (dropped []string) {
	w.t.Helper()
	dropped, _, err := w.store.Cleanup(context.Background(), 0)
	if err != nil {
		w.t.Fatalf("cleanup: %v", err)
	}
	return dropped
}

// dropAndKeep records a conversation d whose one edit (creating a.txt) is given the
// status to, so that a cleanup drops it, and a conversation k with a pending edit
// (creating b.txt), which a cleanup keeps.
func (w *ws) dropAndKeep(to Status) (d, k string) {
	w.t.Helper()
	d, k = NewConversationID(), NewConversationID()
	w.mustDecide(to, w.create(d, "a.txt", "a\n").EditID)
	w.create(k, "b.txt", "b\n")
	return d, k
}

// A planted or corrupted log line must not make cleanup remove other
// conversations' files: its conversation id names folders.
func TestCleanupIgnoresLinesOfAnotherConversation(t *testing.T) {
	w, c := oneFile(t, "a.txt", "a\n")
	e := w.edit(c, "a.txt", "b\n")
	for _, bad := range []string{"", "..", "other"} {
		line, _ := json.Marshal(Entry{EditID: "x-" + bad, ConversationID: bad, FilePath: w.abs("z.txt"), Operation: Create,
			Status: Accepted, Timestamp: "2000-01-01T00:00:00.000Z"})
		f, err := os.OpenFile(filepath.Join(w.store.dir, "logs", c+".log"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(append(line, '\n'))
		f.Close()
	}
	list, err := w.store.List(Filter{})
	if err != nil || len(list.Entries) != 1 || len(list.Warnings) != 3 {
		t.Fatalf("listing: %v entries, warnings %q, err %v", len(list.Entries), list.Warnings, err)
	}
	if dropped := w.cleanup(); len(dropped) != 0 {
		t.Fatalf("dropped %v", dropped)
	}
	w.mustDecide(Rejected, e.EditID)
	w.expect("a.txt", "a\n")
}

// A path another file's history used long ago keeps its head while a kept
// conversation owns it: a later outside change is still noticed.
func TestCleanupKeepsTheHeadOfAPathStillInUse(t *testing.T) {
	w := newWS(t)
	d, k := NewConversationID(), NewConversationID()
	ids := []string{w.create(d, "p.txt", "d\n").EditID, w.move(d, "p.txt", "q.txt").EditID, w.remove(d, "q.txt").EditID}
	w.mustDecide(Accepted, ids...)
	w.create(k, "p.txt", "k\n")
	if dropped := w.cleanup(); len(dropped) != 1 || dropped[0] != d {
		t.Fatalf("dropped %v, want %s", dropped, d)
	}
	w.writeRaw("p.txt", "k\nmine\n") // the user's own change
	e := w.edit(k, "p.txt", "agent\nk\nmine\n")
	w.mustDecide(Rejected, e.EditID)
	w.expect("p.txt", "k\nmine\n")
}

// Dropping a history that moved a file onto a path must not hand that path back to
// the file that held it before.
func TestCleanupKeepsWhoOwnsAPath(t *testing.T) {
	w := newWS(t)
	k, d := NewConversationID(), NewConversationID()
	w.create(k, "p.txt", "k\n")
	w.remove(k, "p.txt")
	ids := []string{w.create(d, "q.txt", "d\n").EditID, w.move(d, "q.txt", "p.txt").EditID}
	w.mustDecide(Accepted, ids...)
	w.cleanup()
	e := w.edit(k, "p.txt", "d\nmore\n")
	w.mustDecide(Rejected, e.EditID)
	w.expect("p.txt", "d\n")
}

// A cleanup an mcpdiff from before the journal was killed in, after it wrote down
// what it drops, is finished by the next writer.
func TestInterruptedLegacyCleanupIsFinished(t *testing.T) {
	w := newWS(t)
	d, k := w.dropAndKeep(Accepted)
	p, _ := json.Marshal(map[string]any{"conversations": []string{d}})
	if err := os.WriteFile(filepath.Join(w.store.dir, legacyCleanup), p, 0o600); err != nil {
		t.Fatal(err)
	}
	w.create(k, "c.txt", "c\n") // takes the lock
	if list, _ := w.store.List(Filter{}); len(list.Entries) != 2 || list.Entries[0].ConversationID != k {
		t.Fatalf("listing shows a dropped conversation: %+v", list.Entries)
	}
	for _, name := range []string{legacyCleanup, "logs/" + d + ".log", "checkpoints/" + d, "diffs/" + d} {
		if _, err := os.Stat(filepath.Join(w.store.dir, name)); err == nil {
			t.Errorf("%s is still there", name)
		}
	}
}

// A file brought back gets the mode it had when it was last removed (capped as git's),
// not that of an older delete of the same path.
func TestReturningFileGetsTheModeItLastHad(t *testing.T) {
	w := newWS(t)
	w.writeMode("run.sh", "#!/bin/sh\n", 0o755)
	c := NewConversationID()
	w.remove(c, "run.sh")
	cr := w.create(c, "run.sh", "plain\n")
	os.Chmod(w.abs("run.sh"), 0o640)
	w.mustDecide(Rejected, cr.EditID)
	w.expectMissing("run.sh")
	w.mustDecide(Accepted, cr.EditID)
	w.expectMode("run.sh", 0o644&^workspace.Umask())
}

// A store reached through a symlink inside the workspace is refused too: the tools
// keep out of it by its .mcp/edit_history name only.
func TestStoreBehindASymlinkInsideIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "cache"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("cache", filepath.Join(dir, ".mcp")); err != nil {
		t.Fatal(err)
	}
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(root); err == nil {
		t.Fatal("Open through .mcp -> cache succeeded")
	}
	if names, _ := os.ReadDir(filepath.Join(dir, "cache")); len(names) != 0 {
		t.Fatalf("the store was created behind the link: %v", names)
	}
}
