package history

import (
	"context"
	"errors"
	"fmt"
)

// Restoration is what Restore found, and did.
type Restoration struct {
	// Diff is the file's change since its recorded state (recorded → disk): what
	// restoring discards. Empty when the file holds its recorded state.
	Diff     string
	Files    []string // files written (rewritten, created or removed)
	Warnings []string // what recovering an interrupted decision found; corrupted log lines
}

// ErrNoHistory means a file has no recorded state to restore.
var ErrNoHistory = errors.New("no recorded edits")

// Restore puts back the bytes the history says path (absolute) holds, discarding
// whatever changed it since its last recorded state; without apply it only says
// what that would discard. No status changes: the file goes back to what its
// decisions left. It is carried out through the journal, like a decision.
func (s *Store) Restore(ctx context.Context, path string, apply bool) (*Restoration, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	out := &Restoration{Warnings: s.takeNotes()}
	snap, err := s.load()
	if err != nil {
		return out, err
	}
	out.Warnings = append(out.Warnings, snap.warnings...)
	ls := touchedLineages(snap, nil, nil, path)
	if len(ls) == 0 {
		return out, fmt.Errorf("%w of %s: it has no recorded state to restore (see `mcpdiff status`)", ErrNoHistory, path)
	}
	none := map[string]verdict{}
	_, err = s.rebuilds(snap, ls, none, currentStatus, false)
	var changed *ExternalChangeError
	if !errors.As(err, &changed) {
		return out, err // nil: the file holds its recorded state
	}
	for _, d := range changed.Drifts {
		out.Diff += d.Diff
	}
	if !apply {
		return out, nil
	}
	plan, err := s.rebuilds(snap, ls, none, currentStatus, true)
	if err != nil {
		return out, err
	}
	j := s.newJournal("restore of " + s.rel(path))
	if err := s.stageDecision(j, snap, none, plan); err != nil {
		return out, err
	}
	var files []string
	for _, f := range plan {
		files = append(files, f.written()...)
	}
	if err := s.askGuard(files); err != nil {
		return out, err
	}
	notes, err := j.commit()
	out.Warnings = append(out.Warnings, notes...)
	if err != nil {
		return out, err
	}
	out.Files = files
	return out, nil
}
