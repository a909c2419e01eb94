package history

import (
	"context"
	"sync"
)

// DiffRecorder records diffs the user accepted in the editor (Claude Code's
// openDiff) with source "ide", as accepted: the user decided already (Claude Code
// writes those files itself; the recorder only logs the change, with the bytes
// written, and Claude Code's hook leaves that write to it: ide.Server.ClaimWrites).
// A file's change goes to the nearest store above it — where `mcpdiff status` run
// there finds it — or, when there is none, to a new store in the innermost
// workspace folder holding the file. Files outside both are not recorded.
type DiffRecorder struct {
	folders []string
	mu      sync.Mutex
	stores  map[string]*Store // folder → store, opened on first use
}

// NewDiffRecorder records changes to files inside folders (the editor's workspace
// folders); changes elsewhere are not recorded.
func NewDiffRecorder(folders []string) *DiffRecorder {
	return &DiffRecorder{folders: folders, stores: map[string]*Store{}}
}

// SetFolders changes the workspace folders (the editor changed directory).
func (r *DiffRecorder) SetFolders(folders []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.folders = folders
}

// RecordAccepted logs, as accepted, that path went from before (existed=false: it
// did not exist) to after in conversation conv. The file is already on disk.
// recorded is false for a file outside the workspace folders and every store.
func (r *DiffRecorder) RecordAccepted(conv, path string, before []byte, existed bool, after []byte) (recorded bool, err error) {
	store, abs, err := r.storeFor(path)
	if err != nil || store == nil {
		return false, err
	}
	op := Edit
	if !existed {
		op = Create
	}
	_, err = store.Record(context.Background(), Commit{
		Conversation: conv, Tool: "openDiff", Source: SourceIDE,
		Changes: []Change{{Op: op, Path: abs, Before: before, BeforeExists: existed, After: after}},
		Status:  Accepted,
	})
	return err == nil, err
}

// storeFor finds the store path's change goes to (see DiffRecorder).
func (r *DiffRecorder) storeFor(path string) (*Store, string, error) {
	abs := RealPath(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	best := StoreFolder(abs, r.folders)
	if best == "" {
		return nil, "", nil // outside the workspace and any store: nothing to record into
	}
	if s, ok := r.stores[best]; ok && s.Current() { // else .mcp was removed: open the new one
		return s, abs, nil
	}
	s, err := OpenFolder(best)
	if err != nil {
		return nil, "", err
	}
	r.stores[best] = s
	return s, abs, nil
}
