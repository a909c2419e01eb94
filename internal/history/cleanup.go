package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Cleanup drops the logs, diffs and checkpoints of conversations that are fully
// resolved (no pending edit) and whose last edit is older than olderThan.
//
// A later conversation's edits are replayed from the earliest checkpoint of their
// file, so a resolved conversation can only go when nothing still needs its steps:
// either every conversation that touched the same files goes too, or it lies wholly
// before the kept ones (a prefix) and at that point the file already is what the
// decisions want (every reject was carried out), so the replay can start at the first
// kept conversation's own checkpoint instead. See cleanupPlan.
//
// It is carried out through the journal (journal.go); until it is done, readers
// ignore what it drops.
func (s *Store) Cleanup(ctx context.Context, olderThan time.Duration) (dropped, kept []string, err error) {
	return s.cleanupOlder(ctx, olderThan, true)
}

// CleanupPreview is what Cleanup would drop and keep now, dropping nothing.
func (s *Store) CleanupPreview(ctx context.Context, olderThan time.Duration) (dropped, kept []string, err error) {
	return s.cleanupOlder(ctx, olderThan, false)
}

func (s *Store) cleanupOlder(ctx context.Context, olderThan time.Duration, apply bool) (dropped, kept []string, err error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	snap, err := s.load()
	if err == nil {
		err = snap.whole()
	}
	if err != nil {
		return nil, nil, err
	}
	cutoff := time.Now().Add(-olderThan)
	candidate := map[string]bool{}
	for conv, entries := range byConversation(snap.entries) {
		candidate[conv] = resolvedBefore(entries, cutoff)
	}
	// An invalid entry is never decided, so it does not keep its conversation: that
	// goes once the rest of it is resolved (and it is old enough).
	for conv, entries := range byConversation(snap.invalid) {
		valid, known := candidate[conv]
		candidate[conv] = (valid || !known) && before(entries, cutoff)
	}
	all, owner := lineages(snap)
	plan := s.cleanupPlan(all, snap, copyBools(candidate), true)
	if !plan.keepsFiles(all, owner, snap) {
		plan = s.cleanupPlan(all, snap, candidate, false)
		if !plan.keepsFiles(all, owner, snap) {
			plan = &cleanup{convs: map[string]bool{}}
		}
	}
	for conv := range candidate {
		if plan.convs[conv] {
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
	if !apply {
		return dropped, kept, nil
	}
	if err := s.commitCleanup(&dropSet{Conversations: dropped, Markers: plan.markers}, plan.forget(all), plan.checkpoints); err != nil {
		return nil, nil, err
	}
	return dropped, kept, nil
}

// cleanup is what Cleanup drops, and the checkpoints it writes for the replays that
// start after a dropped prefix.
type cleanup struct {
	convs       map[string]bool   // conversation → dropped
	markers     map[int64]bool    // rebuild markers dropped, by seq
	checkpoints map[string][]byte // store file → content
}

func (plan *cleanup) drops(st *step) bool {
	if st.entry != nil {
		return plan.convs[st.entry.ConversationID]
	}
	return plan.markers[st.seq]
}

// cleanupPlan shrinks the candidates until every lineage is wholly dropped, wholly
// kept, or (with prefixes) dropped up to a clean cut: the first step of a kept
// conversation, with no dropped step after it.
func (s *Store) cleanupPlan(all []*lineage, snap *snapshot, candidate map[string]bool, prefixes bool) *cleanup {
	cuts := map[*lineage]int{}
	chkpts := map[*lineage][]byte{}
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
			ok, chkpt := false, []byte(nil)
			if prefixes {
				ok, chkpt = s.cleanCut(l, c, snap)
			}
			if !ok {
				for _, st := range l.steps[:c] {
					keep(st)
				}
				continue
			}
			cuts[l], chkpts[l] = c, chkpt
		}
	}
	plan := &cleanup{convs: candidate, markers: map[int64]bool{}, checkpoints: map[string][]byte{}}
	for _, l := range all {
		c, partly := cuts[l]
		if b := chkpts[l]; partly && b != nil {
			next := l.steps[c]
			plan.checkpoints[s.checkpointName(next.entry.ConversationID, next.from())+".chkpt"] = b
		}
		if !partly {
			if !lineageDroppable(l, candidate) {
				continue
			}
			c = len(l.steps)
		}
		for _, st := range l.steps[:c] {
			if st.marker != nil {
				plan.markers[st.seq] = true
			}
		}
	}
	return plan
}

// cleanCut reports whether the steps of l before index c can be forgotten: there the
// file is what the decisions want (no reject left undone), and the replay can start
// at step c from its conversation's checkpoint. A conversation that went on from the
// history instead of taking a checkpoint gets one: chkpt is its content.
func (s *Store) cleanCut(l *lineage, c int, snap *snapshot) (ok bool, chkpt []byte) {
	p := &replayer{store: s, status: currentStatus}
	if p.start(l, snap) != nil {
		return false, nil
	}
	for _, st := range l.steps[:c] {
		if p.apply(st) != nil {
			return false, nil
		}
	}
	next := l.steps[c]
	if len(p.regions) > 0 || len(p.conflicts) > 0 || !sameFile(p.S, p.R) || next.from() != p.R.path || next.existsBefore() != p.R.exists {
		return false, nil
	}
	if !next.existsBefore() {
		return true, nil
	}
	b, err := s.checkpointFor(next, snap)
	if errors.Is(err, errNoCheckpoint) {
		return true, p.R.content()
	}
	return err == nil && string(b) == string(p.R.content()), nil
}

// keepsFiles reports whether the steps the plan keeps still group into the same
// files, and every path still belongs to the same file, as before: a dropped move
// could otherwise hand a path to another file's history.
func (plan *cleanup) keepsFiles(all []*lineage, owner map[string]*lineage, snap *snapshot) bool {
	pruned := &snapshot{}
	for _, e := range snap.entries {
		if !plan.convs[e.ConversationID] {
			pruned.entries = append(pruned.entries, e)
		}
	}
	for _, m := range snap.markers {
		if !plan.markers[m.Seq] {
			pruned.markers = append(pruned.markers, m)
		}
	}
	key := func(st *step) string {
		if st.entry != nil {
			return st.entry.EditID
		}
		return fmt.Sprint("marker ", st.seq)
	}
	firstKept := func(l *lineage) string {
		if l != nil {
			for _, st := range l.steps {
				if !plan.drops(st) {
					return key(st)
				}
			}
		}
		return ""
	}
	group := func(ls []*lineage) map[string]string { // kept step → its file's first kept step
		out := map[string]string{}
		for _, l := range ls {
			first := firstKept(l)
			for _, st := range l.steps {
				if !plan.drops(st) {
					out[key(st)] = first
				}
			}
		}
		return out
	}
	after, ownerAfter := lineages(pruned)
	before, now := group(all), group(after)
	if len(before) != len(now) {
		return false
	}
	for k, first := range before {
		if now[k] != first {
			return false
		}
	}
	for path, l := range owner {
		if firstKept(l) != firstKept(ownerAfter[path]) {
			return false
		}
	}
	for path, l := range ownerAfter {
		if firstKept(l) != firstKept(owner[path]) {
			return false
		}
	}
	return true
}

// forget lists the paths only dropped steps touched: their heads can go too.
func (plan *cleanup) forget(all []*lineage) []string {
	dropped, kept := map[string]bool{}, map[string]bool{}
	for _, l := range all {
		for _, st := range l.steps {
			m := kept
			if plan.drops(st) {
				m = dropped
			}
			m[st.from()], m[st.to()] = true, true
		}
	}
	var out []string
	for p := range dropped {
		if !kept[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// commitCleanup removes what drop names, and the heads of the paths in forget, and
// writes checkpoints (store file → content), through the journal. Called with the
// lock held.
func (s *Store) commitCleanup(drop *dropSet, forget []string, checkpoints map[string][]byte) error {
	j, err := s.cleanupJournal(drop, forget, checkpoints)
	if err == nil {
		_, err = j.commit()
	}
	return err
}

// cleanupJournal stages a cleanup: rebuilds.log and heads.log are rewritten without
// what it drops, then the conversations' logs, diffs and checkpoints are removed.
func (s *Store) cleanupJournal(drop *dropSet, forget []string, checkpoints map[string][]byte) (*journal, error) {
	j := s.newJournal(fmt.Sprintf("cleanup of %d conversation(s)", len(drop.Conversations)))
	j.p.Drop = drop
	names := make([]string, 0, len(checkpoints))
	for name := range checkpoints {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		j.putStore(name, nil, checkpoints[name])
	}
	var removes []string
	if len(drop.Markers) > 0 {
		old, err := s.files.readFile("rebuilds.log")
		if err != nil {
			return nil, err
		}
		markers, _, err := s.files.readMarkers("rebuilds.log")
		if err != nil {
			return nil, err
		}
		var buf []byte
		for _, m := range markers {
			if !drop.Markers[m.Seq] {
				line, err := jsonLine(m)
				if err != nil {
					return nil, err
				}
				buf = append(buf, line...)
			} else if m.DiffFile != nil && strings.HasPrefix(*m.DiffFile, "rebuilds/") && filepath.IsLocal(*m.DiffFile) {
				removes = append(removes, *m.DiffFile)
			}
		}
		j.putStore("rebuilds.log", &old, buf)
	}
	if len(forget) > 0 {
		paths := map[string]bool{}
		for _, p := range forget {
			paths[p] = true
		}
		newLog, old, err := s.heads.without(paths)
		if err != nil {
			return nil, err
		}
		j.putStore(headsLog, old, newLog)
	}
	var logs, folders []string
	for _, conv := range drop.Conversations {
		if ValidConversationID(conv) { // never a path outside the conversation's own folders
			logs = append(logs, "logs/"+conv+".log")
			folders = append(folders, "diffs/"+conv, "checkpoints/"+conv)
		}
	}
	// Logs first: a conversation whose log is gone is gone, whatever else is left.
	j.p.Removes = append(append(logs, folders...), removes...)
	return j, nil
}

// legacyCleanup is where mcpdiff before the journal kept a cleanup in progress.
const legacyCleanup = "cleanup.json"

// recoverLegacyCleanup finishes a cleanup such an mcpdiff was killed in.
func (s *Store) recoverLegacyCleanup() error {
	b, err := s.files.root.ReadFile(legacyCleanup)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var p struct {
		Conversations []string       `json:"conversations"`
		Markers       map[int64]bool `json:"markers"`
		Forget        []string       `json:"forget"`
	}
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		return fmt.Errorf("read %s (an interrupted cleanup): %w", s.files.abs(legacyCleanup), err)
	}
	if err := s.commitCleanup(&dropSet{Conversations: p.Conversations, Markers: p.Markers}, p.Forget, nil); err != nil {
		return err
	}
	if err := s.files.root.Remove(legacyCleanup); err != nil {
		return s.files.fail("remove", legacyCleanup, err)
	}
	return nil
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
	}
	return before(entries, cutoff)
}

// before reports whether every entry was recorded before cutoff.
func before(entries []*Entry, cutoff time.Time) bool {
	for _, e := range entries {
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

func copyBools(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
