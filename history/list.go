package history

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Filter narrows a listing; zero fields match everything.
type Filter struct {
	Conversation string
	File         string // absolute; matches the file or the source of a move
	Status       Status
}

// Listing is the result of List.
type Listing struct {
	Entries  []*Entry // in recorded order
	Warnings []string // corrupted log lines that were skipped
}

// List returns the recorded entries matching f. It takes no lock, so it also works
// on a read-only workspace.
func (s *Store) List(f Filter) (*Listing, error) {
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	out := &Listing{Warnings: snap.warnings}
	for _, e := range snap.entries {
		if f.Conversation != "" && e.ConversationID != f.Conversation {
			continue
		}
		if f.File != "" && e.FilePath != f.File && e.from() != f.File {
			continue
		}
		if f.Status != "" && e.Status != f.Status {
			continue
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}

// Resolve finds the entries an id names (see Lookup).
func (s *Store) Resolve(id string) ([]*Entry, error) {
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	return Lookup(snap.entries, id)
}

// Diff is the unified diff of one entry; a move is shown as git shows a rename.
func (s *Store) Diff(e *Entry) (string, error) {
	if e.Operation == Move {
		return fmt.Sprintf("rename from %s\nrename to %s\n", s.rel(e.from()), s.rel(e.FilePath)), nil
	}
	if e.DiffFile == nil {
		return "", nil
	}
	b, err := s.readStoreFile(*e.DiffFile)
	return string(b), err
}

// Rel is path relative to the workspace when it lies inside it.
func (s *Store) Rel(path string) string { return s.rel(path) }

// Cleanup drops the logs, diffs and checkpoints of conversations that are fully
// resolved (no pending edit) and whose last edit is older than olderThan. A
// conversation is only dropped together with every other conversation that touched
// the same files: a later conversation's edits are replayed from the earlier ones'
// checkpoints, so dropping only the earlier ones could bring a rejected edit back.
func (s *Store) Cleanup(ctx context.Context, olderThan time.Duration) (dropped, kept []string, err error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	snap, err := s.load()
	if err != nil {
		return nil, nil, err
	}
	cutoff := time.Now().Add(-olderThan)
	candidate := map[string]bool{}
	for conv, entries := range byConversation(snap.entries) {
		candidate[conv] = resolvedBefore(entries, cutoff)
	}
	all, _ := lineages(snap)
	// Shrink the candidates until every lineage is either wholly dropped or wholly kept.
	for changed := true; changed; {
		changed = false
		for _, l := range all {
			if lineageDroppable(l, candidate) {
				continue
			}
			for _, st := range l.steps {
				if st.entry != nil && candidate[st.entry.ConversationID] {
					candidate[st.entry.ConversationID] = false
					changed = true
				}
			}
		}
	}
	for conv, ok := range candidate {
		if ok {
			dropped = append(dropped, conv)
		} else {
			kept = append(kept, conv)
		}
	}
	sort.Strings(dropped)
	sort.Strings(kept)
	if len(dropped) == 0 {
		return nil, kept, nil
	}
	if err := s.dropMarkers(all, candidate); err != nil {
		return nil, nil, err
	}
	forget := map[string]bool{}
	for _, l := range all {
		if lineageDroppable(l, candidate) {
			for _, st := range l.steps {
				forget[st.from()], forget[st.to()] = true, true
			}
		}
	}
	if err := s.heads.forgetAll(forget); err != nil {
		return nil, nil, err
	}
	*s.known = *newKnownFiles()
	for _, conv := range dropped {
		for _, p := range []string{"logs/" + conv + ".log", "diffs/" + conv, "checkpoints/" + conv} {
			if err := s.files.root.RemoveAll(p); err != nil {
				return dropped, kept, fmt.Errorf("cleanup %s: %w", conv, err)
			}
		}
	}
	return dropped, kept, nil
}

func byConversation(entries []*Entry) map[string][]*Entry {
	out := map[string][]*Entry{}
	for _, e := range entries {
		out[e.ConversationID] = append(out[e.ConversationID], e)
	}
	return out
}

// resolvedBefore reports whether no entry is pending and the newest is before cutoff.
func resolvedBefore(entries []*Entry, cutoff time.Time) bool {
	for _, e := range entries {
		if e.Status == Pending {
			return false
		}
		t, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil || t.After(cutoff) {
			return false
		}
	}
	return true
}

func lineageDroppable(l *lineage, candidate map[string]bool) bool {
	for _, st := range l.steps {
		if st.entry != nil && !candidate[st.entry.ConversationID] {
			return false
		}
	}
	return true
}

// dropMarkers rewrites rebuilds.log without the markers of dropped lineages.
func (s *Store) dropMarkers(all []*lineage, candidate map[string]bool) error {
	drop := map[int64]bool{}
	for _, l := range all {
		if !lineageDroppable(l, candidate) {
			continue
		}
		for _, st := range l.steps {
			if st.marker != nil {
				drop[st.seq] = true
				if st.marker.DiffFile != nil {
					_ = s.files.root.Remove(*st.marker.DiffFile)
				}
			}
		}
	}
	if len(drop) == 0 {
		return nil
	}
	markers, _, err := s.files.readMarkers("rebuilds.log")
	if err != nil {
		return err
	}
	var buf []byte
	for _, m := range markers {
		if drop[m.Seq] {
			continue
		}
		line, err := jsonLine(m)
		if err != nil {
			return err
		}
		buf = append(buf, line...)
	}
	return s.files.writeAtomic("rebuilds.log", buf)
}
