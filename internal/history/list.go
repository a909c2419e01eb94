package history

import (
	"fmt"
	"sort"
	"strings"
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
	Drifts   []Drift  // files that differ from their recorded state (Review only)
	snap     *snapshot
}

// List returns the recorded entries matching f. It takes no lock, so it also works
// on a read-only workspace.
func (s *Store) List(f Filter) (*Listing, error) {
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	if f.Conversation, err = snap.conversationNamed(f.Conversation); err != nil {
		return nil, err
	}
	out := list(snap, f)
	if err := s.Foreign(); err != nil {
		out.Warnings = append([]string{err.Error()}, out.Warnings...)
	}
	return out, nil
}

// list lists the entries matching f, the invalid ones too, in recorded order.
func list(snap *snapshot, f Filter) *Listing {
	out := &Listing{Warnings: append(append([]string(nil), snap.warnings...), snap.invalidNotes...), snap: snap}
	all := snap.entries
	if len(snap.invalid) > 0 {
		all = append(append([]*Entry(nil), snap.entries...), snap.invalid...)
		sort.SliceStable(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	}
	for _, e := range all {
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
	return out
}

// Named finds the entries an id names (see Named), invalid ones too.
func (s *Store) Named(id string) ([]*Entry, error) {
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	return Named(list(snap, Filter{}).Entries, id)
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

// Counts is the number of lines an edit adds and removes: as recorded, or counted in
// its diff for entries of older stores.
func (s *Store) Counts(e *Entry) (added, removed int, err error) {
	if e.Added != nil && e.Removed != nil {
		return *e.Added, *e.Removed, nil
	}
	if e.DiffFile == nil {
		return 0, 0, nil
	}
	b, err := s.readStoreFile(*e.DiffFile)
	if err != nil {
		return 0, 0, err
	}
	added, removed = countLines(string(b))
	return added, removed, nil
}

// countLines counts the added and removed lines of a unified diff.
func countLines(diff string) (added, removed int) {
	inHunk := false
	for len(diff) > 0 {
		line := diff
		if i := strings.IndexByte(diff, '\n'); i >= 0 {
			line, diff = diff[:i], diff[i+1:]
		} else {
			diff = ""
		}
		switch {
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case !inHunk || line == "":
		case line[0] == '+':
			added++
		case line[0] == '-':
			removed++
		}
	}
	return added, removed
}

// FillCounts sets the line counts of entries that lack them (older stores), so that
// every entry written as JSON has them.
func (s *Store) FillCounts(entries []*Entry) {
	for _, e := range entries {
		if e.Added != nil && e.Removed != nil {
			continue
		}
		a, r, err := s.Counts(e)
		if err != nil {
			continue
		}
		e.Added, e.Removed = &a, &r
		if raw := strings.TrimSpace(e.raw); strings.HasSuffix(raw, "}") {
			e.raw = fmt.Sprintf(`%s,"added":%d,"removed":%d}`, raw[:len(raw)-1], a, r)
		}
	}
}
