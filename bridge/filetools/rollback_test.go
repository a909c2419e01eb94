package filetools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// A multi-file call whose third write fails for real (its folder was swapped for a
// file between staging and commit) leaves every file as it was, removes what it
// created, and records nothing; the same call then succeeds and is recorded.
func TestMultiFileCallIsUndoneWhenALaterWriteFails(t *testing.T) {
	root := testenv.TempDir(t)
	a, created, b := filepath.Join(root, "a.txt"), filepath.Join(root, "new", "deep", "c.txt"), filepath.Join(root, "sub", "b.txt")
	writeFile(t, a, "A\n", 0o640)
	writeFile(t, b, "B\n", 0o600)
	c, srv := serveServer(t, Config{Roots: []string{root}})
	sub := filepath.Join(root, "sub")
	// Once the new contents are staged, b.txt's folder becomes a file: putting b.txt
	// in place, the third change, fails.
	sabotage(srv, b, sabotaged{afterStage: func() error { return folderToFile(sub) }})
	args := map[string]any{"path": []any{"a.txt", "new/deep/c.txt", "sub/b.txt"}, "content": []any{"A2\n", "C\n", "B2\n"}, "line_count": 1}
	c.fails("write_files", args, "sub/b.txt", "nothing was changed", "2 change(s)", "undone", "nothing was recorded")

	expectFile(t, a, "A\n", 0o640)
	expectMissing(t, created)
	expectMissing(t, filepath.Join(root, "new")) // the folders the create made
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sub+".away", sub); err != nil {
		t.Fatal(err)
	}
	expectFile(t, b, "B\n", 0o600)
	if got := testenv.Entries(t, root); len(got) != 0 {
		t.Fatalf("a call that was undone left %d history entries: %+v", len(got), got[0])
	}

	srv.recordAll = history.RecordAll
	c.ok("write_files", args)
	expectFile(t, a, "A2\n", 0o640)
	expectFile(t, b, "B2\n", 0o600)
	expectFile(t, created, "C\n", 0o644&^umask(t))
	got := testenv.Entries(t, root)
	if len(got) != 3 {
		t.Fatalf("%d entries after the call that succeeded, want 3", len(got))
	}
	for _, e := range got {
		if e.Status != history.Pending || e.ToolName != "write_files" {
			t.Errorf("entry %s: status %s, tool %s", e.FilePath, e.Status, e.ToolName)
		}
	}
}

// folderToFile moves the folder dir aside, to dir.away, and puts a file in its place,
// so that writing into dir fails.
func folderToFile(dir string) error {
	if err := os.Rename(dir, dir+".away"); err != nil {
		return err
	}
	return os.WriteFile(dir, []byte("not a folder"), 0o644)
}

// Every kind of change is taken back when a later step of the call fails: an edit
// (content and mode), a move (back to its name, its new folders removed), a delete
// (recreated with its mode, past the umask) and a create.
func TestApplyUndoesEveryKindOfChange(t *testing.T) {
	root := testenv.TempDir(t)
	p := func(rel string) string { return filepath.Join(root, rel) }
	writeFile(t, p("edited.txt"), "old\n", os.ModeSetuid|0o750) // a write drops setuid: the undo puts it back
	writeFile(t, p("moved.txt"), "moving\n", 0o640)
	writeFile(t, p("deleted.txt"), "gone\n", 0o666)
	writeFile(t, p("last.txt"), "last\n", 0o644)
	srv, err := New(Config{Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	files, err := resolveAll(scope{pol: srv.fixed}, []string{"edited.txt", "moved.txt", "to/here/moved.txt", "deleted.txt", "made/new.txt", "last.txt"}, false)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := srv.readTargets(files, readOpts{mayBeMissing: true, binaryOK: true})
	if err != nil {
		t.Fatal(err)
	}
	changes := []fileChange{
		{op: history.Edit, t: ts[0], after: []byte("new\n")},
		{op: history.Move, t: ts[1], dest: ts[2].file},
		{op: history.Delete, t: ts[3]},
		{op: history.Create, t: ts[4], after: []byte("made\n")},
	}
	boom := errors.New("the disk is full") // writing last.txt, the call's next change
	tx := srv.tx(changes)
	if err := tx.Stage(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Apply(); err != nil {
		t.Fatal(err)
	}
	err = tx.Undo(boom)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "4 change(s)") {
		t.Fatalf("apply: %v", err)
	}
	expectFile(t, p("edited.txt"), "old\n", os.ModeSetuid|0o750)
	expectFile(t, p("moved.txt"), "moving\n", 0o640)
	expectMissing(t, p("to"))
	expectFile(t, p("deleted.txt"), "gone\n", 0o666)
	expectMissing(t, p("made"))
	expectFile(t, p("last.txt"), "last\n", 0o644)
	if tmp, _ := os.ReadDir(filepath.Join(root, workspace.StagingDir)); len(tmp) != 0 {
		t.Errorf("temp files left: %v", tmp)
	}
}

// When the undo itself fails, the error names the file that could not be put back.
func TestFailedUndoNamesTheFileLeftChanged(t *testing.T) {
	root := testenv.TempDir(t)
	a, b := filepath.Join(root, "d", "a.txt"), filepath.Join(root, "b.txt")
	writeFile(t, a, "A\n", 0o644)
	writeFile(t, b, "B\n", 0o644)
	c, srv := serveServer(t, Config{Roots: []string{root}})
	d := filepath.Join(root, "d")
	sabotage(srv, b, sabotaged{afterApply: func() error {
		// a.txt's folder goes away: its old content cannot be written back.
		if err := folderToFile(d); err != nil {
			return err
		}
		return errors.New("simulated failure")
	}})
	c.fails("write_files", map[string]any{"path": []any{"d/a.txt", "b.txt"}, "content": "X\n", "line_count": 1},
		"simulated failure", "except in "+a, "could not be put back", "check them")
	expectFile(t, d+".away/a.txt", "X\n", 0o644) // left changed, as the error said
	expectFile(t, b, "B\n", 0o644)
}

// A call spanning two roots (two history stores) is undone in both, and neither
// store keeps an entry of it.
func TestCallAcrossRootsIsUndoneInBoth(t *testing.T) {
	one, two := testenv.TempDir(t), testenv.TempDir(t)
	if one > two {
		one, two = two, one // the stores are locked, and written, in path order
	}
	a, b := filepath.Join(one, "a.txt"), filepath.Join(two, "b.txt")
	writeFile(t, a, "A\n", 0o644)
	writeFile(t, b, "B\n", 0o644)
	c, srv := serveServer(t, Config{Roots: []string{one, two}})
	sabotage(srv, b, sabotaged{afterStage: func() error { return errors.New("simulated failure") }})
	args := map[string]any{"path": []any{a, b}, "content": "X\n", "line_count": 1}
	c.fails("write_files", args, "simulated failure", "1 change(s)", "undone")
	expectFile(t, a, "A\n", 0o644)
	expectFile(t, b, "B\n", 0o644)
	for _, root := range []string{one, two} {
		if got := testenv.Entries(t, root); len(got) != 0 {
			t.Errorf("%s: %d history entries after an undone call", root, len(got))
		}
	}

	srv.recordAll = history.RecordAll
	c.ok("write_files", args)
	expectFile(t, a, "X\n", 0o644)
	expectFile(t, b, "X\n", 0o644)
	for _, root := range []string{one, two} {
		if got := testenv.Entries(t, root); len(got) != 1 || got[0].Status != history.Pending {
			t.Errorf("%s: %d history entries, want 1 pending", root, len(got))
		}
	}
}
