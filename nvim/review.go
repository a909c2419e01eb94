package nvim

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/neovims"
	"github.com/mcpdiff/mcpdiff/internal/reviewlist"
	"github.com/mcpdiff/mcpdiff/internal/storewatch"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// reviewer keeps Neovim's view of the edit history current: the pending changes of
// the files it has open (signs, hunks(), navigation) and the buffers of files that
// a recorded change rewrote. It watches the stores of those files (and of
// Neovim's cwd, for the review list) from Go, so Neovim runs no timer: whoever
// changes a store (the MCP server, the CLI, a Claude Code hook, another Neovim),
// Neovim hears of it within a fraction of a second.
type reviewer struct {
	v     *nvimrpc.Nvim
	logf  func(format string, args ...any)
	watch *storewatch.Watcher

	mu       sync.Mutex
	cwd      string
	files    map[string]*openFile        // by the buffer's name
	stores   map[string]*history.Store   // by workspace folder
	dirty    map[string]bool             // buffer names whose pending changes Neovim needs
	changed  map[string]bool             // workspaces whose store changed
	lists    map[string]*reviewlist.List // review lists by cwd, while their store is unchanged
	watchKey string                      // what the watcher was last told to watch
	watching map[string]bool             // the store folders it watches
	kick     chan struct{}
	life     context.Context
	end      context.CancelFunc
	done     chan struct{}
}

// openFile is a file Neovim has loaded in a buffer.
type openFile struct {
	real      string // the path with symlinks resolved, as the history records it
	workspace string // the folder whose store records it; "" when none does
}

// debounce is how long the reviewer waits for a burst of store changes to end.
const debounce = 30 * time.Millisecond

func newReviewer(v *nvimrpc.Nvim, logf func(format string, args ...any)) *reviewer {
	life, end := context.WithCancel(context.Background())
	r := &reviewer{v: v, logf: logf, files: map[string]*openFile{}, stores: map[string]*history.Store{},
		dirty: map[string]bool{}, changed: map[string]bool{}, lists: map[string]*reviewlist.List{},
		kick: make(chan struct{}, 1), life: life, end: end, done: make(chan struct{})}
	w, err := storewatch.New(debounce, r.storesChanged, logf)
	if err != nil {
		logf("watch the edit history: %v (signs and the review list will not follow changes)", err)
	}
	r.watch = w
	go r.run()
	return r
}

// close stops the watcher and the worker.
func (r *reviewer) close() {
	if r.watch != nil {
		r.watch.Close()
	}
	r.end()
	<-r.done
}

// setBuffers is the mcpdiff_buffers notification: Neovim's cwd, the names of its
// loaded file buffers, and those just read or written (their pending changes are news).
func (r *reviewer) setBuffers(cwd string, names, fresh []string) {
	r.mu.Lock()
	r.cwd = cwd
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
		if _, ok := r.files[n]; !ok {
			r.files[n] = &openFile{real: realPath(n)}
			r.dirty[n] = true
		}
	}
	for n := range r.files {
		if !keep[n] {
			delete(r.files, n)
		}
	}
	for _, n := range fresh {
		if _, ok := r.files[n]; ok {
			r.dirty[n] = true
		}
	}
	r.mu.Unlock()
	r.poke()
}

// storesChanged is the watcher's callback.
func (r *reviewer) storesChanged(stores []string) {
	r.mu.Lock()
	for _, s := range stores {
		r.changed[workspaceOf(s)] = true
	}
	r.lists = map[string]*reviewlist.List{}
	r.mu.Unlock()
	r.poke()
}

func (r *reviewer) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *reviewer) run() {
	defer close(r.done)
	for {
		select {
		case <-r.life.Done():
			return
		case <-r.kick:
		}
		r.update()
	}
}

// update sends Neovim the pending changes of the files that need them after a store changed
// or buffers were opened, and the files of changed stores: Lua reloads those whose
// file is not the one their buffer read (it keeps the stamp of what it read).
func (r *reviewer) update() {
	r.mu.Lock()
	changed, dirty := r.changed, r.dirty
	r.changed, r.dirty = map[string]bool{}, map[string]bool{}
	files := map[string]*openFile{}
	for n, f := range r.files {
		files[n] = f
	}
	cwd := r.cwd
	r.mu.Unlock()

	for n, f := range files {
		// Looked up each time (a few stats): a store may have appeared nearer the file.
		ws := r.findWorkspace(filepath.Dir(f.real))
		if ws != f.workspace { // a store appeared (or went): all of it is news
			f.workspace = ws
			dirty[n] = true
			if ws != "" {
				changed[ws] = true
			}
		}
	}
	for ws := range changed {
		if s := r.storeOf(ws); s != nil {
			ctx, cancel := context.WithTimeout(r.life, 2*time.Second)
			_ = s.Quiet(ctx) // a change logged is then written too
			cancel()
		}
	}
	type fileUpdate struct {
		Name    string           `msgpack:"name"`
		Changes []map[string]any `msgpack:"changes"`
	}
	// The files whose pending changes Neovim needs, by store: each store is read once.
	wanted := map[string][]string{} // workspace → real paths
	for n, f := range files {
		if (dirty[n] || changed[f.workspace]) && f.workspace != "" {
			wanted[f.workspace] = append(wanted[f.workspace], f.real)
		}
	}
	found := map[string][]history.PendingChange{}
	for ws, paths := range wanted {
		if s := r.storeOf(ws); s != nil {
			hs, err := s.PendingChangesOf(paths)
			if err != nil {
				r.logf("pending changes in %s: %v", ws, err)
			}
			for p, h := range hs {
				found[p] = h
			}
		}
	}
	updates := []fileUpdate{}
	reload := []string{}
	for n, f := range files {
		if !dirty[n] && !changed[f.workspace] {
			continue
		}
		updates = append(updates, fileUpdate{Name: n, Changes: luaPending(found[f.real])})
		if changed[f.workspace] {
			reload = append(reload, n)
		}
	}
	workspaces := []string{}
	for ws := range changed {
		workspaces = append(workspaces, ws)
	}
	if added := r.rewatch(files, cwd); len(added) > 0 {
		r.storesChanged(added) // look once more, now that they are watched
	}
	if len(updates) == 0 && len(workspaces) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(r.life, 10*time.Second)
	defer cancel()
	payload := map[string]any{"files": updates, "reload": reload, "workspaces": workspaces}
	if err := neovims.CallLua(ctx, r.v, "show pending changes", "changes._update", nil, payload); err != nil {
		r.logf("%v", err)
	}
}

// rewatch watches the stores of the open files and of the cwd, and the cwd for a
// store that does not exist yet. It returns the stores it watches from now on: a
// change made before their watch began is not reported by the watcher.
func (r *reviewer) rewatch(files map[string]*openFile, cwd string) []string {
	if r.watch == nil {
		return nil
	}
	set := map[string]bool{}
	for _, f := range files {
		if f.workspace != "" {
			set[filepath.Join(f.workspace, storewatch.StoreDir)] = true
		}
	}
	var roots []string
	if cwd != "" {
		if ws := r.findWorkspace(cwd); ws != "" {
			set[filepath.Join(ws, storewatch.StoreDir)] = true
		}
		roots = append(roots, cwd)
	}
	stores := make([]string, 0, len(set))
	var added []string
	r.mu.Lock()
	for s := range set {
		stores = append(stores, s)
		if !r.watching[s] {
			added = append(added, s)
		}
	}
	sort.Strings(stores)
	key := strings.Join(roots, "\x00") + "\x00\x00" + strings.Join(stores, "\x00")
	same := key == r.watchKey
	r.watchKey, r.watching = key, set
	r.mu.Unlock()
	if !same {
		r.watch.Watch(stores, roots)
	}
	return added
}

// findWorkspace is the folder whose store records the files of dir (the nearest
// store above it), or "".
func (r *reviewer) findWorkspace(dir string) string {
	ws, err := history.Find(dir)
	if err != nil {
		return ""
	}
	return ws
}

// storeOf opens the store of a workspace folder, once for as long as it is there: a
// store made after .mcp was removed is another store, opened anew.
func (r *reviewer) storeOf(ws string) *history.Store {
	if ws == "" {
		return nil
	}
	r.mu.Lock()
	s := r.stores[ws]
	r.mu.Unlock()
	if s != nil && s.Current() {
		return s
	}
	root, err := workspace.OpenRoot(ws)
	if err == nil {
		s, err = history.OpenExisting(root)
	}
	if err != nil {
		if !errors.Is(err, history.ErrNoStore) {
			r.logf("open the edit history of %s: %v", ws, err)
		}
		return nil
	}
	r.mu.Lock()
	r.stores[ws] = s
	r.mu.Unlock()
	return s
}

// changes answers the mcpdiff_changes request: the pending changes of one file. It
// reads the store and never calls back into Neovim.
func (r *reviewer) changes(name string) ([]map[string]any, error) {
	real := realPath(name)
	s := r.storeOf(r.findWorkspace(filepath.Dir(real)))
	if s == nil {
		return []map[string]any{}, nil
	}
	hs, err := s.PendingChanges(real)
	if err != nil {
		return nil, err
	}
	return luaPending(hs), nil
}

// pending answers the mcpdiff_pending request: every pending change of the store
// that records files under dir (the quickfix list), by file.
func (r *reviewer) pending(dir string) ([]map[string]any, error) {
	s := r.storeOf(r.findWorkspace(dir))
	out := []map[string]any{}
	if s == nil {
		return out, nil
	}
	all, err := s.AllPendingChanges()
	if err != nil {
		return nil, err
	}
	for path, hs := range all {
		out = append(out, map[string]any{"path": path, "changes": luaPending(hs)})
	}
	return out, nil
}

// list answers the mcpdiff_review request: the rows of the review list of the
// store that records files under dir.
// Its rows are kept until the watcher reports a change of any store (it watches the
// cwd's), so opening the list again costs no reading of the logs. What it says of
// the files themselves is worked out anew each time: a file changed outside
// mcpdiff changes no store file, so a kept list would hide it.
func (r *reviewer) list(dir string) (*reviewlist.List, error) {
	r.mu.Lock()
	cached := r.lists[dir]
	r.mu.Unlock()
	if cached != nil {
		return reviewlist.WithFreshInfo(cached, dir)
	}
	s := r.storeOf(r.findWorkspace(dir))
	if s == nil {
		return reviewlist.NoHistory(dir), nil
	}
	l, err := reviewlist.Build(s, dir)
	if err == nil && r.watch != nil && r.isWatched(s.Workspace()) {
		r.mu.Lock()
		r.lists[dir] = l
		r.mu.Unlock()
	}
	return l, err
}

// isWatched reports whether the watcher follows the store of workspace ws.
func (r *reviewer) isWatched(ws string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watching[filepath.Join(ws, storewatch.StoreDir)]
}

// saved is the mcpdiff_saved notification: Neovim wrote path (a file buffer's
// :w), which then had the size and modification time given. A file with a history
// gets the save recorded as the user's own edit (history.RecordUserSave), off
// Neovim's RPC loop.
func (r *reviewer) saved(path string, size, sec, nsec int64) {
	real := realPath(path)
	s := r.storeOf(r.findWorkspace(filepath.Dir(real)))
	if s == nil {
		return
	}
	still := func(fi fs.FileInfo) bool {
		return fi.Size() == size && fi.ModTime().Unix() == sec && int64(fi.ModTime().Nanosecond()) == nsec
	}
	go func() {
		ctx, cancel := context.WithTimeout(r.life, 30*time.Second)
		defer cancel()
		if err := s.RecordUserSave(ctx, real, still); err != nil && r.life.Err() == nil {
			r.logf("record the save of %s in the edit history: %v", real, err)
		}
	}()
}

// luaPending is what hunks() returns in Lua: mcpdiff.PendingChange.
func luaPending(hs []history.PendingChange) []map[string]any {
	out := make([]map[string]any, 0, len(hs))
	for _, h := range hs {
		m := luaChange(h)
		m["start_line"], m["end_line"] = h.Start, h.End
		if h.Kind == history.KindDelete {
			m["after_line"] = h.Removed
		}
		if len(h.Beneath) > 0 {
			beneath := make([]map[string]any, len(h.Beneath))
			for i, b := range h.Beneath {
				beneath[i] = luaChange(b)
			}
			m["beneath"] = beneath
		}
		out = append(out, m)
	}
	return out
}

// luaChange is what Lua gets of a pending change wherever it lies (mcpdiff.EditChange):
// its edit and what it did.
func luaChange(h history.PendingChange) map[string]any {
	old := make([]string, len(h.Old))
	for i, l := range h.Old {
		old[i] = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	}
	return map[string]any{
		"edit_id": h.EditID, "conversation_id": h.ConversationID, "title": h.Title, "tool": h.ToolName, "time": h.Timestamp,
		"block": h.Block + 1, "kind": h.Kind, "old_lines": old,
	}
}

// workspaceOf is the workspace folder of a store folder.
func workspaceOf(store string) string {
	return filepath.Dir(filepath.Dir(store))
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(d, filepath.Base(p))
	}
	return p
}
