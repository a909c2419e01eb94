package history

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/mcpdiff/mcpdiff/internal/testenv/changetx"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// ws is a workspace with a store, and helpers that change files the way the MCP
// tools do: log through Record, write in Apply.
type ws struct {
	t     testing.TB
	dir   string
	root  *workspace.Root
	store *Store
}

func newWS(t testing.TB) *ws {
	t.Helper()
	dir := t.TempDir()
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return &ws{t: t, dir: root.Path(), root: root, store: st}
}

// oneFile is a workspace whose file rel holds content, and a new conversation to
// edit it in: how most tests start.
func oneFile(t testing.TB, rel, content string) (*ws, string) {
	t.Helper()
	w := newWS(t)
	w.writeRaw(rel, content)
	return w, NewConversationID()
}

func (w *ws) abs(rel string) string { return filepath.Join(w.dir, rel) }

func (w *ws) read(rel string) (string, bool) {
	b, err := os.ReadFile(w.abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b), true
}

func (w *ws) mustRead(rel string) string {
	w.t.Helper()
	s, ok := w.read(rel)
	if !ok {
		w.t.Fatalf("%s does not exist", rel)
	}
	return s
}

func (w *ws) writeRaw(rel, content string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(w.abs(rel)), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(w.abs(rel), []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// writeMode writes rel as writeRaw does, with the permissions perm.
func (w *ws) writeMode(rel, content string, perm fs.FileMode) {
	w.t.Helper()
	w.writeRaw(rel, content)
	if err := os.Chmod(w.abs(rel), perm); err != nil {
		w.t.Fatal(err)
	}
}

// change records and applies one change, returning its entry.
func (w *ws) change(conv string, ch Change) *Entry {
	w.t.Helper()
	entries, err := recordWritten(w.store, Commit{
		Conversation: conv, Tool: "test", Source: SourceMCP, Changes: []Change{ch},
	}, w.files(ch))
	if err != nil {
		w.t.Fatalf("record %s %s: %v", ch.Op, ch.Path, err)
	}
	return entries[0]
}

// recordWritten records c in s as a batch of one whose files puts it on disk.
func recordWritten(s *Store, c Commit, files Files) ([]*Entry, error) {
	entries, err := RecordAll(context.Background(), []Batch{{Store: s, Commits: []Commit{c}, Files: files}})
	if err != nil {
		return nil, err
	}
	return entries[0], nil
}

// files puts ch on disk as the file tools do: a workspace.Tx.
func (w *ws) files(ch Change) Files {
	return changetx.Tx(w.root, changetx.Change{Delete: ch.Op == Delete, Move: ch.Op == Move,
		Path: ch.Path, From: ch.From, Before: ch.Before, BeforeExists: ch.BeforeExists, After: ch.After})
}

// fakeFiles are a commit's files whose steps the test chooses (nil: do nothing).
type fakeFiles struct{ verify, apply func() error }

func (f fakeFiles) Verify() error { return call(f.verify) }
func (f fakeFiles) Stage() error  { return nil }
func (f fakeFiles) Apply() error  { return call(f.apply) }
func (f fakeFiles) Undo(cause error) error {
	return cause
}

func call(f func() error) error {
	if f == nil {
		return nil
	}
	return f()
}

// edit replaces a file's content (recorded as an edit).
func (w *ws) edit(conv, rel, content string) *Entry {
	w.t.Helper()
	before, _ := w.read(rel)
	info, _ := os.Stat(w.abs(rel))
	return w.change(conv, Change{Op: Edit, Path: w.abs(rel), Before: []byte(before), BeforeExists: true, BeforeInfo: info, After: []byte(content)})
}

func (w *ws) create(conv, rel, content string) *Entry {
	w.t.Helper()
	return w.change(conv, Change{Op: Create, Path: w.abs(rel), After: []byte(content)})
}

func (w *ws) remove(conv, rel string) *Entry {
	w.t.Helper()
	before := w.mustRead(rel)
	info, _ := os.Stat(w.abs(rel))
	return w.change(conv, Change{Op: Delete, Path: w.abs(rel), Before: []byte(before), BeforeExists: true, BeforeInfo: info})
}

func (w *ws) move(conv, from, to string) *Entry {
	w.t.Helper()
	before := w.mustRead(from)
	return w.change(conv, Change{Op: Move, From: w.abs(from), Path: w.abs(to), Before: []byte(before), BeforeExists: true})
}

func (w *ws) decide(to Status, force bool, ids ...string) (*Outcome, error) {
	return w.store.Decide(context.Background(), Selection{IDs: ids}, to, force)
}

func (w *ws) mustDecide(to Status, ids ...string) {
	w.t.Helper()
	if _, err := w.decide(to, false, ids...); err != nil {
		w.t.Fatalf("%s %v: %v", to, ids, err)
	}
}

func (w *ws) expect(rel, want string) {
	w.t.Helper()
	got, ok := w.read(rel)
	if !ok {
		w.t.Fatalf("%s: missing, want %q", rel, want)
	}
	if got != want {
		w.t.Fatalf("%s:\n got %q\nwant %q", rel, got, want)
	}
}

func (w *ws) expectMissing(rel string) {
	w.t.Helper()
	if got, ok := w.read(rel); ok {
		w.t.Fatalf("%s exists (%q), want it gone", rel, got)
	}
}

func (w *ws) expectMode(rel string, perm fs.FileMode) {
	w.t.Helper()
	info, err := os.Stat(w.abs(rel))
	if err != nil {
		w.t.Fatal(err)
	}
	if info.Mode().Perm() != perm {
		w.t.Fatalf("%s has mode %v, want %v", rel, info.Mode().Perm(), perm)
	}
}

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func numbered(n int) string { return lines(n, func(i int) string { return "line " + itoa(i) }) }

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

// replaceLine returns content with line n (1-based) replaced.
func replaceLine(content string, n int, with string) string {
	ls := strings.SplitAfter(content, "\n")
	ls[n-1] = with + "\n"
	return strings.Join(ls, "")
}

func insertAfter(content string, n int, add ...string) string {
	ls := strings.SplitAfter(content, "\n")
	var out []string
	out = append(out, ls[:n]...)
	for _, a := range add {
		out = append(out, a+"\n")
	}
	out = append(out, ls[n:]...)
	return strings.Join(out, "")
}

func TestRejectMiddleEditKeepsLaterEditsWithShiftedLines(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(20))
	e1 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 15, "fifteen"))
	e2 := w.edit(c, "a.txt", insertAfter(w.mustRead("a.txt"), 2, "new A", "new B", "new C"))
	e3 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 10, "ten")) // line 7 of the original

	w.mustDecide(Rejected, e1.EditID)
	want := replaceLine(insertAfter(numbered(20), 2, "new A", "new B", "new C"), 10, "ten")
	w.expect("a.txt", want)

	// Switching back puts it in again.
	w.mustDecide(Accepted, e1.EditID)
	want = replaceLine(want, 18, "fifteen")
	w.expect("a.txt", want)

	w.mustDecide(Rejected, e2.EditID)
	w.expect("a.txt", replaceLine(replaceLine(numbered(20), 7, "ten"), 15, "fifteen"))
	w.mustDecide(Rejected, e3.EditID)
	w.expect("a.txt", replaceLine(numbered(20), 15, "fifteen"))
	w.mustDecide(Rejected, e1.EditID)
	w.expect("a.txt", numbered(20))
	w.mustDecide(Accepted, e1.EditID, e2.EditID, e3.EditID)
	w.expect("a.txt", want)
}

func TestOverlapIsAConflictAndChangesNothing(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(10))
	e1 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 5, "five"))
	e2 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 5, "FIVE"))
	before := w.mustRead("a.txt")

	_, err := w.decide(Rejected, false, e1.EditID)
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("reject e1: got %v, want a conflict", err)
	}
	if later := conflict.Later(); len(later) != 1 || later[0].EditID != e2.EditID {
		t.Fatalf("conflict names %v, want the later edit %s", later, e2.EditID)
	}
	if !strings.Contains(err.Error(), short(e2.EditID)) {
		t.Fatalf("message %q does not name the later edit", err)
	}
	w.expect("a.txt", before)
	list, _ := w.store.List(Filter{})
	for _, e := range list.Entries {
		if e.Status != Pending {
			t.Fatalf("%s is %s after a refused reject", e.EditID, e.Status)
		}
	}
}

// Neighbouring edits, with no unchanged line between, are undone independently; only
// a later edit that changes or splits the rejected edit's lines conflicts.
func TestNeighbouringEditsAreUndoneIndependently(t *testing.T) {
	cases := []struct {
		name     string
		later    func(string) string
		conflict bool
	}{
		{"same line", func(c string) string { return replaceLine(c, 5, "FIVE") }, true},
		{"next line", func(c string) string { return replaceLine(c, 6, "six") }, false},
		{"insert right after", func(c string) string { return insertAfter(c, 5, "inserted") }, false},
		{"insert right before", func(c string) string { return insertAfter(c, 4, "inserted") }, false},
		{"line before", func(c string) string { return replaceLine(c, 4, "four") }, false},
		{"lines on both sides", func(c string) string { return replaceLine(replaceLine(c, 4, "four"), 6, "six") }, false},
		{"one unchanged line between", func(c string) string { return replaceLine(c, 7, "seven") }, false},
		{"inside diff context", func(c string) string { return replaceLine(c, 3, "three") }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, c := oneFile(t, "a.txt", numbered(10))
			e1 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 5, "five"))
			w.edit(c, "a.txt", tc.later(w.mustRead("a.txt")))
			_, err := w.decide(Rejected, false, e1.EditID)
			var conflict *ConflictError
			if got := errors.As(err, &conflict); got != tc.conflict {
				t.Fatalf("conflict = %v (err %v), want %v", got, err, tc.conflict)
			}
			if !tc.conflict {
				w.expect("a.txt", tc.later(numbered(10)))
			}
		})
	}
}

// An insertion between two lines one edit wrote splits them: where it goes once they
// are taken back would be a guess.
func TestInsertionBetweenARejectedEditsLinesConflicts(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(6))
	e1 := w.edit(c, "a.txt", insertAfter(w.mustRead("a.txt"), 3, "new A", "new B"))
	e2 := w.edit(c, "a.txt", insertAfter(w.mustRead("a.txt"), 4, "between"))
	before := w.mustRead("a.txt")
	_, err := w.decide(Rejected, false, e1.EditID)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || len(conflict.Later()) != 1 || conflict.Later()[0].EditID != e2.EditID {
		t.Fatalf("reject e1: got %v, want a conflict naming e2", err)
	}
	if !strings.Contains(err.Error(), "--with-later") {
		t.Fatalf("the refusal does not offer --with-later: %v", err)
	}
	w.expect("a.txt", before)
}

// Where an edit only deleted lines, a later insertion exactly where they go back is a
// guess; one a line further is not.
func TestInsertionWhereDeletedLinesGoBack(t *testing.T) {
	for _, tc := range []struct {
		name     string
		after    int // insert after this line of the file as it is after the deletion
		conflict bool
	}{{"at the place", 2, true}, {"a line above", 1, false}, {"a line below", 3, false}} {
		t.Run(tc.name, func(t *testing.T) {
			w, c := oneFile(t, "a.txt", numbered(6))
			e1 := w.edit(c, "a.txt", "line 1\nline 2\nline 4\nline 5\nline 6\n") // delete line 3
			w.edit(c, "a.txt", insertAfter(w.mustRead("a.txt"), tc.after, "new"))
			_, err := w.decide(Rejected, false, e1.EditID)
			var conflict *ConflictError
			if errors.As(err, &conflict) != tc.conflict {
				t.Fatalf("conflict: got %v, want %v", err, tc.conflict)
			}
			if !tc.conflict {
				want := insertAfter(numbered(6), map[int]int{1: 1, 3: 4}[tc.after], "new")
				w.expect("a.txt", want)
			}
		})
	}
}

// A refusal names every later edit in the way, and WithLater rejects them together.
func TestWithLaterRejectsEveryEditInTheWay(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(10))
	e1 := w.edit(c, "a.txt", replaceLine(replaceLine(w.mustRead("a.txt"), 2, "two"), 8, "eight"))
	e2 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 2, "TWO"))   // on e1's line
	e3 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 8, "EIGHT")) // on e1's other line
	e4 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 2, "TWO!"))  // on e2's line
	e5 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 5, "five"))  // elsewhere
	_, err := w.decide(Rejected, false, e1.EditID)
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("reject e1: %v, want a conflict", err)
	}
	var names []string
	for _, e := range conflict.Later() {
		names = append(names, e.EditID)
	}
	if want := []string{e2.EditID, e3.EditID, e4.EditID}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("the conflict names %v, want e2, e3, e4 %v", names, want)
	}
	for _, e := range []*Entry{e2, e3, e4} {
		if !strings.Contains(err.Error(), short(e.EditID)) {
			t.Fatalf("message does not name %s: %v", short(e.EditID), err)
		}
	}
	out, err := w.store.Decide(context.Background(), Selection{IDs: []string{e1.EditID}, WithLater: true}, Rejected, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Later) != 3 || len(out.Edits) != 4 {
		t.Fatalf("with later: %+v", out)
	}
	w.expect("a.txt", replaceLine(numbered(10), 5, "five"))
	_ = e5
}

func TestRejectedDeletionComesBackBetweenItsNeighbours(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(6))
	e1 := w.edit(c, "a.txt", "line 1\nline 2\nline 4\nline 5\nline 6\n") // delete line 3
	w.edit(c, "a.txt", "line 1\nline 2\nline FOUR\nline 5\nline 6\n")    // change the line after it
	w.edit(c, "a.txt", "line 1\nline TWO\nline FOUR\nline 5\nline 6\n")  // and the line before
	w.mustDecide(Rejected, e1.EditID)
	w.expect("a.txt", "line 1\nline TWO\nline 3\nline FOUR\nline 5\nline 6\n") // restored where it was
}

func TestCreateEditMoveEditDeleteChain(t *testing.T) {
	w := newWS(t)
	c := NewConversationID()
	create := w.create(c, "a.txt", "one\ntwo\nthree\n")
	edit1 := w.edit(c, "a.txt", "one\nTWO\nthree\n")
	move := w.move(c, "a.txt", "sub/b.txt")
	edit2 := w.edit(c, "sub/b.txt", "one\nTWO\nthree\nfour\n")
	del := w.remove(c, "sub/b.txt")

	w.mustDecide(Rejected, del.EditID)
	w.expect("sub/b.txt", "one\nTWO\nthree\nfour\n")
	w.mustDecide(Rejected, move.EditID)
	w.expectMissing("sub/b.txt")
	w.expect("a.txt", "one\nTWO\nthree\nfour\n")
	w.mustDecide(Rejected, edit1.EditID)
	w.expect("a.txt", "one\ntwo\nthree\nfour\n")
	w.mustDecide(Accepted, move.EditID)
	w.expectMissing("a.txt")
	w.expect("sub/b.txt", "one\ntwo\nthree\nfour\n")
	w.mustDecide(Accepted, del.EditID)
	w.expectMissing("sub/b.txt")
	w.mustDecide(Accepted, edit1.EditID)
	w.mustDecide(Rejected, edit2.EditID)
	w.expectMissing("sub/b.txt")
	w.mustDecide(Rejected, del.EditID)
	w.expect("sub/b.txt", "one\nTWO\nthree\n")

	// Rejecting the create while later edits keep its lines is a conflict.
	if _, err := w.decide(Rejected, false, create.EditID); err == nil {
		t.Fatal("rejecting the create under kept edits of its content: want a conflict")
	}
	w.mustDecide(Rejected, edit1.EditID)
	w.mustDecide(Rejected, create.EditID, move.EditID)
	w.expectMissing("a.txt")
	w.expectMissing("sub/b.txt")
}

func TestLaterConversationsStayWhenAnEarlierOneIsRejected(t *testing.T) {
	w, c1 := oneFile(t, "a.txt", numbered(30))
	c2 := NewConversationID()
	w.edit(c1, "a.txt", replaceLine(w.mustRead("a.txt"), 3, "c1 three"))
	w.edit(c1, "a.txt", replaceLine(w.mustRead("a.txt"), 20, "c1 twenty"))
	w.edit(c2, "a.txt", insertAfter(w.mustRead("a.txt"), 10, "c2 added"))
	if _, err := w.store.Decide(context.Background(), Selection{Conversation: c1}, Rejected, false); err != nil {
		t.Fatal(err)
	}
	w.expect("a.txt", insertAfter(numbered(30), 10, "c2 added"))
}

func TestExternalChangeStopsRejectAndForceDiscardsIt(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", numbered(5))
	e := w.edit(NewConversationID(), "a.txt", replaceLine(numbered(5), 2, "two"))
	w.writeRaw("a.txt", replaceLine(replaceLine(numbered(5), 2, "two"), 5, "user"))

	_, err := w.decide(Rejected, false, e.EditID)
	var ext *ExternalChangeError
	if !errors.As(err, &ext) {
		t.Fatalf("got %v, want an external change", err)
	}
	if len(ext.Drifts) != 1 || !strings.Contains(ext.Drifts[0].Diff, "+user") {
		t.Fatalf("drift does not show the outside change: %+v", ext.Drifts)
	}
	w.expect("a.txt", replaceLine(replaceLine(numbered(5), 2, "two"), 5, "user"))
	if _, err := w.decide(Rejected, true, e.EditID); err != nil {
		t.Fatal(err)
	}
	w.expect("a.txt", numbered(5))
}

func TestOutsideChangeBeforeANewEditIsKeptWhenAnOlderEditIsRejected(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(10))
	e1 := w.edit(c, "a.txt", replaceLine(numbered(10), 2, "agent two"))
	w.writeRaw("a.txt", replaceLine(w.mustRead("a.txt"), 6, "user six")) // the user, in the editor
	w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 9, "agent nine"))

	list, _ := w.store.List(Filter{})
	if len(list.Entries) != 3 || list.Entries[1].Source != SourceExternal || list.Entries[1].Status != Accepted {
		t.Fatalf("want the outside change recorded as an accepted external entry, got %+v", list.Entries)
	}
	w.mustDecide(Rejected, e1.EditID)
	w.expect("a.txt", replaceLine(replaceLine(numbered(10), 6, "user six"), 9, "agent nine"))
}

func TestEditsAfterARejectReplayOnTopOfTheRebuild(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(10))
	e1 := w.edit(c, "a.txt", replaceLine(numbered(10), 3, "three"))
	w.mustDecide(Rejected, e1.EditID)
	e2 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 8, "eight"))
	w.mustDecide(Accepted, e1.EditID)
	w.expect("a.txt", replaceLine(replaceLine(numbered(10), 3, "three"), 8, "eight"))
	w.mustDecide(Rejected, e2.EditID)
	w.expect("a.txt", replaceLine(numbered(10), 3, "three"))

	// An edit made while e1 was rejected that touches e1's lines conflicts when e1
	// comes back.
	w.mustDecide(Rejected, e1.EditID)
	w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 3, "three by later edit"))
	if _, err := w.decide(Accepted, false, e1.EditID); err == nil {
		t.Fatal("want a conflict re-accepting e1 under an edit of the same line")
	}
}

func TestToolCallIndexContinuesAcrossProcesses(t *testing.T) {
	w := newWS(t)
	c := NewConversationID()
	w.create(c, "a.txt", "a\n")
	// A second process: its own Store on the same folder.
	root2, err := workspace.OpenRoot(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	st2, err := Open(root2)
	if err != nil {
		t.Fatal(err)
	}
	w2 := &ws{t: t, dir: w.dir, root: root2, store: st2}
	e := w2.create(c, "b.txt", "b\n")
	if e.ToolCallIndex != 1 {
		t.Fatalf("tool_call_index = %d, want 1", e.ToolCallIndex)
	}
}

func TestFailedApplyRecordsNothing(t *testing.T) {
	w, c := oneFile(t, "a.txt", "a\n")
	_, err := recordWritten(w.store, Commit{
		Conversation: c, Tool: "test", Source: SourceMCP,
		Changes: []Change{{Op: Edit, Path: w.abs("a.txt"), Before: []byte("a\n"), BeforeExists: true, After: []byte("b\n")}},
	}, fakeFiles{apply: func() error { return errors.New("disk full") }})
	if err == nil {
		t.Fatal("want the Apply error")
	}
	list, _ := w.store.List(Filter{})
	if len(list.Entries) != 0 {
		t.Fatalf("a failed call recorded %d entries", len(list.Entries))
	}
	if _, err := os.Stat(filepath.Join(w.store.dir, "diffs", c)); err == nil {
		if names, _ := os.ReadDir(filepath.Join(w.store.dir, "diffs", c)); len(names) > 0 {
			t.Fatalf("diff files left behind: %v", names)
		}
	}
	// The next edit is not seen as an outside change.
	w.edit(c, "a.txt", "c\n")
	list, _ = w.store.List(Filter{})
	if len(list.Entries) != 1 {
		t.Fatalf("got %d entries, want 1", len(list.Entries))
	}
}

func TestCorruptedLogLineIsSkippedAndKept(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(3))
	e1 := w.edit(c, "a.txt", replaceLine(numbered(3), 1, "one"))
	logPath := filepath.Join(w.store.dir, "logs", c+".log")
	f, _ := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{this is not json}\n")
	f.Close()
	e2 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 3, "three"))

	list, err := w.store.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Entries) != 2 || len(list.Warnings) != 1 || !strings.Contains(list.Warnings[0], "corrupted") {
		t.Fatalf("entries %d warnings %v", len(list.Entries), list.Warnings)
	}
	w.mustDecide(Rejected, e1.EditID)
	w.expect("a.txt", replaceLine(numbered(3), 3, "three"))
	raw, _ := os.ReadFile(logPath)
	if !strings.Contains(string(raw), "{this is not json}") {
		t.Fatal("the rewrite dropped the corrupted line")
	}
	_ = e2
}

func TestTornLastLineIsIgnoredAndRepaired(t *testing.T) {
	w := newWS(t)
	c := NewConversationID()
	w.create(c, "a.txt", "a\n")
	logPath := filepath.Join(w.store.dir, "logs", c+".log")
	f, _ := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"edit_id":"torn","conv`)
	f.Close()
	list, _ := w.store.List(Filter{})
	if len(list.Entries) != 1 {
		t.Fatalf("torn line read as an entry: %d", len(list.Entries))
	}
	w.create(c, "b.txt", "b\n")
	raw, _ := os.ReadFile(logPath)
	if strings.Contains(string(raw), "torn") {
		t.Fatal("the torn line was not cut before the append")
	}
	if n := strings.Count(string(raw), "\n"); n != 2 {
		t.Fatalf("log has %d lines, want 2", n)
	}
}

func TestNewerFormatIsRefused(t *testing.T) {
	w := newWS(t)
	os.WriteFile(filepath.Join(w.store.dir, "FORMAT"), []byte("mcpdiff-edit-history 99\n"), 0o600)
	_, err := OpenExisting(w.root)
	if err == nil || !strings.Contains(err.Error(), "newer mcpdiff") {
		t.Fatalf("got %v", err)
	}
}

func TestMissingCheckpointIsAClearError(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "a\n")
	e := w.edit(NewConversationID(), "a.txt", "b\n")
	os.Remove(filepath.Join(w.store.dir, filepath.FromSlash(*e.CheckpointFile)))
	_, err := w.decide(Rejected, false, e.EditID)
	if err == nil || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("got %v, want a checkpoint error", err)
	}
	w.expect("a.txt", "b\n")
}

func TestUnknownAndAmbiguousIDs(t *testing.T) {
	w := newWS(t)
	w.create(NewConversationID(), "a.txt", "a\n")
	if _, err := w.decide(Rejected, false, "nope-nope"); !errors.Is(err, ErrUnknownID) {
		t.Fatalf("got %v", err)
	}
}

func TestCleanupDropsOnlyWholeResolvedLineages(t *testing.T) {
	w := newWS(t)
	c1, c2, c3 := NewConversationID(), NewConversationID(), NewConversationID()
	a := w.create(c1, "a.txt", "a\n")
	w.create(c2, "b.txt", "b\n")
	b2 := w.edit(c3, "b.txt", "bb\n")
	w.mustDecide(Accepted, a.EditID)
	w.mustDecide(Rejected, b2.EditID)
	// c2 is pending, so c3 (same file) must stay too; c1 goes.
	dropped, kept, err := w.store.Cleanup(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 1 || dropped[0] != c1 || len(kept) != 2 {
		t.Fatalf("dropped %v kept %v", dropped, kept)
	}
	for _, sub := range []string{"logs/" + c1 + ".log", "diffs/" + c1, "checkpoints/" + c1} {
		if _, err := os.Stat(filepath.Join(w.store.dir, sub)); err == nil {
			t.Fatalf("%s still there", sub)
		}
	}
	w.expect("a.txt", "a\n")
	w.expect("b.txt", "b\n")
}

func TestCheckFindsFilesChangedOutside(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "a\n")
	e := w.edit(NewConversationID(), "a.txt", "b\n")
	w.create(NewConversationID(), "c.txt", "c\n")
	if d, err := w.store.Check(); err != nil || len(d) != 0 {
		t.Fatalf("clean store: %v %v", d, err)
	}
	w.mustDecide(Rejected, e.EditID)
	if d, err := w.store.Check(); err != nil || len(d) != 0 {
		t.Fatalf("after a reject: %v %v", d, err)
	}
	w.writeRaw("c.txt", "changed\n")
	d, err := w.store.Check()
	if err != nil || len(d) != 1 || d[0].Path != w.abs("c.txt") {
		t.Fatalf("got %v %v", d, err)
	}
}

func TestEditorRecorderLogsAcceptedDiffs(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "old\n")
	rec := NewDiffRecorder([]string{w.dir})
	w.writeRaw("a.txt", "new\n") // Claude Code wrote the accepted text
	if recorded, err := rec.RecordAccepted("conv_1_ab", w.abs("a.txt"), []byte("old\n"), true, []byte("new\n")); err != nil || !recorded {
		t.Fatalf("recorded %v, %v", recorded, err)
	}
	w.writeRaw("b.txt", "created\n")
	if _, err := rec.RecordAccepted("conv_1_ab", w.abs("b.txt"), nil, false, []byte("created\n")); err != nil {
		t.Fatal(err)
	}
	if recorded, err := rec.RecordAccepted("conv_1_ab", "/elsewhere/c.txt", nil, false, []byte("x")); err != nil || recorded {
		t.Fatalf("a file outside every workspace: recorded %v, %v", recorded, err)
	}
	list, _ := w.store.List(Filter{})
	if len(list.Entries) != 2 || list.Entries[0].Source != SourceIDE || list.Entries[1].Operation != Create || list.Entries[0].ToolName != "openDiff" {
		t.Fatalf("entries: %+v", list.Entries)
	}
	w.mustDecide(Rejected, list.Entries[0].EditID)
	w.expect("a.txt", "old\n")
}

func TestEditCutOffBeforeItsWriteIsMarkedRejected(t *testing.T) {
	w, c := oneFile(t, "a.txt", "one\ntwo\nthree\n")
	// The process logs the change and dies before writing the file.
	_, err := recordWritten(w.store, Commit{
		Conversation: c, Tool: "test", Source: SourceMCP,
		Changes: []Change{{Op: Edit, Path: w.abs("a.txt"), Before: []byte("one\ntwo\nthree\n"), BeforeExists: true, After: []byte("ONE\ntwo\nthree\n")}},
	}, fakeFiles{}) // logged, never written
	if err != nil {
		t.Fatal(err)
	}
	w.edit(c, "a.txt", "one\ntwo\nTHREE\n")
	list, _ := w.store.List(Filter{})
	if len(list.Entries) != 2 || list.Entries[0].Status != Rejected || list.Entries[1].Source != SourceMCP {
		t.Fatalf("want the cut-off edit rejected and no outside change: %+v", list.Entries)
	}
	if d, err := w.store.Check(); err != nil || len(d) != 0 {
		t.Fatalf("check: %v %v", d, err)
	}
	// Accepting it later applies it.
	w.mustDecide(Accepted, list.Entries[0].EditID)
	w.expect("a.txt", "ONE\ntwo\nTHREE\n")
}

// Calls batched on one file are logged together and written once: cut off between
// the two, every edit of the batch is marked rejected (none reached the file), in
// whichever conversation it was.
func TestBatchCutOffBeforeItsWriteIsMarkedRejected(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", "one\ntwo\nthree\n")
	versions := []string{"one\ntwo\nthree\n", "ONE\ntwo\nthree\n", "ONE\nTWO\nthree\n", "ONE\nTWO\nTHREE\n"}
	commit := func(i int) Commit {
		return Commit{Conversation: NewConversationID(), Tool: "test", Source: SourceMCP,
			Changes: []Change{{Op: Edit, Path: w.abs("a.txt"), Before: []byte(versions[i]), BeforeExists: true, After: []byte(versions[i+1])}}}
	}
	batch := Batch{Store: w.store, Commits: []Commit{commit(0), commit(1), commit(2)}, Files: fakeFiles{}} // logged, never written
	if _, err := RecordAll(context.Background(), []Batch{batch}); err != nil {
		t.Fatal(err)
	}
	w.edit(NewConversationID(), "a.txt", "one\ntwo\nthree\nfour\n")
	list, _ := w.store.List(Filter{})
	if len(list.Entries) != 4 {
		t.Fatalf("want the three cut-off edits and the new one: %+v", list.Entries)
	}
	for i, e := range list.Entries[:3] {
		if e.Status != Rejected {
			t.Errorf("cut-off edit %d is %s, want rejected", i, e.Status)
		}
	}
	if e := list.Entries[3]; e.Source != SourceMCP || e.Status != Pending {
		t.Errorf("the new edit is %+v, want a pending edit (no outside change)", e)
	}
	if d, err := w.store.Check(); err != nil || len(d) != 0 {
		t.Fatalf("check: %v %v", d, err)
	}
}

func TestEditorRecorderUsesTheNearestStoreAbove(t *testing.T) {
	w := newWS(t) // a store at the project root
	sub := w.abs("sub")
	os.MkdirAll(sub, 0o755)
	w.writeRaw("sub/a.txt", "new\n")
	rec := NewDiffRecorder([]string{sub}) // the editor's cwd is the subfolder
	if _, err := rec.RecordAccepted("conv_1_ab", filepath.Join(sub, "a.txt"), []byte("old\n"), true, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sub, ".mcp")); err == nil {
		t.Fatal("a second store was made in the subfolder")
	}
	if list, _ := w.store.List(Filter{}); len(list.Entries) != 1 {
		t.Fatalf("the project's store has %d entries", len(list.Entries))
	}
}

// A later write_file is a change like any other: rejecting an earlier edit undoes
// that edit's lines unless the write_file changed them too (then it is a conflict).
func TestRejectUnderALaterWholeFileWrite(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(10))
	e1 := w.edit(c, "a.txt", replaceLine(numbered(10), 2, "EDITED2"))
	before := w.mustRead("a.txt")
	after := replaceLine(before, 9, "WRITTEN9")
	w.change(c, Change{Op: Replace, Path: w.abs("a.txt"), Before: []byte(before), BeforeExists: true, After: []byte(after)})
	w.mustDecide(Rejected, e1.EditID)
	w.expect("a.txt", replaceLine(numbered(10), 9, "WRITTEN9"))

	w.mustDecide(Accepted, e1.EditID)
	cur := w.mustRead("a.txt")
	w.change(c, Change{Op: Replace, Path: w.abs("a.txt"), Before: []byte(cur), BeforeExists: true, After: []byte(replaceLine(cur, 2, "REWRITTEN2"))})
	if _, err := w.decide(Rejected, false, e1.EditID); err == nil {
		t.Fatal("the write_file rewrote the rejected edit's line: want a conflict")
	}
}

// A rejected edit keeps the file's permissions; a rejected delete brings the file back
// with those its entry records, capped as git's (0755 or 0644, the umask applied).
func TestRejectRestoresTheMode(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mode, want fs.FileMode
		change     func(w *ws) *Entry
		entryMode  string
	}{
		{"edit", 0o750, 0o750, func(w *ws) *Entry { return w.edit(NewConversationID(), "run.sh", "#!/bin/sh\necho hello\n") }, ""},
		{"delete", 0o750, 0o755 &^ workspace.Umask(), func(w *ws) *Entry { return w.remove(NewConversationID(), "run.sh") }, "0750"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWS(t)
			w.writeMode("run.sh", "#!/bin/sh\necho hi\n", tc.mode)
			e := tc.change(w)
			if e.Mode != tc.entryMode {
				t.Fatalf("entry mode = %q, want %q", e.Mode, tc.entryMode)
			}
			w.mustDecide(Rejected, e.EditID)
			w.expect("run.sh", "#!/bin/sh\necho hi\n")
			w.expectMode("run.sh", tc.want)
		})
	}
}

// A file every conversation touches must not pin the history forever: resolved
// conversations before the first unresolved one go, and later decisions still work.
func TestCleanupDropsAResolvedPrefix(t *testing.T) {
	w, c1 := oneFile(t, "a.txt", numbered(10))
	c2, c3 := NewConversationID(), NewConversationID()
	e1 := w.edit(c1, "a.txt", replaceLine(numbered(10), 2, "ONE"))
	e2 := w.edit(c2, "a.txt", replaceLine(w.mustRead("a.txt"), 5, "TWO"))
	w.mustDecide(Accepted, e1.EditID)
	w.mustDecide(Rejected, e2.EditID)
	e3 := w.edit(c3, "a.txt", replaceLine(w.mustRead("a.txt"), 8, "THREE"))
	dropped, kept, err := w.store.Cleanup(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 2 || len(kept) != 1 || kept[0] != c3 {
		t.Fatalf("dropped %v kept %v, want c1 and c2 dropped", dropped, kept)
	}
	// c3 took no checkpoint (the history held a.txt): the cleanup wrote the one its
	// replay now starts from.
	if _, err := os.Stat(filepath.Join(w.store.dir, w.store.checkpointName(c3, w.abs("a.txt"))+".chkpt")); err != nil {
		t.Fatalf("no checkpoint for the kept conversation: %v", err)
	}
	w.mustDecide(Rejected, e3.EditID)
	w.expect("a.txt", replaceLine(numbered(10), 2, "ONE"))
	w.mustDecide(Accepted, e3.EditID)
	w.expect("a.txt", replaceLine(replaceLine(numbered(10), 2, "ONE"), 8, "THREE"))
}

// A reject carried out after a later conversation's edit leaves the file, at that
// edit, unlike what the decisions want: the earlier conversation must stay.
func TestCleanupKeepsAPrefixTheReplayStillNeeds(t *testing.T) {
	w, c1 := oneFile(t, "a.txt", numbered(10))
	c2 := NewConversationID()
	e1 := w.edit(c1, "a.txt", replaceLine(numbered(10), 2, "ONE"))
	e2 := w.edit(c2, "a.txt", replaceLine(w.mustRead("a.txt"), 8, "TWO"))
	w.mustDecide(Rejected, e1.EditID)
	dropped, _, err := w.store.Cleanup(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 0 {
		t.Fatalf("dropped %v, but c2's replay starts before c1's reject was carried out", dropped)
	}
	w.mustDecide(Rejected, e2.EditID)
	w.expect("a.txt", numbered(10))
}

// An edit made next to a rejected edit's lines, after its reject, does not stop it
// coming back, nor does a partial reject made before.
func TestReacceptNextToALaterEditAndAfterAPartialReject(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(10))
	e1 := w.edit(c, "a.txt", replaceLine(replaceLine(numbered(10), 3, "three"), 7, "seven"))
	if _, err := w.store.Decide(context.Background(), Selection{Changes: []ChangeRef{{EditID: e1.EditID, Block: 1}}}, Rejected, false); err != nil {
		t.Fatal(err)
	}
	w.expect("a.txt", replaceLine(numbered(10), 3, "three"))
	if list, _ := w.store.List(Filter{}); !list.Entries[0].PartlyRejected() || list.Entries[0].StatusText() != "partly rejected" {
		t.Fatalf("after a partial reject: %+v", list.Entries[0])
	}
	e2 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 8, "eight")) // next to line 7
	w.mustDecide(Accepted, e1.EditID)
	w.expect("a.txt", replaceLine(replaceLine(replaceLine(numbered(10), 3, "three"), 7, "seven"), 8, "eight"))
	hunks, err := w.store.PendingChanges(w.abs("a.txt"))
	if err != nil || len(hunks) != 1 || hunks[0].EditID != e2.EditID || hunks[0].Start != 8 {
		t.Fatalf("pending hunks after e1 was accepted: %+v %v", hunks, err)
	}
	// Rejecting e1 by its lines again, now with e2 next to them, works too.
	if _, err := w.store.Decide(context.Background(), Selection{File: w.abs("a.txt"), Lines: []LineRange{{Start: 7, End: 7}}}, Rejected, false); !errors.Is(err, ErrNoPendingChange) {
		t.Fatalf("e1 is accepted: lines 7 hold no pending change, got %v", err)
	}
	w.mustDecide(Rejected, e1.EditID)
	w.expect("a.txt", replaceLine(numbered(10), 8, "eight"))
}

// Entries of older stores have no line counts and no per-change statuses: they read
// as whole-edit decisions, and their counts come from their diffs.
func TestOlderEntriesReadAsBefore(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(5))
	e := w.edit(c, "a.txt", replaceLine(insertAfter(numbered(5), 1, "new"), 5, "four"))
	log := filepath.Join(w.dir, Dir, "logs", c+".log")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.NewReplacer(`,"added":2`, "", `,"removed":1`, "").Replace(string(b))
	if old == string(b) {
		t.Fatalf("the log line has no counts to take out: %s", b)
	}
	if err := os.WriteFile(log, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	list, err := w.store.List(Filter{})
	if err != nil || len(list.Entries) != 1 || list.Entries[0].Added != nil || list.Entries[0].BlockStatus != nil {
		t.Fatalf("list: %v %+v", err, list.Entries)
	}
	if a, r, err := w.store.Counts(list.Entries[0]); err != nil || a != 2 || r != 1 {
		t.Fatalf("counts from the diff: %d %d %v", a, r, err)
	}
	w.store.FillCounts(list.Entries)
	var out strings.Builder
	if err := WriteJSON(&out, list.Entries); err != nil || !strings.Contains(out.String(), `"added":2,"removed":1}`) {
		t.Fatalf("status --json of an older entry: %v %s", err, out.String())
	}
	if hunks, err := w.store.PendingChanges(w.abs("a.txt")); err != nil || len(hunks) != 2 {
		t.Fatalf("hunks of an older entry: %+v %v", hunks, err)
	}
	w.mustDecide(Rejected, e.EditID)
	w.expect("a.txt", numbered(5))
}

// Quiet waits for a writer to finish and sweeps nothing.
func TestQuietWaitsForTheWriterAndTouchesNothing(t *testing.T) {
	w := newWS(t)
	w.writeRaw("a.txt", numbered(3))
	w.edit(NewConversationID(), "a.txt", replaceLine(numbered(3), 2, "two"))
	staged := filepath.Join(w.dir, Dir, "tmp", "w-staged-elsewhere")
	if err := os.WriteFile(staged, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	other, err := OpenExisting(w.root) // another Store, as another process would have
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := w.store.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := other.Quiet(ctx); err == nil {
		t.Fatal("Quiet returned while a writer held the lock")
	}
	unlock()
	if err := other.Quiet(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(staged); err != nil {
		t.Fatalf("Quiet swept a staged file: %v", err)
	}
}

// A caller that stops waiting for the lock (a client that cancelled its call) is told
// that it stopped, not that another process held the lock for the whole time limit.
func TestCancelledLockWaitSaysSo(t *testing.T) {
	w, _ := oneFile(t, "a.txt", numbered(3))
	held := flock.New(filepath.Join(w.dir, Dir, "history.lock")) // as another process holds it
	if err := held.Lock(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Unlock() }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := w.store.lock(ctx)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "stayed locked") {
		t.Fatalf("a cancelled wait for the lock said %v", err)
	}
}

// A conversation that edits a file the history already holds takes no checkpoint
// (the replay starts from the first one), yet rejecting its edit rebuilds the file.
func TestALaterConversationTakesNoCheckpoint(t *testing.T) {
	w, c1 := oneFile(t, "a.txt", numbered(10))
	c2 := NewConversationID()
	e1 := w.edit(c1, "a.txt", replaceLine(numbered(10), 2, "ONE"))
	e2 := w.edit(c2, "a.txt", replaceLine(w.mustRead("a.txt"), 5, "TWO"))
	if e1.CheckpointFile == nil {
		t.Fatal("the first edit of a file took no checkpoint")
	}
	if e2.CheckpointFile != nil {
		t.Fatalf("the second conversation took checkpoint %s", *e2.CheckpointFile)
	}
	if _, err := os.Stat(filepath.Join(w.store.dir, "checkpoints", c2)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the second conversation has a checkpoints folder (%v)", err)
	}
	w.mustDecide(Rejected, e1.EditID)
	w.expect("a.txt", replaceLine(numbered(10), 5, "TWO"))
	w.mustDecide(Rejected, e2.EditID)
	w.expect("a.txt", numbered(10))
}

// A checkpoint of a file the file tools replace is a second name of the replaced
// file, not a copy, and rejecting the edit still rebuilds the file from it.
func TestCheckpointIsALinkToTheReplacedFile(t *testing.T) {
	w := newWS(t)
	big := numbered(20000)
	w.writeRaw("big.txt", big)
	old, err := os.Stat(w.abs("big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e := w.edit("conv_1", "big.txt", replaceLine(big, 5, "changed"))
	if e.CheckpointFile == nil {
		t.Fatal("the edit has no checkpoint")
	}
	chk, err := os.Stat(filepath.Join(w.dir, Dir, *e.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(chk, old) {
		t.Fatal("the checkpoint is a copy, not the replaced file")
	}
	if now, _ := os.Stat(w.abs("big.txt")); os.SameFile(now, old) {
		t.Fatal("the edit wrote the file in place: the checkpoint would change with it")
	}
	w.mustDecide(Rejected, e.EditID)
	w.expect("big.txt", big)
}
