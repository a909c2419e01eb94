package testenv

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv/changetx"
	"github.com/mcpdiff/mcpdiff/internal/userkey"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Record records ch (tool "edit_file", source mcp) in conversation conv of store, the
// history of root, and puts it on disk as the file tools do, through a
// workspace.Tx. It returns the entry.
func Record(tb testing.TB, store *history.Store, root *workspace.Root, conv string, ch history.Change) *history.Entry {
	tb.Helper()
	entries, err := RecordWritten(store, history.Commit{Conversation: conv, Tool: "edit_file", Source: history.SourceMCP,
		Changes: []history.Change{ch}}, Tx(root, ch))
	if err != nil {
		tb.Fatalf("record %s of %s: %v", ch.Op, ch.Path, err)
	}
	return entries[0]
}

// RecordWritten records c in store as one batch whose files puts it on disk.
func RecordWritten(store *history.Store, c history.Commit, files history.Files) ([]*history.Entry, error) {
	entries, err := history.RecordAll(context.Background(), []history.Batch{{Store: store, Commits: []history.Commit{c}, Files: files}})
	if err != nil {
		return nil, err
	}
	return entries[0], nil
}

// RecordEdit records with Record an edit of the file rel (slash-separated, relative
// to root) from before to after, which it writes.
func RecordEdit(tb testing.TB, store *history.Store, root *workspace.Root, conv, rel string, before, after []byte) *history.Entry {
	tb.Helper()
	return Record(tb, store, root, conv, history.Change{Op: history.Edit, Path: filepath.Join(root.Path(), filepath.FromSlash(rel)),
		Before: before, BeforeExists: true, After: after})
}

// Tx is the workspace.Tx that puts ch on disk in root.
func Tx(root *workspace.Root, ch history.Change) *workspace.Tx {
	return changetx.Tx(root, changetx.Change{Delete: ch.Op == history.Delete, Move: ch.Op == history.Move,
		Path: ch.Path, From: ch.From, Before: ch.Before, BeforeExists: ch.BeforeExists, After: ch.After})
}

// CreateStore opens the workspace dir and its edit history, made when there is none;
// the root is closed when the test ends.
func CreateStore(tb testing.TB, dir string) (*workspace.Root, *history.Store) {
	tb.Helper()
	return openStore(tb, dir, history.Open)
}

// OpenStore opens the existing edit history of the workspace dir, or fails the test;
// its root is closed when the test ends.
func OpenStore(tb testing.TB, dir string) *history.Store {
	tb.Helper()
	_, store := openStore(tb, dir, history.OpenExisting)
	return store
}

func openStore(tb testing.TB, dir string, open func(*workspace.Root) (*history.Store, error)) (*workspace.Root, *history.Store) {
	tb.Helper()
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { root.Close() })
	store, err := open(root)
	if err != nil {
		tb.Fatalf("open the edit history of %s: %v", dir, err)
	}
	return root, store
}

// Entries is what the edit history of the workspace dir records, in order; nil when
// dir has no history.
func Entries(tb testing.TB, dir string) []*history.Entry {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(dir, history.Dir)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l, err := OpenStore(tb, dir).List(history.Filter{})
	if err != nil {
		tb.Fatalf("list the edit history of %s: %v", dir, err)
	}
	return l.Entries
}

// ShareKey gives the programs that run with home as their home (HomeVars) the key
// this test process signs stores with, so that the stores the test makes in process
// (CreateStore, WriteStore) are theirs too.
func ShareKey(tb testing.TB, home string) {
	tb.Helper()
	if _, err := userkey.Load(true); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(userkey.Path())
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(home, ".local", "state", "mcpdiff")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(userkey.Path())), data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Adopt signs the edit history of the workspace dir, written by hand, with this
// test process's key, as `mcpdiff adopt --yes` does.
func Adopt(dir string) error {
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	store, err := history.OpenExisting(root)
	if err != nil {
		return err
	}
	return store.Adopt()
}
