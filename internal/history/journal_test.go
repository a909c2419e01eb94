package history

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// threeFiles records one conversation that edits a.txt, creates new.txt and
// deletes gone.txt, and returns it.
func threeFiles(w *ws) string {
	w.writeRaw("a.txt", "1\n2\n3\n")
	w.writeRaw("gone.txt", "bye\n")
	c := NewConversationID()
	w.edit(c, "a.txt", "1\ntwo\n3\n")
	w.create(c, "new.txt", "new\n")
	w.remove(c, "gone.txt")
	return c
}

// prepared works out a decision and commits it without applying it: what a process
// killed right after the commit point leaves.
func (w *ws) prepared(sel Selection, to Status) {
	w.t.Helper()
	unlock, err := w.store.lock(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	defer unlock()
	j, _, err := w.store.decision(sel, to, false)
	if err == nil {
		err = j.prepare()
	}
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *ws) statuses() string {
	w.t.Helper()
	list, err := w.store.List(Filter{})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, e := range list.Entries {
		out = append(out, string(e.Status))
	}
	return strings.Join(out, " ")
}

func (w *ws) consistent() {
	w.t.Helper()
	if d, err := w.store.Check(); err != nil || len(d) != 0 {
		w.t.Fatalf("files and history disagree: %v %+v", err, d)
	}
	if _, err := os.Stat(filepath.Join(w.store.dir, journalDir)); err == nil {
		w.t.Fatalf("the journal is still there")
	}
}

// A decision committed but not applied, or applied only in part, is finished by
// the next process that takes the lock: every file and every status.
func TestDecisionCutOffAfterItsCommitIsFinished(t *testing.T) {
	for stop := 0; stop <= 6; stop++ {
		w := newWS(t)
		c := threeFiles(w)
		w.prepared(Selection{Conversation: c}, Rejected)
		if stop > 0 { // the killed process got this far into applying it
			b, _ := os.ReadFile(filepath.Join(w.store.dir, planName))
			p := mustPlan(t, b)
			p.Puts = p.Puts[:min(stop, len(p.Puts))]
			if _, err := w.store.forward(p); err != nil {
				t.Fatal(err)
			}
		}
		list, err := w.store.Review(context.Background(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Warnings) != 1 || list.Warnings[0] != "completed an interrupted reject of 3 edits" {
			t.Fatalf("stop %d: warnings %q", stop, list.Warnings)
		}
		if got := w.statuses(); got != "rejected rejected rejected" {
			t.Fatalf("stop %d: statuses %s", stop, got)
		}
		w.expect("a.txt", "1\n2\n3\n")
		w.expectMissing("new.txt")
		w.expect("gone.txt", "bye\n")
		w.consistent()
		// And the opposite decision gives the exact bytes.
		w.mustDecide(Accepted, c)
		w.expect("a.txt", "1\ntwo\n3\n")
		w.expect("new.txt", "new\n")
		w.expectMissing("gone.txt")
		w.consistent()
	}
}

func mustPlan(t *testing.T, b []byte) *plan {
	t.Helper()
	var p plan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// A file someone changed between the kill and the recovery is left as it is, and
// said so; the rest of the decision is finished.
func TestRecoveryLeavesAFileChangedMeanwhile(t *testing.T) {
	w := newWS(t)
	c := threeFiles(w)
	w.prepared(Selection{Conversation: c}, Rejected)
	w.writeRaw("a.txt", "mine\n")
	// Deciding again finishes it first, then stops at the file that differs.
	out, err := w.store.Decide(context.Background(), Selection{Conversation: c}, Rejected, false)
	var ext *ExternalChangeError
	if !errors.As(err, &ext) || strings.Join(out.Warnings, "\n") != "completed an interrupted reject of 3 edits\na.txt was changed by someone else meanwhile and was left as it is" {
		t.Fatalf("outcome %+v %v", out, err)
	}
	if got := w.statuses(); got != "rejected rejected rejected" {
		t.Fatalf("statuses %s", got)
	}
	w.expect("a.txt", "mine\n")
	w.expectMissing("new.txt")
	w.expect("gone.txt", "bye\n")
	d, err := w.store.Check()
	if err != nil || len(d) != 1 || d[0].Path != w.abs("a.txt") || !strings.Contains(d[0].Diff, "+mine") {
		t.Fatalf("check: %v %+v", err, d)
	}
}

// A step that fails after the commit point takes back the steps before it.
func TestFailureAfterTheCommitIsUndone(t *testing.T) {
	w := newWS(t)
	c := threeFiles(w)
	// rebuilds/ cannot be made: the first rebuild diff fails after a.txt is in place.
	w.writeRaw(".mcp/edit_history/rebuilds", "in the way\n")
	rebuildsLog := w.storeFile("rebuilds.log")
	headsBefore := w.storeFile(headsLog)
	_, err := w.store.Decide(context.Background(), Selection{Conversation: c}, Rejected, false)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(w.store.dir, "rebuilds")) || !strings.HasSuffix(err.Error(), "the reject of 3 edits was undone, nothing was changed") {
		t.Fatalf("err = %v", err)
	}
	w.expect("a.txt", "1\ntwo\n3\n")
	w.expect("new.txt", "new\n")
	w.expectMissing("gone.txt")
	if got := w.statuses(); got != "pending pending pending" {
		t.Fatalf("statuses %s", got)
	}
	if w.storeFile("rebuilds.log") != rebuildsLog || w.storeFile(headsLog) != headsBefore {
		t.Fatalf("the appended lines were not taken back")
	}
	os.Remove(filepath.Join(w.store.dir, "rebuilds"))
	w.consistent()
	w.mustDecide(Rejected, c)
	w.expect("a.txt", "1\n2\n3\n")
	w.consistent()
}

func (w *ws) storeFile(name string) string {
	b, err := os.ReadFile(filepath.Join(w.store.dir, name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		w.t.Fatal(err)
	}
	return string(b)
}

// A reject an older mcpdiff was killed in left the file rebuilt and the edit
// pending. Accepting it then must not succeed on that file; rejecting it records
// what is already there.
func TestDecisionsCheckTheFileFirst(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "1\n2\n3\n")
	e := w.edit(NewConversationID(), "a.txt", "1\ntwo\n3\n")
	w.writeRaw("a.txt", "1\n2\n3\n") // the rebuild, without its record
	var ext *ExternalChangeError
	if _, err := w.decide(Accepted, false, e.EditID); !errors.As(err, &ext) || ext.Drifts[0].Path != w.abs("a.txt") {
		t.Fatalf("accept on a file in the wrong state: %v", err)
	}
	w.expect("a.txt", "1\n2\n3\n")
	out, err := w.decide(Rejected, false, e.EditID)
	if err != nil || len(out.Files) != 0 || len(out.Edits) != 1 {
		t.Fatalf("reject: %+v %v", out, err)
	}
	w.consistent()
	w.mustDecide(Accepted, e.EditID)
	w.expect("a.txt", "1\ntwo\n3\n")
	w.consistent()

	// "Nothing to do" is checked too; --force puts the recorded state back.
	w.writeRaw("a.txt", "by hand\n")
	if _, err := w.decide(Accepted, false, e.EditID); !errors.As(err, &ext) {
		t.Fatalf("accepting an accepted edit of a changed file: %v", err)
	}
	w.expect("a.txt", "by hand\n")
	out, err = w.decide(Accepted, true, e.EditID)
	if err != nil || len(out.Edits) != 0 || len(out.Files) != 1 {
		t.Fatalf("forced: %+v %v", out, err)
	}
	w.expect("a.txt", "1\ntwo\n3\n")
	w.consistent()

	// --file looks at the file even when none of its edits is pending.
	w.writeRaw("a.txt", "by hand\n")
	if _, err := w.store.Decide(context.Background(), Selection{File: w.abs("a.txt")}, Accepted, false); !errors.As(err, &ext) {
		t.Fatalf("--file on a changed file: %v", err)
	}
}

// A cleanup cut off after its commit is ignored by readers until the next lock
// finishes it.
func TestCleanupCutOffAfterItsCommitIsFinished(t *testing.T) {
	w := newWS(t)
	d, k := w.dropAndKeep(Rejected)
	unlock, err := w.store.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	j, err := w.store.cleanupJournal(&dropSet{Conversations: []string{d}, Markers: markerSeqs(w)}, []string{w.abs("a.txt")}, nil)
	if err == nil {
		err = j.prepare()
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(w.store.dir, "logs", d+".log")) // and was killed in its removals
	unlock()
	if list, _ := w.store.List(Filter{}); len(list.Entries) != 1 || list.Entries[0].ConversationID != k {
		t.Fatalf("listing during the cleanup: %+v", list.Entries)
	}
	w.create(k, "c.txt", "c\n") // takes the lock
	for _, name := range []string{planName, "checkpoints/" + d, "diffs/" + d, "rebuilds"} {
		if _, err := os.Stat(filepath.Join(w.store.dir, name)); err == nil && name != "rebuilds" {
			t.Errorf("%s is still there", name)
		}
	}
	if w.storeFile("rebuilds.log") != "" || strings.Contains(w.storeFile(headsLog), "a.txt") {
		t.Fatalf("the cleanup's rewrites are missing")
	}
	w.consistent()
}

func markerSeqs(w *ws) map[int64]bool {
	snap, err := w.store.load()
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[int64]bool{}
	for _, m := range snap.markers {
		out[m.Seq] = true
	}
	return out
}

// A plan this user did not sign for this store (planted in a cloned repository, or
// copied from another store) is never applied: it is set aside, and the store stays
// usable. A plan of this store copied with the workspace is completed in the copy.
func TestPlantedPlanIsSetAsideAndACopiedOneCompleted(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "a\n")
	w.edit(NewConversationID(), "a.txt", "b\n")
	os.MkdirAll(filepath.Join(w.store.dir, journalDir), 0o700)
	os.WriteFile(filepath.Join(w.store.dir, journalDir, "0"), []byte("#!/bin/sh\necho owned\n"), 0o755)
	hook := w.abs(".git/hooks/pre-commit")
	body, _ := json.Marshal(plan{What: "reject of edit 12345678", Puts: []putOp{{Path: ".git/hooks/pre-commit", New: journalDir + "/0", After: hashBytes([]byte("#!/bin/sh\necho owned\n"))}}})
	for _, planted := range [][]byte{
		body, // unsigned, as 0.2.0 wrote them
		mustJSON(t, planFile{Store: "0123", Plan: body, Signature: "00"}),
	} {
		os.MkdirAll(filepath.Join(w.store.dir, journalDir), 0o700)
		os.WriteFile(filepath.Join(w.store.dir, planName), planted, 0o600)
		list, err := w.store.Review(context.Background(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(hook); err == nil {
			t.Fatal("a planted plan wrote a file")
		}
		if len(list.Warnings) != 1 || !strings.Contains(list.Warnings[0], "set aside "+filepath.Join(w.store.dir, planName)+" unapplied") {
			t.Fatalf("warnings %q", list.Warnings)
		}
		if _, err := os.Stat(filepath.Join(w.store.dir, journalDir)); err == nil {
			t.Fatal("the planted journal is still there")
		}
	}
	if aside, _ := os.ReadDir(filepath.Join(w.store.dir, asideDir)); len(aside) != 2 {
		t.Fatalf("aside/ holds %v", aside)
	}

	// A real plan in a copy of the journal folder (new inode) is completed.
	c := NewConversationID()
	w.edit(c, "a.txt", "c\n")
	w.prepared(Selection{Conversation: c}, Rejected)
	j := filepath.Join(w.store.dir, journalDir)
	os.Rename(j, j+".orig")
	if out, err := exec.Command("cp", "-a", j+".orig", j).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	os.RemoveAll(j + ".orig")
	if notes := w.reviewWarnings(); len(notes) != 1 || notes[0] != "completed an interrupted reject of edit "+short(w.lastEntry().EditID) {
		t.Fatalf("warnings %q", notes)
	}
	if got := w.statuses(); got != "pending rejected" {
		t.Fatalf("statuses %s", got)
	}
	w.expect("a.txt", "b\n")
	w.consistent()
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (w *ws) reviewWarnings() []string {
	w.t.Helper()
	list, err := w.store.Review(context.Background(), Filter{})
	if err != nil {
		w.t.Fatal(err)
	}
	return list.Warnings
}

func (w *ws) lastEntry() *Entry {
	w.t.Helper()
	list, err := w.store.List(Filter{})
	if err != nil || len(list.Entries) == 0 {
		w.t.Fatal(err)
	}
	return list.Entries[len(list.Entries)-1]
}

// The next agent edit after a killed reject first completes it, so the rebuild is
// not mistaken for a change made outside mcpdiff: the tool, which checks under the
// lock that the file still holds what it read (as the file tools do), reads again.
func TestEditAfterACutOffRejectIsNotAnOutsideChange(t *testing.T) {
	w, c := oneFile(t, "a.txt", "1\n2\n3\n")
	e := w.edit(c, "a.txt", "1\ntwo\n3\n")
	w.prepared(Selection{IDs: []string{e.EditID}}, Rejected)
	errChanged := errors.New("changed since it was read")
	edit := func() error {
		before := w.mustRead("a.txt")
		after := strings.Replace(before, "3\n", "three\n", 1)
		ch := Change{Op: Edit, Path: w.abs("a.txt"), Before: []byte(before), BeforeExists: true, After: []byte(after)}
		_, err := recordWritten(w.store, Commit{
			Conversation: c, Tool: "test", Source: SourceMCP, Changes: []Change{ch},
		}, checkedFiles{w.files(ch), func() error {
			if w.mustRead("a.txt") != before {
				return errChanged
			}
			return nil
		}})
		return err
	}
	if err := edit(); !errors.Is(err, errChanged) {
		t.Fatalf("the edit read the file before the reject was completed: %v", err)
	}
	if err := edit(); err != nil {
		t.Fatal(err)
	}
	w.expect("a.txt", "1\n2\nthree\n")
	list, _ := w.store.List(Filter{})
	for _, x := range list.Entries {
		if x.Source == SourceExternal {
			t.Fatalf("the rebuild was recorded as an outside change: %+v", x)
		}
	}
	if got := w.statuses(); got != "rejected pending" {
		t.Fatalf("statuses %s", got)
	}
	w.consistent()
}

// checkedFiles are files whose Verify is the test's.
type checkedFiles struct {
	Files
	verify func() error
}

func (f checkedFiles) Verify() error { return f.verify() }
