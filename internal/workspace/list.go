package workspace

import (
	"cmp"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
)

// Entry is one listed file or folder.
type Entry struct {
	Rel       string // relative to the listed folder, slash-separated
	IsDir     bool
	IsSymlink bool // a symlink is listed as itself (IsDir false) and never entered
}

// List lists a folder (recursively if asked), sorted, without the history store.
// See ListLimit for the order and what is left out.
func (r *Root) List(rel string, recursive bool) ([]Entry, error) {
	entries, _, err := r.ListLimit(rel, recursive, 0)
	return entries, err
}

// ListLimit is List returning at most limit entries (limit <= 0: all) and the number
// of entries left out, for the caller to say "(N more entries not shown)".
//
// Order: depth first, each folder's entries sorted by name, a folder followed by its
// contents. Symlinks are listed but never entered, even when they point to a folder,
// so a listing cannot wander out of the root or loop. A subfolder that cannot be
// read (permissions) is listed but not entered. The history store is never shown.
func (r *Root) ListLimit(rel string, recursive bool, limit int) (entries []Entry, more int, err error) {
	rel = filepath.Clean(rel)
	if inHistoryStore(rel) {
		return nil, 0, newError(ErrHistoryStore, rel, nil,
			"cannot list %q: it is inside mcpdiff's private edit history; use the mcpdiff CLI instead", rel)
	}
	info, err := r.dir.Stat(rel)
	if err != nil {
		return nil, 0, osError("list", rel, r, err)
	}
	if !info.IsDir() {
		return nil, 0, newError(ErrNotDir, rel, nil, "cannot list %q: it is %s, not a folder; read it instead", rel, describeKind(info.Mode()))
	}
	top, err := r.readDir(rel)
	if err != nil {
		return nil, 0, osError("list", rel, r, err)
	}
	l := lister{root: r, recursive: recursive, limit: limit}
	l.walk(rel, "", top)
	return l.entries, l.more, nil
}

// lister collects the entries of one ListLimit call.
type lister struct {
	root      *Root
	recursive bool
	limit     int
	entries   []Entry
	more      int
}

// onlyHoldsHistory reports whether d is a .mcp folder holding nothing but the
// history store (and the .gitignore the store writes beside it): listing it would
// show a folder the agent did not make.
func (l *lister) onlyHoldsHistory(rel string, d fs.DirEntry) bool {
	if !d.IsDir() || filepath.Base(rel) != ".mcp" {
		return false
	}
	children, err := l.root.readDir(rel)
	if err != nil {
		return false
	}
	for _, c := range children {
		if !inHistoryStore(filepath.Join(rel, c.Name())) && c.Name() != ".gitignore" {
			return false
		}
	}
	return true
}

// walk adds the entries of the folder dirRel (relative to the root), naming them
// under prefix (relative to the listed folder).
func (l *lister) walk(dirRel, prefix string, list []fs.DirEntry) {
	for _, d := range list {
		childRel := filepath.Join(dirRel, d.Name())
		if inHistoryStore(childRel) || l.onlyHoldsHistory(childRel, d) {
			continue
		}
		shown := path.Join(prefix, d.Name())
		l.add(Entry{Rel: shown, IsDir: d.IsDir(), IsSymlink: d.Type()&fs.ModeSymlink != 0})
		if !l.recursive || !d.IsDir() {
			continue
		}
		if children, err := l.root.readDir(childRel); err == nil {
			l.walk(childRel, shown, children)
		}
	}
}

func (l *lister) add(e Entry) {
	if l.limit > 0 && len(l.entries) >= l.limit {
		l.more++
		return
	}
	l.entries = append(l.entries, e)
}

// readDir reads a folder's entries sorted by name. os.Root.Open refuses a folder
// that was swapped for a symlink leading out of the root.
func (r *Root) readDir(rel string) ([]fs.DirEntry, error) {
	dir, err := r.dir.Open(rel)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	list, err := dir.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(list, func(a, b fs.DirEntry) int { return cmp.Compare(a.Name(), b.Name()) })
	return list, nil
}
