package history

import (
	"context"
	"errors"
	"io/fs"
)

// RecordUserSave records a file the user saved in their editor: when path
// (absolute) has a history and no longer holds its last recorded state, the change
// is the user's own edit, logged as an accepted entry of source "user" in a
// conversation of its own. Without it the change would show as made outside
// mcpdiff, and a decision would offer to discard it. A file without history, or
// one that holds its recorded state, is left alone.
//
// still, when not nil, is asked under the store's lock whether the file is still
// the one saved (a stat of it): a file written again since, by anyone, is not the
// user's save and is left to be found as a change made outside mcpdiff.
func (s *Store) RecordUserSave(ctx context.Context, path string, still func(fs.FileInfo) bool) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	h, err := s.heads.get(path)
	if err != nil || h == nil {
		return err
	}
	rel, err := s.relPath(path)
	if err != nil {
		return err
	}
	fi, err := s.workspace.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // saved, then removed: not a save to record
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || (still != nil && !still(fi)) {
		return nil
	}
	content, _, err := s.workspace.ReadFile(rel, s.maxFile)
	if err != nil {
		return err
	}
	saved := Change{Op: Edit, Path: path, Before: content, BeforeExists: true, beforeHash: hashBytes(content)}
	return s.recordOutsideChanges([]Change{saved}, SourceUser)
}
