package history

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// PendingChange is one pending change of an edit, where it is in the file now: the
// lines the block wrote that no later kept change replaced, followed through every
// later step to the file as the decisions want it, which is what is on disk.
type PendingChange struct {
	EditID         string
	ConversationID string
	Title          string // the conversation's title, when known
	ToolName       string
	Timestamp      string
	Block          int // index of the block among the edit's changes
	// Start and End are the 1-based lines (inclusive) in the file as it is on disk.
	// The lines of a deletion are gone: Start = End = the line above them, or 1 when
	// they were at the top (Removed is then 0).
	Start, End int
	Removed    int      // for a deletion: the line after which the lines were removed (0 = top)
	Kind       string   // "add", "change" or "delete"
	Old        []string // the lines the block replaced, with their line endings
	// Beneath are the pending blocks whose lines this one replaced or removed (and
	// theirs, through any decided block between), oldest first: changes still
	// pending under this one's lines, which show nowhere else. They lie where this
	// change is: their Start, End and Removed are not set.
	Beneath []PendingChange
}

// PendingChange kinds.
const (
	KindAdd    = "add"
	KindChange = "change"
	KindDelete = "delete"
)

// Touches reports whether the change touches lines a..b (1-based, inclusive).
func (h PendingChange) Touches(a, b int) bool { return h.Start <= b && h.End >= a }

// lineOrigin is the block of an entry that wrote a line.
type lineOrigin struct {
	entry *Entry
	block int
	b     *udiff.Block
	// replaced are the blocks that wrote the lines this block replaced or removed.
	replaced []*lineOrigin
}

// origin is what block i of st writes: nil for a rebuild marker.
func (p *replayer) origin(st *step, i int, blocks []udiff.Block) *lineOrigin {
	if st.entry == nil {
		return nil
	}
	return &lineOrigin{entry: st.entry, block: i, b: &blocks[i]}
}

// origins follows who wrote each line of S, and where blocks removed lines.
type origins struct {
	lines   []*lineOrigin
	removed []removal
}

type removal struct {
	at   int // lines were removed before S's line at (0-based), i.e. after line at
	from *lineOrigin
}

// reset forgets everything: S now has n lines nobody tracked wrote.
func (o *origins) reset(n int) {
	if o == nil {
		return
	}
	o.lines = make([]*lineOrigin, n)
	o.removed = o.removed[:0]
}

// splice follows S's lines [at,at+del) being replaced by ins lines that from wrote.
func (o *origins) splice(at, del, ins int, from *lineOrigin) {
	if o == nil {
		return
	}
	written := make([]*lineOrigin, ins)
	for i := range written {
		written[i] = from
	}
	if from != nil {
		for _, gone := range o.lines[at : at+del] {
			if gone != nil && gone != from && !slices.Contains(from.replaced, gone) {
				from.replaced = append(from.replaced, gone)
			}
		}
	}
	o.lines = splice(o.lines, at, del, written)
	for i := range o.removed {
		r := &o.removed[i]
		switch {
		case r.at <= at:
		case r.at < at+del: // inside what was replaced: it stays at its start
			r.at = at
		default:
			r.at += ins - del
		}
	}
	if from != nil && ins == 0 && del > 0 {
		o.removed = append(o.removed, removal{at: at, from: from})
	}
}

// PendingChanges returns the pending changes of the file at path (absolute), in file order.
// A file without history, or without pending edits, has none.
func (s *Store) PendingChanges(path string) ([]PendingChange, error) {
	all, err := s.PendingChangesOf([]string{path})
	return all[path], err
}

// PendingChangesOf returns the pending changes of several files, reading the store once.
func (s *Store) PendingChangesOf(paths []string) (map[string][]PendingChange, error) {
	if empty, err := s.replayable(); err != nil || empty {
		return nil, err // nothing is replayed from a foreign store
	}
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	_, owner := lineages(snap)
	out := map[string][]PendingChange{}
	for _, p := range paths {
		changes, err := s.pendingIn(snap, owner, p)
		if err != nil {
			return out, err
		}
		out[p] = changes
	}
	return out, nil
}

func (s *Store) pendingIn(snap *snapshot, owner map[string]*lineage, path string) ([]PendingChange, error) {
	l := owner[path]
	if l == nil || !hasPending(l) {
		return nil, nil
	}
	p := &replayer{store: s, status: currentStatus, track: &origins{}}
	if err := p.run(l, snap); err != nil {
		return nil, err
	}
	if !p.S.exists || p.S.path != path {
		return nil, nil
	}
	changes := p.track.pending(len(p.S.lines))
	// The changes are in the file as the decisions want it (as recorded, once they are
	// carried out); if the file changed outside mcpdiff since, they are moved
	// through that change.
	rel, err := s.relPath(path)
	if err != nil {
		return nil, err
	}
	disk, _, err := s.workspace.ReadFile(rel, s.maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if wanted := p.S.content(); string(disk) != string(wanted) {
		changes = movePending(changes, udiff.Lines(p.S.lines, udiff.SplitLines(disk)))
	}
	return changes, nil
}

func hasPending(l *lineage) bool {
	for _, st := range l.steps {
		if st.entry != nil && st.entry.Status == Pending {
			return true
		}
	}
	return false
}

// pending turns the tracked origins into pending changes: runs of lines written by one pending
// block, and the places pending blocks removed lines.
func (o *origins) pending(n int) []PendingChange {
	var out []PendingChange
	for i := 0; i < n; {
		from := o.lines[i]
		j := i + 1
		for j < n && o.lines[j] == from {
			j++
		}
		if from != nil && from.pending() {
			out = append(out, from.changeWithBeneath(i+1, j))
		}
		i = j
	}
	seen := map[removal]bool{}
	for _, r := range o.removed {
		if r.from.pending() && !seen[r] {
			seen[r] = true
			h := r.from.changeWithBeneath(max(r.at, 1), max(r.at, 1))
			h.Removed = r.at
			out = append(out, h)
		}
	}
	sortPending(out)
	return out
}

func (f *lineOrigin) pending() bool { return f.entry.verdict().block(f.block) == Pending }

func (f *lineOrigin) change(start, end int) PendingChange {
	kind := KindChange
	switch {
	case len(f.b.Old) == 0:
		kind = KindAdd
	case len(f.b.New) == 0:
		kind = KindDelete
	}
	e := f.entry
	return PendingChange{EditID: e.EditID, ConversationID: e.ConversationID, Title: e.ConversationTitle, ToolName: e.ToolName,
		Timestamp: e.Timestamp, Block: f.block, Start: start, End: end, Kind: kind, Old: f.b.Old}
}

// changeWithBeneath is f's pending change on lines start..end, with the pending blocks beneath it.
func (f *lineOrigin) changeWithBeneath(start, end int) PendingChange {
	h := f.change(start, end)
	seen := map[*lineOrigin]bool{f: true}
	var beneath []*lineOrigin
	var walk func(o *lineOrigin)
	walk = func(o *lineOrigin) {
		for _, r := range o.replaced {
			if !seen[r] {
				seen[r] = true
				if r.pending() {
					beneath = append(beneath, r)
				}
				walk(r)
			}
		}
	}
	walk(f)
	sort.Slice(beneath, func(i, j int) bool {
		a, b := beneath[i], beneath[j]
		if a.entry.Seq != b.entry.Seq {
			return a.entry.Seq < b.entry.Seq
		}
		return a.block < b.block
	})
	for _, o := range beneath {
		h.Beneath = append(h.Beneath, o.change(0, 0))
	}
	return h
}

func sortPending(hs []PendingChange) {
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].Start != hs[j].Start {
			return hs[i].Start < hs[j].Start
		}
		return hs[i].End < hs[j].End
	})
}

// movePending moves pending changes of the recorded content through the edits that turn it into
// what is on disk. A change whose lines were changed there grows to cover the change.
func movePending(changes []PendingChange, edits []udiff.Edit) []PendingChange {
	// mapPos maps a boundary between lines (0..n) of the old content; an insertion
	// right at a change's boundary stays outside it.
	mapPos := func(pos int, isEnd bool) int {
		delta := 0
		for _, e := range edits {
			switch {
			case e.OldStart == e.OldEnd && e.OldStart == pos:
				if isEnd {
					return e.NewStart
				}
				return e.NewEnd
			case e.OldEnd <= pos:
				delta = e.NewEnd - e.OldEnd
				continue
			case e.OldStart < pos: // inside an edit on disk: the change takes all of it
				if isEnd {
					return e.NewEnd
				}
				return e.NewStart
			}
			return pos + delta // the rest lies after pos
		}
		return pos + delta
	}
	out := changes[:0]
	for _, h := range changes {
		if h.Kind == KindDelete {
			at := mapPos(h.Removed, false)
			h.Removed, h.Start, h.End = at, max(at, 1), max(at, 1)
		} else {
			a, b := mapPos(h.Start-1, false), mapPos(h.End, true)
			if b <= a {
				continue // its lines are gone from the file
			}
			h.Start, h.End = a+1, b
		}
		out = append(out, h)
	}
	sortPending(out)
	return out
}

// PendingChangesTouching returns the pending changes of path that touch any of the line ranges.
func (s *Store) PendingChangesTouching(path string, ranges []LineRange) ([]PendingChange, error) {
	changes, err := s.PendingChanges(path)
	if err != nil {
		return nil, err
	}
	return touching(changes, ranges), nil
}

func touching(changes []PendingChange, ranges []LineRange) []PendingChange {
	var out []PendingChange
	for _, h := range changes {
		for _, r := range ranges {
			if h.Touches(r.Start, r.End) {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// LineRange is lines Start..End of a file, 1-based and inclusive.
type LineRange struct{ Start, End int }

func (r LineRange) String() string {
	if r.Start == r.End {
		return fmt.Sprint(r.Start)
	}
	return fmt.Sprintf("%d-%d", r.Start, r.End)
}

// ParseLineRanges reads "A-B" or "A", several separated by commas.
func ParseLineRanges(s string) ([]LineRange, error) {
	var out []LineRange
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		a, b, isRange := strings.Cut(part, "-")
		var r LineRange
		_, err1 := fmt.Sscanf(a, "%d", &r.Start)
		r.End = r.Start
		var err2 error
		if isRange {
			_, err2 = fmt.Sscanf(b, "%d", &r.End)
		}
		if part == "" || err1 != nil || err2 != nil || fmt.Sprint(r.Start) != strings.TrimSpace(a) || (isRange && fmt.Sprint(r.End) != strings.TrimSpace(b)) {
			return nil, fmt.Errorf("bad line range %q: write A-B or A (1-based), several separated by commas", part)
		}
		if r.Start < 1 || r.End < r.Start {
			return nil, fmt.Errorf("bad line range %q: lines start at 1 and A-B needs A <= B", part)
		}
		out = append(out, r)
	}
	return out, nil
}

// AllPendingChanges returns the pending changes of every file that has pending edits, by
// path, reading the store once.
func (s *Store) AllPendingChanges() (map[string][]PendingChange, error) {
	if empty, err := s.replayable(); err != nil || empty {
		return nil, err // nothing is replayed from a foreign store
	}
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	out := map[string][]PendingChange{}
	seen := map[string]bool{}
	_, owner := lineages(snap)
	for _, e := range snap.entries {
		if e.Status != Pending || seen[e.FilePath] || owner[e.FilePath] == nil {
			continue
		}
		seen[e.FilePath] = true
		changes, err := s.pendingIn(snap, owner, e.FilePath)
		if err != nil {
			return nil, err
		}
		if len(changes) > 0 {
			out[e.FilePath] = changes
		}
	}
	return out, nil
}
