package history

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpdiff/mcpdiff/udiff"
)

// The replay rebuilds a file from its checkpoint under a given set of decisions.
//
// Two versions of the file are carried along, step by step in recorded order:
//
//   - R, the recorded file: every step applied exactly as it happened. Each step's
//     diff is relative to R, so R is what positions in the diffs mean.
//   - S, the file as the decisions want it: kept edits applied, rejected ones not.
//
// Where S and R differ, a region says which lines of R are which lines of S. A kept
// edit is moved into S through the regions before it (that is the line-shift
// handling); if it changes or touches a region with no unchanged line between, it
// depends on lines a rejected edit wrote, and the replay stops with a *ConflictError.
// A rebuild marker (what an earlier accept/reject wrote to disk) changes R only, like
// a rejected edit: later edits were made on top of it.

// fileState is one version of a file.
type fileState struct {
	exists bool
	path   string
	lines  []string // with terminators
}

func (f fileState) content() []byte { return joinLines(f.lines) }

// region: R's lines [start,end) are S's lines s. Regions are sorted and never touch.
type region struct {
	start, end int
	s          []string
	origin     []string // edits whose rejection (or earlier status) made S differ here
}

// conflicts reports whether a kept change of R's lines [a,e) depends on r. Where
// the rejected side wrote lines (r is not empty in R), changing them or touching them
// with no unchanged line between is a conflict (SPEC §5). Where it only removed
// lines (r is empty in R), the restored lines go back between their neighbours, and
// only a change at that very point, or across it, is ambiguous.
func (r region) conflicts(a, e int) bool {
	if r.start < r.end {
		return a <= r.end && r.start <= e
	}
	p := r.start
	return (a < p && p < e) || (a == p && e == p)
}

// before reports whether r lies wholly before a non-conflicting change [a,e).
func (r region) before(a, e int) bool {
	return r.end < a || (r.start == r.end && r.end == a && e > a)
}

// step is one recorded change: a log entry or a rebuild marker.
type step struct {
	seq    int64
	entry  *Entry
	marker *Marker
}

func (st *step) from() string {
	if st.entry != nil {
		return st.entry.from()
	}
	return st.marker.FromPath
}

func (st *step) to() string {
	if st.entry != nil {
		return st.entry.FilePath
	}
	return st.marker.FilePath
}

func (st *step) existsBefore() bool {
	if st.entry != nil {
		return st.entry.HashBefore != nil
	}
	return st.marker.HashBefore != nil
}

func (st *step) existsAfter() bool {
	if st.entry != nil {
		return st.entry.Operation != Delete
	}
	return st.marker.HashAfter != nil
}

func (st *step) hashAfter() *string {
	if st.entry != nil {
		return st.entry.HashAfter
	}
	return st.marker.HashAfter
}

func (st *step) diffFile() *string {
	if st.entry != nil {
		return st.entry.DiffFile
	}
	return st.marker.DiffFile
}

// origins names what a step contributes to a region.
func (st *step) origins() []string {
	if st.entry != nil {
		return []string{st.entry.EditID}
	}
	return st.marker.EditIDs
}

// lineage is one file's identity through creates, moves and deletes: every step that
// touched it, in order.
type lineage struct {
	steps []*step
}

// lineages groups every step of the store by file identity. owner maps each path to
// the lineage that last held it in the recorded history.
func lineages(snap *snapshot) (all []*lineage, owner map[string]*lineage) {
	steps := make([]*step, 0, len(snap.entries)+len(snap.markers))
	for _, e := range snap.entries {
		steps = append(steps, &step{seq: e.Seq, entry: e})
	}
	for _, m := range snap.markers {
		steps = append(steps, &step{seq: m.Seq, marker: m})
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].seq < steps[j].seq })
	owner = map[string]*lineage{}
	for _, st := range steps {
		l := owner[st.from()]
		if l == nil {
			l = &lineage{}
			all = append(all, l)
		}
		if st.from() != st.to() {
			delete(owner, st.from())
		}
		owner[st.to()] = l
		l.steps = append(l.steps, st)
	}
	return all, owner
}

// ConflictError is a decision that cannot be carried out because a kept edit depends
// on lines that another, rejected edit wrote.
type ConflictError struct {
	Path   string
	Later  *Entry   // the kept edit that depends on the rejected lines
	With   []string // the rejected (or re-accepted) edits it depends on
	Reason string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict in %s: edit %s (%s, conversation %s) %s %s; decide on it first",
		e.Path, short(e.Later.EditID), e.Later.ToolName, e.Later.ConversationID, e.Reason, shortList(e.With))
}

// replayer runs one lineage.
type replayer struct {
	store   *Store
	status  func(*Entry) Status
	S, R    fileState
	regions []region
}

// replay rebuilds one lineage under the decisions given by status and returns S and
// R after its last step.
func (s *Store) replay(l *lineage, snap *snapshot, status func(*Entry) Status) (S, R fileState, err error) {
	p := &replayer{store: s, status: status}
	if err := p.start(l, snap); err != nil {
		return S, R, err
	}
	for _, st := range l.steps {
		if err := p.apply(st); err != nil {
			return S, R, err
		}
	}
	last := l.steps[len(l.steps)-1]
	if p.R.exists {
		if want := deref(last.hashAfter()); want != "" && hashBytes(p.R.content()) != want {
			return S, R, fmt.Errorf("the recorded history of %s does not add up (its content after the last step does not match its hash); the store may be damaged", p.R.path)
		}
	}
	return p.S, p.R, nil
}

// start sets S and R to the file before the lineage's first step: absent, or the
// checkpoint its conversation took.
func (p *replayer) start(l *lineage, snap *snapshot) error {
	first := l.steps[0]
	p.R = fileState{path: first.from()}
	if first.existsBefore() {
		content, err := p.store.checkpointFor(first, snap)
		if err != nil {
			return err
		}
		p.R.exists = true
		p.R.lines = udiff.SplitLines(content)
	}
	p.S = p.R
	p.S.lines = append([]string(nil), p.R.lines...)
	return nil
}

// checkpointFor finds the bytes of the file before st: the checkpoint st (or the
// first entry of its conversation on that path) saved.
func (s *Store) checkpointFor(st *step, snap *snapshot) ([]byte, error) {
	e := st.entry
	if e == nil {
		return nil, fmt.Errorf("the history of %s starts with a rebuild; its checkpoint is missing", st.from())
	}
	ref := e.CheckpointFile
	if ref == nil {
		for _, o := range snap.entries {
			if o.ConversationID == e.ConversationID && o.from() == e.from() && o.CheckpointFile != nil && o.Seq <= e.Seq {
				ref = o.CheckpointFile
				break
			}
		}
	}
	if ref == nil {
		return nil, fmt.Errorf("no checkpoint of %s for edit %s: the history cannot rebuild this file", e.from(), short(e.EditID))
	}
	b, err := s.readStoreFile(*ref)
	if err != nil {
		return nil, fmt.Errorf("checkpoint of %s is missing: %w", e.from(), err)
	}
	if e.HashBefore != nil && hashBytes(b) != *e.HashBefore {
		return nil, fmt.Errorf("checkpoint %s does not match the file before edit %s", *ref, short(e.EditID))
	}
	return b, nil
}

// apply replays one step.
func (p *replayer) apply(st *step) error {
	kept := st.entry != nil && p.status(st.entry) != Rejected
	blocks, err := p.blocks(st)
	if err != nil {
		return err
	}
	if p.R.exists != st.existsBefore() {
		return fmt.Errorf("the recorded history of %s does not add up at step %d (the file's existence does not match); the store may be damaged", st.from(), st.seq)
	}
	if kept {
		return p.keep(st, blocks)
	}
	return p.skip(st, blocks)
}

// blocks reads a step's diff as zero-context change blocks (none for a move or delete).
func (p *replayer) blocks(st *step) ([]udiff.Block, error) {
	if !st.existsAfter() || st.diffFile() == nil {
		return nil, nil
	}
	text, err := p.store.readStoreFile(*st.diffFile())
	if err != nil {
		return nil, err
	}
	if len(text) == 0 {
		return nil, nil
	}
	files, err := udiff.Parse(string(text))
	if err != nil || len(files) != 1 {
		return nil, fmt.Errorf("diff %s is unreadable: %v", *st.diffFile(), err)
	}
	return files[0].Blocks(), nil
}

// keep applies a kept edit to R and S.
func (p *replayer) keep(st *step, blocks []udiff.Block) error {
	e := st.entry
	conflict := func(with []string, reason string) error {
		return &ConflictError{Path: p.R.path, Later: e, With: with, Reason: reason}
	}
	switch {
	case !st.existsBefore(): // create
		if p.S.exists {
			return conflict(p.wholeOrigins(), "creates a file that a rejected edit keeps in place;")
		}
		if err := p.patchR(blocks); err != nil {
			return err
		}
		p.R.exists, p.R.path = true, st.to()
		p.S = fileState{exists: true, path: st.to(), lines: append([]string(nil), p.R.lines...)}
		p.regions = nil
		return nil
	case !st.existsAfter(): // delete: the file is gone whatever came before
		p.R = fileState{path: st.to()}
		p.S = fileState{path: p.S.path}
		p.regions = nil
		return nil
	}
	if st.from() != st.to() { // move
		p.R.path, p.S.path = st.to(), st.to()
	}
	if len(blocks) == 0 {
		return nil
	}
	if !p.S.exists {
		return conflict(p.wholeOrigins(), "changes a file whose creation or restoration was undone by")
	}
	for i := len(blocks) - 1; i >= 0; i-- { // last first: earlier positions stay valid
		b := blocks[i]
		end := b.OldStart + len(b.Old)
		var before int // regions wholly before the block
		for _, r := range p.regions {
			if r.conflicts(b.OldStart, end) {
				return conflict(r.origin, "changes lines next to or written by")
			}
			if r.before(b.OldStart, end) {
				before++
			}
		}
		sPos := b.OldStart + p.offset(before)
		if sPos+len(b.Old) > len(p.S.lines) || !equalLines(p.S.lines[sPos:sPos+len(b.Old)], b.Old) {
			return fmt.Errorf("the recorded history of %s does not add up at edit %s (its lines are not where it left them); the store may be damaged", p.R.path, short(e.EditID))
		}
		if err := p.patchOne(&p.R.lines, b.OldStart, b); err != nil {
			return err
		}
		p.S.lines = splice(p.S.lines, sPos, len(b.Old), b.New)
		p.shift(before, len(b.New)-len(b.Old))
	}
	return nil
}

// skip applies a rejected edit or a rebuild marker to R only, widening the regions.
func (p *replayer) skip(st *step, blocks []udiff.Block) error {
	wasR := p.R.exists
	p.R.exists, p.R.path = st.existsAfter(), st.to()
	switch {
	case !p.R.exists:
		p.R.lines, p.regions = nil, nil
	case !p.S.exists || !wasR:
		if err := p.patchR(blocks); err != nil {
			return err
		}
		p.regions = nil // no lines to align: a kept change is checked by existence
		if p.S.exists { // R (re)appears while S holds other content: the whole file differs
			p.regions = []region{{start: 0, end: len(p.R.lines), s: append([]string(nil), p.S.lines...), origin: st.origins()}}
		}
	default:
		// Patch R one block at a time, last first, so each block's region is
		// measured in the coordinates it was made in.
		for i := len(blocks) - 1; i >= 0; i-- {
			if err := p.patchOne(&p.R.lines, blocks[i].OldStart, blocks[i]); err != nil {
				return err
			}
			p.widen(blocks[i], st.origins())
		}
	}
	return nil
}

// widen records that R's lines of block b (already applied to R) differ from S.
func (p *replayer) widen(b udiff.Block, origin []string) {
	u0, u1 := b.OldStart, b.OldStart+len(b.Old)
	first, last := -1, -1 // merged regions
	before := 0
	for i, r := range p.regions {
		switch {
		case r.end < b.OldStart:
			before++
		case r.start <= b.OldStart+len(b.Old):
			if first < 0 {
				first = i
			}
			last = i
			u0, u1 = min(u0, r.start), max(u1, r.end)
		}
	}
	sStart := u0 + p.offset(before)
	sLen := u1 - u0
	var origins []string
	if first >= 0 {
		for _, r := range p.regions[first : last+1] {
			sLen += len(r.s) - (r.end - r.start)
			origins = append(origins, r.origin...)
		}
	}
	delta := len(b.New) - len(b.Old)
	merged := region{start: u0, end: u1 + delta, s: append([]string(nil), p.S.lines[sStart:sStart+sLen]...), origin: appendUnique(origins, origin...)}
	var out []region
	out = append(out, p.regions[:before]...)
	if !equalLines(merged.s, p.R.lines[merged.start:merged.end]) {
		out = append(out, merged)
	}
	rest := before
	if first >= 0 {
		rest = last + 1
	}
	for _, r := range p.regions[rest:] {
		r.start += delta
		r.end += delta
		out = append(out, r)
	}
	p.regions = out
}

// offset is how many more lines S has than R in the first n regions.
func (p *replayer) offset(n int) int {
	off := 0
	for _, r := range p.regions[:n] {
		off += len(r.s) - (r.end - r.start)
	}
	return off
}

// shift moves the regions after the first n by delta lines of R.
func (p *replayer) shift(n, delta int) {
	for i := n; i < len(p.regions); i++ {
		p.regions[i].start += delta
		p.regions[i].end += delta
	}
}

func (p *replayer) patchR(blocks []udiff.Block) error {
	for i := len(blocks) - 1; i >= 0; i-- {
		if err := p.patchOne(&p.R.lines, blocks[i].OldStart, blocks[i]); err != nil {
			return err
		}
	}
	return nil
}

// patchOne replaces b.Old at pos in lines by b.New, after checking b.Old is there.
func (p *replayer) patchOne(lines *[]string, pos int, b udiff.Block) error {
	l := *lines
	if pos+len(b.Old) > len(l) || !equalLines(l[pos:pos+len(b.Old)], b.Old) {
		return fmt.Errorf("the recorded history of %s does not add up (a diff does not apply to the file it was made on); the store may be damaged", p.R.path)
	}
	*lines = splice(l, pos, len(b.Old), b.New)
	return nil
}

func (p *replayer) allOrigins() []string {
	var out []string
	for _, r := range p.regions {
		out = appendUnique(out, r.origin...)
	}
	return out
}

// wholeOrigins names the edits behind S and R disagreeing on the file's existence.
func (p *replayer) wholeOrigins() []string {
	if o := p.allOrigins(); len(o) > 0 {
		return o
	}
	return []string{"an earlier rejected edit"}
}

// splice replaces lines[at:at+del] by ins, reusing lines' storage when it can.
func splice(lines []string, at, del int, ins []string) []string {
	tail := len(lines) - at - del
	n := at + len(ins) + tail
	if n > cap(lines) {
		out := make([]string, n, n+n/4+8)
		copy(out, lines[:at])
		copy(out[at:], ins)
		copy(out[at+len(ins):], lines[at+del:])
		return out
	}
	old := lines
	lines = lines[:n]
	copy(lines[at+len(ins):], old[at+del:at+del+tail])
	copy(lines[at:], ins)
	return lines
}

func appendUnique(list []string, add ...string) []string {
	for _, a := range add {
		found := false
		for _, l := range list {
			if l == a {
				found = true
				break
			}
		}
		if !found {
			list = append(list, a)
		}
	}
	return list
}

// short is the abbreviated edit id shown to people.
func short(id string) string {
	if len(id) > 8 && strings.Count(id, "-") == 4 {
		return id[:8]
	}
	return id
}

func shortList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = short(id)
	}
	return strings.Join(out, ", ")
}

// recordedState is the last recorded version of path (R after the last step of the
// lineage that holds it), replayed under the current decisions.
func (s *Store) recordedState(snap *snapshot, path string) (fileState, error) {
	_, owner := lineages(snap)
	l := owner[path]
	if l == nil {
		return fileState{path: path}, nil
	}
	_, R, err := s.replay(l, snap, func(e *Entry) Status { return e.Status })
	return R, err
}
