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
// resolved (no pending edit) and whose last edit is older than olderThan.
//
// A later conversation's edits are replayed from the earliest checkpoint of their
// file, so a resolved conversation can only go when nothing still needs its steps:
// either every conversation that touched the same files goes too, or it lies wholly
// before the kept ones (a prefix) and at that point the file already is what the
// decisions want (every reject was carried out), so the replay can start at the first
// kept conversation's own checkpoint instead. See cleanupPlan.
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
	plan := s.cleanupPlan(all, snap, copyBools(candidate), true)
	if !plan.keepsLineages(all, snap) {
		plan = s.cleanupPlan(all, snap, candidate, false)
	}
	for conv, ok := range plan.convs {
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
	if err := s.dropMarkers(plan.markers); err != nil {
		return nil, nil, err
	}
	if err := s.heads.forgetAll(plan.forget); err != nil {
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

// cleanup is what Cleanup drops.
type cleanup struct {
	convs   map[string]bool   // conversation → dropped
	markers map[int64]*Marker // rebuild markers dropped, by seq
	forget  map[string]bool   // paths no conversation tracks any more
}

// cleanupPlan shrinks the candidates until every lineage is wholly dropped, wholly
// kept, or (with prefixes) dropped up to a clean cut: the first step of a kept
// conversation, with no dropped step after it.
func (s *Store) cleanupPlan(all []*lineage, snap *snapshot, candidate map[string]bool, prefixes bool) *cleanup {
	cuts := map[*lineage]int{}
	for changed := true; changed; {
		changed = false
		keep := func(st *step) {
			if st.entry != nil && candidate[st.entry.ConversationID] {
				candidate[st.entry.ConversationID] = false
				changed = true
			}
		}
		for _, l := range all {
			delete(cuts, l)
			c := 0
			for c < len(l.steps) && (l.steps[c].entry == nil || candidate[l.steps[c].entry.ConversationID]) {
				c++
			}
			if c == len(l.steps) {
				continue // wholly dropped
			}
			for _, st := range l.steps[c:] {
				keep(st)
			}
			if c == 0 || changed {
				continue
			}
			if !prefixes || !s.cleanCut(l, c, snap) {
				for _, st := range l.steps[:c] {
					keep(st)
				}
				continue
			}
			cuts[l] = c
		}
	}
	plan := &cleanup{convs: candidate, markers: map[int64]*Marker{}, forget: map[string]bool{}}
	for _, l := range all {
		c, partly := cuts[l]
		if !partly {
			if !lineageDroppable(l, candidate) {
				continue
			}
			c = len(l.steps)
			for _, st := range l.steps {
				plan.forget[st.from()], plan.forget[st.to()] = true, true
			}
		}
		for _, st := range l.steps[:c] {
			if st.marker != nil {
				plan.markers[st.seq] = st.marker
			}
		}
	}
	return plan
}

// cleanCut reports whether the steps of l before index c can be forgotten: there the
// file is what the decisions want (no reject left undone), and the replay can start
// at step c from its conversation's checkpoint.
func (s *Store) cleanCut(l *lineage, c int, snap *snapshot) bool {
	p := &replayer{store: s, status: func(e *Entry) Status { return e.Status }}
	if p.start(l, snap) != nil {
		return false
	}
	for _, st := range l.steps[:c] {
		if p.apply(st) != nil {
			return false
		}
	}
	next := l.steps[c]
	if len(p.regions) > 0 || !sameFile(p.S, p.R) || next.from() != p.R.path || next.existsBefore() != p.R.exists {
		return false
	}
	if !next.existsBefore() {
		return true
	}
	b, err := s.checkpointFor(next, snap)
	return err == nil && string(b) == string(p.R.content())
}

// keepsLineages reports whether the steps the plan keeps still group into the same
// files as before (a dropped move could otherwise hand a path to another file).
func (plan *cleanup) keepsLineages(all []*lineage, snap *snapshot) bool {
	pruned := &snapshot{}
	for _, e := range snap.entries {
		if !plan.convs[e.ConversationID] {
			pruned.entries = append(pruned.entries, e)
		}
	}
	for _, m := range snap.markers {
		if plan.markers[m.Seq] == nil {
			pruned.markers = append(pruned.markers, m)
		}
	}
	key := func(st *step) string {
		if st.entry != nil {
			return st.entry.EditID
		}
		return fmt.Sprint("marker ", st.seq)
	}
	group := func(ls []*lineage) map[string]string { // kept step → its lineage's first kept step
		out := map[string]string{}
		for _, l := range ls {
			first := ""
			for _, st := range l.steps {
				if (st.entry != nil && plan.convs[st.entry.ConversationID]) || (st.marker != nil && plan.markers[st.seq] != nil) {
					continue
				}
				if first == "" {
					first = key(st)
				}
				out[key(st)] = first
			}
		}
		return out
	}
	after, _ := lineages(pruned)
	before, now := group(all), group(after)
	if len(before) != len(now) {
		return false
	}
	for k, first := range before {
		if now[k] != first {
			return false
		}
	}
	return true
}

func copyBools(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
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

// dropMarkers rewrites rebuilds.log without the dropped markers.
func (s *Store) dropMarkers(drop map[int64]*Marker) error {
	if len(drop) == 0 {
		return nil
	}
	for _, m := range drop {
		if m.DiffFile != nil {
			_ = s.files.root.Remove(*m.DiffFile)
		}
	}
	markers, _, err := s.files.readMarkers("rebuilds.log")
	if err != nil {
		return err
	}
	var buf []byte
	for _, m := range markers {
		if drop[m.Seq] != nil {
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
