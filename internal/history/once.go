package history

import "time"

// A change Claude Code made can reach the history twice: through the IDE bridge (a
// diff accepted in the editor, recorded once the CLI wrote it) and through Claude
// Code's PostToolUse hook. Whichever records first wins; the other finds its change
// already recorded and skips it.

// RecordOnceWithin is how recent a record of the very same change must be for a
// second record of it (Commit.Once) to be skipped: the two come within seconds.
const RecordOnceWithin = 2 * time.Minute

// dropRecorded returns the changes the history has not recorded yet. A change is
// already recorded when its path's last recorded step, made within the last
// `within`, is a kept entry that took the file from the same bytes to the same
// bytes. Called with the lock held, after prepare.
func (s *Store) dropRecorded(changes []Change, within time.Duration) ([]Change, error) {
	var out []Change
	var snap *snapshot
	for _, ch := range changes {
		recorded, err := s.recordedAlready(&ch, within, &snap)
		if err != nil {
			return nil, err
		}
		if !recorded {
			out = append(out, ch)
		}
	}
	return out, nil
}

func (s *Store) recordedAlready(ch *Change, within time.Duration, snap **snapshot) (bool, error) {
	if ch.Op == Delete || ch.Op == Move {
		return false, nil
	}
	h, err := s.heads.get(ch.Path)
	if err != nil || h == nil || !h.Exists || h.Hash != ch.afterHash {
		return false, err
	}
	// Sequence numbers are the clock in nanoseconds when they were handed out.
	if time.Since(time.Unix(0, h.Seq)) > within {
		return false, nil
	}
	if *snap == nil {
		if *snap, err = s.load(); err != nil {
			return false, err
		}
	}
	entries := (*snap).entries
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Seq != h.Seq {
			continue
		}
		sameBefore := (e.HashBefore != nil) == ch.BeforeExists && (!ch.BeforeExists || *e.HashBefore == ch.beforeHash)
		return e.FilePath == ch.Path && e.kept() && sameBefore, nil
	}
	return false, nil // the head was set by an accept or reject: a new change
}
