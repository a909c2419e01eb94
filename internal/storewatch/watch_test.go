package storewatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv/timeouts"
)

// reports collects what a watcher reports.
type reports chan []string

func (r reports) next(t *testing.T, what string) []string {
	t.Helper()
	select {
	case got := <-r:
		return got
	case <-time.After(timeouts.Scaled(5 * time.Second)):
		t.Fatalf("no report after %s", what)
		return nil
	}
}

// quiet takes the reports that come until none has for a while: the events of
// removing or making a store's folders may come as more than one burst.
func (r reports) quiet() {
	for {
		select {
		case <-r:
		case <-time.After(150 * time.Millisecond):
			return
		}
	}
}

func (r reports) none(t *testing.T, what string) {
	t.Helper()
	select {
	case got := <-r:
		t.Fatalf("%s was reported as a change of %v", what, got)
	case <-time.After(150 * time.Millisecond): // a quiet period long past the debounce
	}
}

// newStore makes a workspace with the folders of a store and returns the store's.
func newStore(t *testing.T) string {
	t.Helper()
	store := filepath.Join(t.TempDir(), StoreDir)
	for _, d := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(store, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func newWatcher(t *testing.T) (*Watcher, reports) {
	t.Helper()
	return newWatcherQuiet(t, 10*time.Millisecond)
}

// newWatcherQuiet is newWatcher with a debounce of quiet.
func newWatcherQuiet(t *testing.T, quiet time.Duration) (*Watcher, reports) {
	t.Helper()
	r := make(reports, 100)
	w, err := New(quiet, func(stores []string) { r <- stores }, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, r
}

func TestAppendsRenamesAndNewLogsAreReported(t *testing.T) {
	store := newStore(t)
	w, r := newWatcher(t)
	w.Watch([]string{store}, nil)

	log := filepath.Join(store, "logs", "c.log")
	os.WriteFile(log, []byte("{}\n"), 0o644)
	if got := r.next(t, "a new log"); len(got) != 1 || got[0] != store {
		t.Fatalf("reported %v, want %s", got, store)
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("{}\n"))
	f.Close()
	r.next(t, "an append")
	tmp := filepath.Join(store, "tmp", "w-1")
	os.WriteFile(tmp, []byte("x\n"), 0o644)
	r.none(t, "a temp file")
	os.Rename(tmp, log)
	r.next(t, "a log replaced by rename")
	os.WriteFile(filepath.Join(store, "heads.log"), []byte("{}\n"), 0o644)
	r.next(t, "heads.log")
	os.WriteFile(filepath.Join(store, "history.lock"), nil, 0o644)
	r.none(t, "the lock file")
}

func TestAStoreAppearingInAWorkspaceIsReported(t *testing.T) {
	ws := t.TempDir()
	w, r := newWatcher(t)
	w.Watch(nil, []string{ws})
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("x"), 0o644)
	r.none(t, "a file of the workspace")
	store := filepath.Join(ws, StoreDir)
	os.MkdirAll(filepath.Join(store, "logs"), 0o755)
	if got := r.next(t, "the store appearing"); got[0] != store {
		t.Fatalf("reported %v", got)
	}
	os.WriteFile(filepath.Join(store, "logs", "c.log"), []byte("{}\n"), 0o644)
	r.next(t, "a log in the new store")
}

func TestABurstIsOneReport(t *testing.T) {
	store := newStore(t)
	// A quiet period the twenty writes fit in even on a loaded machine (with 10 ms,
	// a pause between two of them was reported as the end of the burst).
	w, r := newWatcherQuiet(t, 500*time.Millisecond)
	w.Watch([]string{store}, nil)
	for i := 0; i < 20; i++ {
		os.WriteFile(filepath.Join(store, "heads.log"), []byte{byte(i)}, 0o644)
	}
	r.next(t, "the burst")
	r.none(t, "the same burst again")
}

func TestCloseStopsReports(t *testing.T) {
	store := newStore(t)
	w, r := newWatcher(t)
	w.Watch([]string{store}, nil)
	os.WriteFile(filepath.Join(store, "heads.log"), []byte("x"), 0o644)
	w.Close() // no report after it returns: drain what came before
	for len(r) > 0 {
		<-r
	}
	os.WriteFile(filepath.Join(store, "heads.log"), []byte("y"), 0o644)
	r.none(t, "a change after Close")
}

// A store that appeared under a watched workspace and is then watched as a store
// keeps being reported (as the bridge does it: the workspace first, then the store).
func TestAStoreThatAppearedIsFollowedOnceWatchedAsAStore(t *testing.T) {
	for i := 0; i < 20; i++ {
		ws := t.TempDir()
		w, r := newWatcher(t)
		w.Watch(nil, []string{ws})
		store := filepath.Join(ws, StoreDir)
		os.MkdirAll(filepath.Join(store, "logs"), 0o755)
		os.MkdirAll(filepath.Join(store, "tmp"), 0o755)
		os.WriteFile(filepath.Join(store, "FORMAT"), []byte("x"), 0o644)
		r.next(t, "the store appearing")
		w.Watch([]string{store}, []string{ws})
		os.WriteFile(filepath.Join(store, "logs", "c.log"), []byte("{}\n"), 0o644)
		r.next(t, "a log of the store, now watched as one")
		w.Close()
	}
}

// A store removed and made again while it is watched (rm -rf .mcp, then an agent's
// next edit) is reported both times, and the new store's logs are followed as the
// old one's were, however fast the new one is made.
func TestAStoreRemovedAndMadeAgainIsFollowed(t *testing.T) {
	for i := 0; i < 6; i++ {
		store := newStore(t)
		ws := filepath.Dir(filepath.Dir(store))
		w, r := newWatcher(t)
		w.Watch([]string{store}, []string{ws})
		if err := os.RemoveAll(filepath.Join(ws, ".mcp")); err != nil {
			t.Fatal(err)
		}
		if got := r.next(t, "the store removed"); len(got) != 1 || got[0] != store {
			t.Fatalf("reported %v, want %s", got, store)
		}
		if i%2 == 0 { // else made again right after the removal's first report
			r.quiet()
		}
		if err := os.MkdirAll(filepath.Join(store, "logs"), 0o755); err != nil {
			t.Fatal(err)
		}
		r.next(t, "the store made again")
		r.quiet()
		os.WriteFile(filepath.Join(store, "logs", "c.log"), []byte("{}\n"), 0o644)
		r.next(t, "a log of the new store")
		w.Close()
	}
}
