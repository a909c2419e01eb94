package history

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv/timeouts"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// spareNames lists spare/: name → whether it is a folder.
func (w *ws) spareNames() map[string]bool {
	out := map[string]bool{}
	names, _ := os.ReadDir(filepath.Join(w.store.dir, spareDir))
	for _, n := range names {
		out[n.Name()] = n.IsDir()
	}
	return out
}

// spareCount counts the files and folders in spare/.
func (w *ws) spareCount() (files, dirs int) {
	for _, dir := range w.spareNames() {
		if dir {
			dirs++
		} else {
			files++
		}
	}
	return files, dirs
}

// waitSpares waits until the refill has made the pool full: it then touches the
// store no more (the test's folder can be removed).
func (w *ws) waitSpares() {
	w.t.Helper()
	deadline := time.Now().Add(timeouts.Scaled(30 * time.Second))
	for {
		files, dirs := w.spareCount()
		if files >= wantSpareFiles && dirs >= wantSpareDirs {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the pool holds %d files and %d folders after 30 s, want %d and %d", files, dirs, wantSpareFiles, wantSpareDirs)
		}
		time.Sleep(5 * time.Millisecond) // polling a folder, with a deadline
	}
}

// A store kept with spares uses them where the build has a rename that never
// replaces its target (Linux, macOS), and keeps none elsewhere (and in the portable
// build, which make test runs too): each build checks its own half.
func TestSparesWhereTheBuildKeepsThem(t *testing.T) {
	if sparesSupported {
		sparesBecomeTheStoresNewFiles(t)
	} else {
		noSparesWithoutANoReplaceRename(t)
	}
}

// A store kept with spares renames them into place for a new conversation's log,
// diff folder and diff, and for the write's temp file; what it records is as
// without them.
func sparesBecomeTheStoresNewFiles(t *testing.T) {
	w := newWS(t)
	w.store.KeepSpares()
	w.waitSpares()
	before := w.spareNames()
	w.writeRaw("a.txt", "one\n")
	info, _ := os.Stat(w.abs("a.txt"))
	conv := NewConversationID()
	tx := workspace.NewTx(false)
	tx.TakeTemp = w.store.TakeTemp
	tx.Write(workspace.File{Root: w.root, Rel: "a.txt", Abs: w.abs("a.txt")}, workspace.Was{Content: []byte("one\n"), Exists: true, Info: info}, []byte("two\n"))
	entries, err := recordWritten(w.store, Commit{Conversation: conv, Tool: "edit_file", Source: SourceMCP,
		Changes: []Change{{Op: Edit, Path: w.abs("a.txt"), Before: []byte("one\n"), BeforeExists: true, BeforeInfo: info, After: []byte("two\n")}}}, tx)
	if err != nil {
		t.Fatal(err)
	}
	// Files: the log, the diff and the temp file (the checkpoint is a link);
	// folders: the diffs' and the checkpoints'. (The refill makes new ones.)
	after := w.spareNames()
	files, dirs := 0, 0
	for name, dir := range before {
		if _, left := after[name]; left {
			continue
		}
		if dir {
			dirs++
		} else {
			files++
		}
	}
	if files != 3 || dirs != 2 {
		w.waitSpares()
		t.Fatalf("one edit took %d spare files and %d folders, want 3 and 2", files, dirs)
	}
	w.expect("a.txt", "two\n")
	for name, mode := range map[string]os.FileMode{"logs/" + conv + ".log": 0o600, "diffs/" + conv: os.ModeDir | 0o700} {
		fi, err := os.Stat(filepath.Join(w.store.dir, name))
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: %v, mode %v, want %v", name, err, fi.Mode(), mode)
		}
	}
	if fi, _ := os.Stat(w.abs("a.txt")); fi.Mode().Perm() != info.Mode().Perm() {
		t.Errorf("a.txt has mode %v after the write, want %v", fi.Mode(), info.Mode())
	}
	w.mustDecide(Rejected, entries[0].EditID)
	w.expect("a.txt", "one\n")
	w.waitSpares()
}

// Spares a cloned repository brings with content are never used: only empty files
// and folders are.
func TestSparesWithContentAreLeftAlone(t *testing.T) {
	w := newWS(t)
	planted := filepath.Join(w.store.dir, spareDir)
	os.MkdirAll(filepath.Join(planted, "D"), 0o700)
	os.WriteFile(filepath.Join(planted, "D", "x.diff"), []byte("planted\n"), 0o600)
	os.WriteFile(filepath.Join(planted, "F"), []byte(`{"edit_id":"planted"}`+"\n"), 0o600)
	w.writeRaw("a.txt", "one\n")
	conv := NewConversationID()
	w.edit(conv, "a.txt", "two\n")
	for _, name := range []string{"D/x.diff", "F"} {
		if _, err := os.Stat(filepath.Join(planted, name)); err != nil {
			t.Errorf("planted %s was taken: %v", name, err)
		}
	}
	list, err := w.store.List(Filter{Conversation: conv})
	if err != nil || len(list.Entries) != 1 || len(list.Warnings) != 0 {
		t.Fatalf("the new conversation's log holds %d entries (warnings %q, %v), want its one edit", len(list.Entries), list.Warnings, err)
	}
}

// Where no rename refuses to replace its target (and in the portable build), the
// store keeps no spares and creates its files itself: an edit is recorded and
// rejected as with them, and spare/ is never made.
func noSparesWithoutANoReplaceRename(t *testing.T) {
	w := newWS(t)
	w.store.KeepSpares()
	w.writeRaw("a.txt", "one\n")
	conv := NewConversationID()
	e := w.edit(conv, "a.txt", "two\n")
	w.expect("a.txt", "two\n")
	w.mustDecide(Rejected, e.EditID)
	w.expect("a.txt", "one\n")
	if _, err := os.Stat(filepath.Join(w.store.dir, spareDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("spare/ exists in a build without spares (%v)", err)
	}
}
