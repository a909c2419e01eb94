package history

import "time"

// A change Claude Code made can reach the history twice: through the IDE bridge (a
// diff accepted in the editor, recorded once the CLI wrote it) and through Claude
// Code's PostToolUse hook. The owner is the bridge: the hook asks it first and does
// not record what it claims. Once only covers the hook that got no answer in time
// (a busy Neovim, a store locked for long) and so records the write too: whichever
// of the two records comes second finds its change already recorded and skips it.

// RecordOnceWithin is how recent a record of the very same change must be for a
// second record of it (Commit.Once) to be skipped: the two come within seconds.
const RecordOnceWithin = 2 * time.Minute

// dropRecorded returns the changes the history has not recorded yet, and the
// entries that recorded the others. A change is already recorded when its path's
// last recorded step, made within the last `within`, is a kept entry that took the
// file from the same bytes to the same bytes. Called with the lock held, after
// prepare.
func (s *Store) dropRecorded(changes []Change, within time.Duration) ([]Change, []*Entry, error) {
	var out []Change
	var recorded []*Entry
	var snap *snapshot
	for _, ch := range changes {
		e, err := s.recordedAlready(&ch, within, &snap)
		if err != nil {
			return nil, nil, err
		}
		if e == nil {
			out = append(out, ch)
		} else {
			recorded = append(recorded, e)
		}
	}
	return out, recorded, nil
}

// recordedAlready returns the entry that recorded ch, or nil.
func (s *Store) recordedAlready(ch *Change, within time.Duration, snap **snapshot) (*Entry, error) {
	if ch.Op == Delete || ch.Op == Move {
		return nil, nil
	}
	h, err := s.heads.get(ch.Path)
	if err != nil || h == nil || !h.Exists || h.Hash != ch.afterHash {
		return nil, err
	}
	// Sequence numbers are the clock in nanoseconds when they were handed out.
	if time.Since(time.Unix(0, h.Seq)) > within {
		return nil, nil
	}
	if *snap == nil {
		if *snap, err = s.load(); err != nil {
			return nil, err
		}
	}
	entries := (*snap).entries
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Seq != h.Seq {
			continue
		}
		sameBefore := (e.HashBefore != nil) == ch.BeforeExists && (!ch.BeforeExists || *e.HashBefore == ch.beforeHash)
		if e.FilePath == ch.Path && e.kept() && sameBefore {
			return e, nil
		}
		return nil, nil
	}
	return nil, nil // the head was set by an accept or reject: a new change
}

// acceptRecorded marks accepted those of entries that are pending: the second
// record of a change, as the user's decision (a diff accepted in the editor), wins
// over a first that recorded it as pending (the agent's hook). Called with the lock
// held.
func (s *Store) acceptRecorded(entries []*Entry) error {
	next := map[string]verdict{}
	var ids []string
	for _, e := range entries {
		if e.Status == Pending {
			next[e.EditID] = verdict{status: Accepted}
			ids = append(ids, e.EditID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	j := s.newJournal(describeDecision(Accepted, ids))
	if err := s.stageVerdicts(j, entries, next); err != nil {
		return err
	}
	_, err := j.commit()
	return err
}
