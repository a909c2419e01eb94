package history

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpdiff/mcpdiff/workspace"
)

// EditorRecorder records diffs the user accepted in the editor (Claude Code's
// openDiff) with source "ide" (Claude Code writes those files itself; the recorder
// only logs the change). A file's change goes to the nearest store above it — where
// `mcpdiff status` run there finds it — or, when there is none, to a new store in the
// innermost workspace folder holding the file. Files outside both are not recorded.
type EditorRecorder struct {
	folders []string
	mu      sync.Mutex
	stores  map[string]*Store // folder → store, opened on first use
}

// NewEditorRecorder records changes to files inside folders (the editor's workspace
// folders); changes elsewhere are not recorded.
func NewEditorRecorder(folders []string) *EditorRecorder {
	return &EditorRecorder{folders: folders, stores: map[string]*Store{}}
}

// SetFolders changes the workspace folders (the editor changed directory).
func (r *EditorRecorder) SetFolders(folders []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.folders = folders
}

// RecordAccepted logs that path went from before (existed=false: it did not exist)
// to after in conversation conv. The file is already on disk.
func (r *EditorRecorder) RecordAccepted(conv, path string, before []byte, existed bool, after []byte) error {
	store, abs, err := r.storeFor(path)
	if err != nil || store == nil {
		return err
	}
	op := Edit
	if !existed {
		op = Create
	}
	_, err = store.Record(context.Background(), Commit{
		Conversation: conv, Tool: "openDiff", Source: SourceIDE,
		Changes: []Change{{Op: op, Path: abs, Before: before, BeforeExists: existed, After: after}},
	})
	return err
}

// storeFor finds the store path's change goes to (see EditorRecorder).
func (r *EditorRecorder) storeFor(path string) (*Store, string, error) {
	abs := realPath(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	best, err := Find(filepath.Dir(abs))
	if err != nil {
		best = ""
		for _, f := range r.folders {
			f = realPath(f)
			if (abs == f || strings.HasPrefix(abs, f+string(filepath.Separator))) && len(f) > len(best) {
				best = f
			}
		}
	}
	if best == "" {
		return nil, "", nil // outside the workspace and any store: nothing to record into
	}
	if s, ok := r.stores[best]; ok {
		return s, abs, nil
	}
	root, err := workspace.OpenRoot(best)
	if err != nil {
		return nil, "", fmt.Errorf("open workspace %s: %w", best, err)
	}
	s, err := Open(root)
	if err != nil {
		return nil, "", err
	}
	r.stores[best] = s
	return s, abs, nil
}

// realPath resolves symlinks in path (or in its folder, for a file not there yet).
func realPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(d, filepath.Base(path))
	}
	return filepath.Clean(path)
}
