package history

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// unsign makes w's store as mcpdiff 0.2.0 left it: no signature.
func (w *ws) unsign() {
	w.t.Helper()
	if err := os.Remove(filepath.Join(w.store.dir, identityName)); err != nil {
		w.t.Fatal(err)
	}
}

// reopen opens the workspace folder dir's store as the CLI does.
func reopen(t *testing.T, dir string) *Store {
	t.Helper()
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	s, err := OpenExisting(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A foreign store is listed with a warning, and everything that would write into
// it or replay from it is refused; nothing is written into it. Adopting it ends that.
func TestForeignStoreIsInert(t *testing.T) {
	w, c := oneFile(t, "a.txt", "1\n2\n3\n")
	e := w.edit(c, "a.txt", "1\ntwo\n3\n")
	w.unsign()
	before := treeOfStore(t, w.store.dir)
	s := reopen(t, w.dir)
	if err := s.Foreign(); !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "0.2.0") || !strings.Contains(err.Error(), "mcpdiff adopt") {
		t.Fatalf("Foreign() = %v", err)
	}
	if _, err := s.Decide(context.Background(), Selection{IDs: []string{e.EditID}}, Rejected, false); !errors.Is(err, ErrForeign) {
		t.Fatalf("decide: %v", err)
	}
	if _, _, err := s.Cleanup(context.Background(), 0); !errors.Is(err, ErrForeign) {
		t.Fatalf("cleanup: %v", err)
	}
	if _, err := s.PendingChanges(w.abs("a.txt")); !errors.Is(err, ErrForeign) {
		t.Fatalf("hunks: %v", err)
	}
	if _, err := Open(w.root); !errors.Is(err, ErrForeign) {
		t.Fatalf("open to record: %v", err)
	}
	rec := NewDiffRecorder([]string{w.dir})
	if _, err := rec.RecordAccepted(c, w.abs("a.txt"), []byte("1\ntwo\n3\n"), true, []byte("x\n")); !errors.Is(err, ErrForeign) {
		t.Fatalf("openDiff recording: %v", err)
	}
	list, err := s.Review(context.Background(), Filter{})
	if err != nil || len(list.Entries) != 1 || len(list.Warnings) == 0 || !strings.Contains(list.Warnings[0], "is not yours") {
		t.Fatalf("review: %v %+v", err, list)
	}
	if got := treeOfStore(t, w.store.dir); got != before {
		t.Fatalf("the foreign store was written:\n%s\nwas:\n%s", got, before)
	}
	w.expect("a.txt", "1\ntwo\n3\n")

	if err := s.Adopt(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(context.Background(), Selection{IDs: []string{e.EditID}}, Rejected, false); err != nil {
		t.Fatal(err)
	}
	w.expect("a.txt", "1\n2\n3\n")
}

func treeOfStore(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil {
			data, _ := os.ReadFile(path)
			b.WriteString(path + " " + info.Mode().String() + " " + hashBytes(data)[:8] + "\n")
		}
		return nil
	})
	return b.String()
}

// An empty store folder (being made by another process, or planted empty) is signed
// by the first process that records into it; one that holds anything is not.
func TestEmptyStoreFolderIsClaimed(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".mcp", "edit_history", "logs"), 0o700)
	os.WriteFile(filepath.Join(dir, ".mcp", "edit_history", "FORMAT"), []byte(formatLine()), 0o600)
	root, _ := workspace.OpenRoot(dir)
	defer root.Close()
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Foreign(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".mcp", ".gitignore")); err != nil || string(b) != "*\n" {
		t.Fatalf(".gitignore: %q %v", b, err)
	}

	dir2 := t.TempDir()
	os.MkdirAll(filepath.Join(dir2, ".mcp", "edit_history", "checkpoints", "c"), 0o700)
	root2, _ := workspace.OpenRoot(dir2)
	defer root2.Close()
	if _, err := Open(root2); !errors.Is(err, ErrForeign) {
		t.Fatalf("a store holding files was claimed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir2, ".mcp", ".gitignore")); err == nil {
		t.Fatal("a .gitignore was written beside a foreign store")
	}
}

// A store another process is making (its folders made, its identity not yet
// written) has no pending hunks for a reader that races it, and is not called "not
// yours"; one that holds anything without an identity still is.
func TestStoreBeingMadeReadsAsEmpty(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, ".mcp", "edit_history")
	for _, d := range []string{"logs", "diffs", "checkpoints", "tmp"} {
		if err := os.MkdirAll(filepath.Join(store, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(store, "FORMAT"), []byte(formatLine()), 0o600)
	s := reopen(t, dir)
	if hunks, err := s.PendingChangesOf([]string{filepath.Join(dir, "a.txt")}); err != nil || len(hunks) != 0 {
		t.Fatalf("HunksOf = %v, %v; want none, no error", hunks, err)
	}
	if hunks, err := s.AllPendingChanges(); err != nil || len(hunks) != 0 {
		t.Fatalf("PendingHunks = %v, %v; want none, no error", hunks, err)
	}

	os.WriteFile(filepath.Join(store, "logs", "c.jsonl"), []byte("{}\n"), 0o600)
	if _, err := s.AllPendingChanges(); !errors.Is(err, ErrForeign) {
		t.Fatalf("an unsigned store holding a log replayed: %v", err)
	}
}

// A copy of the workspace reads the paths recorded in the original as its own, and
// so does a copy of the copy after it recorded edits of its own.
func TestCopiedStoreReadsPathsAsItsOwn(t *testing.T) {
	w, c := oneFile(t, "a.txt", "1\n2\n3\n")
	w.edit(c, "a.txt", "1\ntwo\n3\n")
	base := t.TempDir()
	cp := func(from, to string) {
		if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
			t.Fatal(err, string(out))
		}
	}
	first := filepath.Join(base, "first")
	cp(w.dir, first)
	root, _ := workspace.OpenRoot(first)
	defer root.Close()
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	w2 := &ws{t: t, dir: first, root: root, store: s}
	w2.edit(c, "a.txt", "1\ntwo\nthree\n")
	second := filepath.Join(base, "second")
	cp(first, second)
	s3 := reopen(t, second)
	list, err := s3.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Entries {
		if e.FilePath != filepath.Join(second, "a.txt") || e.Invalid() != "" {
			t.Fatalf("entry of %s (%s) in the second copy", e.FilePath, e.Invalid())
		}
	}
	if _, err := s3.Decide(context.Background(), Selection{Conversation: c}, Rejected, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(second, "a.txt")); string(b) != "1\n2\n3\n" {
		t.Fatalf("second copy: %q", b)
	}
	for _, d := range []string{w.dir, first} {
		if b, _ := os.ReadFile(filepath.Join(d, "a.txt")); string(b) == "1\n2\n3\n" {
			t.Fatalf("the decision in the copy rebuilt %s", d)
		}
	}
}

// A rebuild marker that lies about what a reject put back: the decisions recorded do
// not give what the steps left, so no decision rebuilds the file.
func TestInconsistentHistoryIsRefused(t *testing.T) {
	w, c := oneFile(t, "a.txt", "1\n2\n3\n")
	e := w.edit(c, "a.txt", "1\ntwo\n3\n")
	w.mustDecide(Rejected, e.EditID)
	// Say the edit is pending again without rebuilding: what the decisions imply (the
	// edit kept) is no longer what the last step (the reject's rebuild) left.
	log := filepath.Join(w.store.dir, "logs", c+".log")
	b, _ := os.ReadFile(log)
	os.WriteFile(log, []byte(strings.Replace(string(b), `"status":"rejected"`, `"status":"pending"`, 1)), 0o600)
	later := w.edit(NewConversationID(), "a.txt", "1\n2\n3\n4\n")
	_, err := w.decide(Rejected, false, later.EditID)
	if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("err = %v", err)
	}
	w.expect("a.txt", "1\n2\n3\n4\n")
	in, err := w.store.Inspect()
	if err != nil || len(in.Inconsistent) != 1 || len(in.Files) != 1 || in.Entries != 2 {
		t.Fatalf("inspect: %v %+v", err, in)
	}
}

// Two entries under one edit id (a log copied into another conversation's, or
// planted) are not one edit: deciding that id would decide both, in both
// conversations. Both are invalid, and the file's history no longer adds up.
func TestEditIDOfTwoEntriesIsInvalid(t *testing.T) {
	w, c := oneFile(t, "a.txt", "1\n2\n3\n")
	e := w.edit(c, "a.txt", "one\n2\n3\n")
	c2 := NewConversationID()
	other := w.edit(c2, "a.txt", "one\n2\nthree\n")
	log := filepath.Join(w.store.dir, "logs", c2+".log")
	b, _ := os.ReadFile(log)
	os.WriteFile(log, []byte(strings.ReplaceAll(string(b), other.EditID, e.EditID)), 0o600)

	snap, err := w.store.load()
	if err != nil || len(snap.entries) != 0 || len(snap.invalid) != 2 || len(snap.invalidNotes) != 2 ||
		!strings.Contains(snap.invalidNotes[0], "another entry has its edit id") {
		t.Fatalf("load: %v, %d entries, invalid %q", err, len(snap.entries), snap.invalidNotes)
	}
	if _, err := w.decide(Rejected, false, e.EditID); err == nil {
		t.Fatal("an edit id of two entries was decided")
	}
	w.expect("a.txt", "one\n2\nthree\n")
}

// Modes recorded in the store come back capped as git's.
func TestModesAreCapped(t *testing.T) {
	u := workspace.Umask()
	for recorded, want := range map[string]os.FileMode{"6777": 0o755 &^ u, "0666": 0o644 &^ u, "0750": 0o755 &^ u, "0400": 0o644 &^ u, "1755": 0o755 &^ u} {
		if got, ok := parseMode(recorded); !ok || got != want {
			t.Errorf("%s → %v, want %v", recorded, got, want)
		}
	}
	if _, ok := parseMode("x"); ok {
		t.Error("a bad mode was read")
	}
}

func TestOffLimits(t *testing.T) {
	for rel, bad := range map[string]bool{
		".git/config": true, "sub/.git/hooks/x": true, ".git": true, ".Hg/store": true, ".svn/entries": true, ".jj/repo": true,
		".mcp/edit_history/logs/x.log": true, ".MCP/Edit_History": true,
		"src/main.go": false, ".github/workflows/ci.yml": false, ".mcp/config.json": false, "a.git/x": false, ".gitignore": false,
	} {
		if got := offLimits(rel) != ""; got != bad {
			t.Errorf("offLimits(%q) = %v", rel, got)
		}
	}
}

// The writability check leaves nothing behind, and does not write through a tmp/
// that a planted store links out of itself.
func TestWritableStaysInTheStore(t *testing.T) {
	w := newWS(t)
	if !w.store.Writable() {
		t.Fatal("a new store is not writable")
	}
	if names, _ := os.ReadDir(filepath.Join(w.store.dir, "tmp")); len(names) != 0 {
		t.Fatalf("left in tmp/: %v", names)
	}

	outside := t.TempDir()
	tmp := filepath.Join(w.store.dir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, tmp); err != nil {
		t.Fatal(err)
	}
	s := reopen(t, w.dir)
	if s.Writable() {
		t.Fatal("writable through a tmp/ that links out of the store")
	}
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Fatalf("written outside the store: %v", names)
	}
}
