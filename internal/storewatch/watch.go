// Package storewatch tells when edit-history stores change. Every writer (the MCP
// server, the CLI, a Claude Code hook, another Neovim) appends or renames files in a
// store's folder or its logs/ folder, so watching those two folders with the
// operating system's notifications (inotify on Linux, kqueue on macOS, through
// fsnotify) sees every change without polling. It also watches workspace folders
// where a store does not exist yet, to see one appear.
package storewatch

import (
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// StoreDir is where a workspace keeps its store (history.Dir, as a path).
var StoreDir = filepath.Join(".mcp", "edit_history")

// Watcher reports changed stores to its callback, a burst of changes at a time.
type Watcher struct {
	fs       *fsnotify.Watcher
	debounce time.Duration
	maxWait  time.Duration
	onChange func(stores []string)
	logf     func(format string, args ...any)

	mu      sync.Mutex
	folders map[string]string // folder watched → the store its changes belong to
	dirty   map[string]bool
	timer   *time.Timer
	first   time.Time // of the burst being collected
	closed  bool

	batches chan []string
	done    chan struct{}
}

// New starts a watcher. A burst of changes is reported debounce after its last
// event, and never later than ten times debounce after its first. onChange runs on
// one goroutine, one call at a time.
func New(debounce time.Duration, onChange func(stores []string), logf func(format string, args ...any)) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	w := &Watcher{fs: fw, debounce: debounce, maxWait: 10 * debounce, onChange: onChange, logf: logf,
		folders: map[string]string{}, dirty: map[string]bool{}, batches: make(chan []string, 16), done: make(chan struct{})}
	go w.events()
	go w.report()
	return w, nil
}

// Watch sets what to watch: stores (their .mcp/edit_history folders) and workspace
// folders where a store may appear (reported as the store that appeared).
func (w *Watcher) Watch(stores, workspaces []string) {
	want := map[string]string{}
	for _, ws := range workspaces {
		stores = append(stores, filepath.Join(ws, StoreDir))
	}
	for _, s := range stores {
		// The workspace and .mcp too: a folder of the store that is not there yet
		// (or not yet when it is added) is watched when its parent sees it appear.
		ws := filepath.Dir(filepath.Dir(s))
		for _, f := range []string{ws, filepath.Dir(s), s, filepath.Join(s, "logs")} {
			want[f] = s
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	for f := range w.folders {
		if _, ok := want[f]; !ok {
			_ = w.fs.Remove(f)
			delete(w.folders, f)
		}
	}
	var added []string
	for f, s := range want {
		if _, ok := w.folders[f]; !ok {
			w.folders[f] = s
			added = append(added, f)
		}
	}
	sort.Strings(added) // parents first
	for _, f := range added {
		w.addTree(f)
	}
}

// Close stops watching; no callback runs after it returns.
func (w *Watcher) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	err := w.fs.Close()
	close(w.batches)
	<-w.done
	return err
}

func (w *Watcher) events() {
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			w.event(ev)
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			w.logf("watch the edit history: %v", err)
		}
	}
}

func (w *Watcher) event(ev fsnotify.Event) {
	dir, name := filepath.Split(ev.Name)
	dir = filepath.Clean(dir)
	if name == "history.lock" || name == "tmp" {
		return // taking the lock or staging a file changes nothing yet
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	store, ok := w.folders[dir]
	if !ok || w.closed {
		return
	}
	// A watched folder that appears (.mcp, edit_history, logs) is watched from now on.
	if f := filepath.Join(dir, name); ev.Has(fsnotify.Create) {
		w.addTree(f)
	}
	switch dir {
	case store, filepath.Join(store, "logs"), filepath.Dir(store):
	default: // the workspace folder: only .mcp appearing matters
		if name != ".mcp" {
			return
		}
	}
	w.markDirty(store)
}

// addTree watches f, if it is one of the folders wanted, and the wanted folders below
// it that already exist (they may have appeared before f was watched). A folder not
// there yet is left to its parent's watch. Called with mu held.
func (w *Watcher) addTree(f string) {
	if _, want := w.folders[f]; !want {
		return
	}
	if err := w.fs.Add(f); err != nil {
		return
	}
	for g := range w.folders {
		if filepath.Dir(g) == f {
			if fi, err := os.Stat(g); err == nil && fi.IsDir() {
				w.addTree(g)
			}
		}
	}
}

// markDirty adds a store to the burst being collected. Called with mu held.
func (w *Watcher) markDirty(store string) {
	w.dirty[store] = true
	now := time.Now()
	switch {
	case w.timer == nil:
		w.first = now
		w.timer = time.AfterFunc(w.debounce, w.flush)
	case now.Sub(w.first) < w.maxWait:
		w.timer.Reset(w.debounce)
	}
}

// flush hands the burst to the callback's goroutine (under mu, so never after Close).
func (w *Watcher) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.closed || len(w.dirty) == 0 {
		return
	}
	var stores []string
	for s := range w.dirty {
		stores = append(stores, s)
	}
	sort.Strings(stores)
	select {
	case w.batches <- stores:
		w.dirty = map[string]bool{}
	default: // the callback is behind: keep collecting, try again later
		w.first = time.Now()
		w.timer = time.AfterFunc(w.debounce, w.flush)
	}
}

func (w *Watcher) report() {
	defer close(w.done)
	for stores := range w.batches {
		w.onChange(stores)
	}
}
