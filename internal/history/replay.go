package history

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/udiff"
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
// change is moved into S through the regions before it (that is the line-shift
// handling). It conflicts with a region only where its place in S would be a guess:
// it changes or removes lines that a rejected edit wrote, splits them, or puts lines
// of its own exactly where lines a rejected edit removed go back. A change next to a
// region, with no unchanged line between, goes before or after it. A conflicting
// change is recorded and the replay goes on as if it were rejected too, so one replay
// names every later edit in the way. A rebuild marker (what an earlier accept/reject
// wrote to disk) changes R only, like a rejected edit: later edits were made on top
// of it.

// fileState is one version of a file.
type fileState struct {
	exists bool
	path   string
	lines  []string // with terminators
}

func (f fileState) content() []byte { return joinLines(f.lines) }

// region: R's lines [start,end) are S's lines s. Regions are in file order and never
// overlap. They may touch; an empty one (start == end: lines that rejected edits
// removed, which S still has) may share its place with others, in S's order.
type region struct {
	start, end int
	s          []string
	origin     []string // edits whose rejection (or earlier status) made S differ here
	// openStart (openEnd): a kept insertion exactly at start (end) would be a guess,
	// because lines S has inside go back at that very place in an order no step
	// recorded. An empty region is open by nature.
	openStart, openEnd bool
}

func (r region) empty() bool { return r.start == r.end }

// Reasons a kept change conflicts with a region (the region's origin fills in %s).
const (
	reasonChanges = "changes lines written by %s"
	reasonSplits  = "puts lines between lines written by %s"
	reasonPlace   = "puts lines of its own where the lines removed by %s go back"
)

// conflict returns why a kept change of R's lines [a,e) (writing lines when hasNew)
// depends on r, or "" when it does not.
func (r region) conflict(a, e int, hasNew bool) string {
	if r.empty() {
		p := r.start
		if (a == e && a == p) || (a < p && p < e && hasNew) {
			return reasonPlace
		}
		return ""
	}
	if e > a {
		if a < r.end && r.start < e {
			return reasonChanges
		}
		return ""
	}
	switch {
	case r.start < a && a < r.end:
		return reasonSplits
	case (a == r.start && r.openStart) || (a == r.end && r.openEnd):
		return reasonPlace
	}
	return ""
}

// before reports whether r lies before a kept change [a,e) it does not conflict
// with: lines removed right where the change starts go back before its lines.
func (r region) before(a, e int) bool {
	if r.empty() {
		return r.start < a || (r.start == a && e > a)
	}
	return r.end <= a
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

func (st *step) hashBefore() *string {
	if st.entry != nil {
		return st.entry.HashBefore
	}
	return st.marker.HashBefore
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

// Conflict is a kept edit whose place in the rebuilt file would be a guess, because
// it depends on lines that other, rejected edits wrote or removed.
type Conflict struct {
	Path   string
	Later  *Entry   // the kept edit in the way
	With   []string // the rejected (or re-accepted) edits it depends on
	Reason string   // a format with one %s, for With
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s (%s, conversation %s) in %s %s", short(c.Later.EditID), c.Later.ToolName, c.Later.ConversationID,
		c.Path, fmt.Sprintf(c.Reason, shortList(c.With)))
}

// ConflictError is a decision that cannot be carried out without a guess. It names
// every kept edit in the way: rejecting those too (Decide with WithLater) carries
// out a reject.
type ConflictError struct {
	Conflicts []Conflict
	Rejecting bool // the decision rejected edits (the later ones can be rejected with them)
}

// Later lists the edits in the way, in recorded order.
func (e *ConflictError) Later() []*Entry {
	var out []*Entry
	seen := map[string]bool{}
	for _, c := range e.Conflicts {
		if !seen[c.Later.EditID] {
			seen[c.Later.EditID] = true
			out = append(out, c.Later)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

func (e *ConflictError) Error() string {
	if e.Rejecting {
		return e.Summary() + "; reject them too (--with-later) or decide on them first"
	}
	return e.Summary() + "; decide on them first"
}

// Summary says which later edits are in the way, without advice: a caller that can
// name the whole command to run gives its own.
func (e *ConflictError) Summary() string {
	var parts []string
	for _, c := range e.Conflicts {
		parts = append(parts, c.String())
	}
	n := len(e.Later())
	what := "a later edit is"
	if n > 1 {
		what = fmt.Sprintf("%d later edits are", n)
	}
	return fmt.Sprintf("conflict: %s in the way: %s", what, strings.Join(parts, "; "))
}

// replayer runs one lineage.
type replayer struct {
	store     *Store
	status    func(*Entry) verdict
	S, R      fileState
	regions   []region
	conflicts []Conflict
	track     *origins // who wrote S's lines; nil unless asked for (pending.go)
	// knownEnd: R was replayed and checked against the last step's hash already (R
	// is the same under any decisions).
	knownEnd bool
}

// replay rebuilds one lineage under the decisions given by status. The replayer
// holds S and R after its last step, and the conflicts met on the way.
func (s *Store) replay(l *lineage, snap *snapshot, status func(*Entry) verdict) (*replayer, error) {
	p := &replayer{store: s, status: status}
	return p, p.run(l, snap)
}

func (p *replayer) run(l *lineage, snap *snapshot) error {
	if err := p.start(l, snap); err != nil {
		return err
	}
	for _, st := range l.steps {
		if err := p.apply(st); err != nil {
			return err
		}
	}
	last := l.steps[len(l.steps)-1]
	if p.R.exists && !p.knownEnd {
		if want := deref(last.hashAfter()); want != "" && hashBytes(p.R.content()) != want {
			return fmt.Errorf("the recorded history of %s does not add up (its content after the last step does not match its hash); the store may be damaged", p.R.path)
		}
	}
	return nil
}

// currentStatus is the decisions as recorded.
func currentStatus(e *Entry) verdict { return e.verdict() }

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
		p.R.lines = append([]string(nil), p.store.checkpoints.lines(content)...)
	}
	p.S = p.R
	p.S.lines = append([]string(nil), p.R.lines...)
	p.track.reset(len(p.R.lines))
	return nil
}

// errNoCheckpoint is a step with no checkpoint to start a replay from.
var errNoCheckpoint = errors.New("its conversation holds no checkpoint of it")

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
		// A cleanup that dropped the steps before this one wrote it.
		for _, name := range s.checkpointNames(e.ConversationID, e.from()) {
			if name += ".chkpt"; s.files.exists(name) {
				ref = &name
				break
			}
		}
	}
	if ref == nil {
		return nil, fmt.Errorf("no checkpoint of %s for edit %s: the history cannot rebuild this file: %w", e.from(), short(e.EditID), errNoCheckpoint)
	}
	if b, ok := s.checkpoints.get(*ref, deref(e.HashBefore)); ok {
		return b, nil
	}
	b, err := s.readStoreFile(*ref)
	if err != nil {
		return nil, fmt.Errorf("cannot read the checkpoint of %s: %w", e.from(), err)
	}
	if e.HashBefore != nil && hashBytes(b) != *e.HashBefore {
		return nil, fmt.Errorf("checkpoint %s does not match the file before edit %s", *ref, short(e.EditID))
	}
	s.checkpoints.put(*ref, deref(e.HashBefore), b)
	return b, nil
}

// apply replays one step.
func (p *replayer) apply(st *step) error {
	blocks, err := p.blocks(st)
	if err != nil {
		return err
	}
	if p.R.exists != st.existsBefore() {
		return fmt.Errorf("the recorded history of %s does not add up at step %d (the file's existence does not match); the store may be damaged", st.from(), st.seq)
	}
	if st.entry == nil {
		return p.skip(st, blocks)
	}
	v := p.status(st.entry)
	if v.rejectedAll() {
		return p.skip(st, blocks)
	}
	if with, why := p.conflict(st, blocks, v); why != "" {
		p.conflicts = append(p.conflicts, Conflict{Path: p.R.path, Later: st.entry, With: with, Reason: why})
		return p.skip(st, blocks) // as if rejected: what depends on it conflicts too
	}
	return p.keep(st, blocks, v)
}

// blocks reads a step's diff as zero-context changes (none for a move or delete).
func (p *replayer) blocks(st *step) ([]udiff.Block, error) {
	if !st.existsAfter() || st.diffFile() == nil {
		return nil, nil
	}
	return p.store.diffBlocks(*st.diffFile())
}

// diffBlocks reads a diff of the store as zero-context changes. Diffs are
// never rewritten (each is named by its edit or rebuild), so they are kept in
// memory: a replay reads every diff of a file, and a decision replays twice.
func (s *Store) diffBlocks(rel string) ([]udiff.Block, error) {
	if b, ok := s.blocks.get(rel); ok {
		return b, nil
	}
	text, err := s.readStoreFile(rel)
	if err != nil {
		return nil, err
	}
	if len(text) == 0 {
		return nil, nil
	}
	files, err := udiff.Parse(string(text))
	if err != nil || len(files) != 1 {
		return nil, fmt.Errorf("diff %s is unreadable: %v", rel, err)
	}
	blocks := files[0].Blocks()
	s.blocks.put(rel, blocks, len(text))
	return blocks, nil
}

// blockCache keeps parsed diffs up to a size, then starts over.
type blockCache struct {
	mu    sync.Mutex
	m     map[string][]udiff.Block
	bytes int
}

// blockCacheBytes bounds the diff text behind the cached blocks.
const blockCacheBytes = 64 << 20

func (c *blockCache) get(rel string) ([]udiff.Block, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[rel]
	return b, ok
}

func (c *blockCache) put(rel string, b []udiff.Block, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+size > blockCacheBytes {
		c.m, c.bytes = map[string][]udiff.Block{}, 0
	}
	c.m[rel] = b
	c.bytes += size
}

// conflict returns why keeping a step (the blocks v keeps) would be a guess, and the
// edits it depends on; "" when it would not.
func (p *replayer) conflict(st *step, blocks []udiff.Block, v verdict) ([]string, string) {
	switch {
	case !st.existsBefore(): // create
		if p.S.exists {
			return p.wholeOrigins(), "creates a file that the rejection of %s keeps in place"
		}
		return nil, ""
	case !st.existsAfter(): // a delete removes the file whatever came before
		return nil, ""
	case len(blocks) > 0 && !p.S.exists:
		return p.wholeOrigins(), "changes a file whose creation or restoration was undone by %s"
	}
	var with []string
	reason := ""
	for i, b := range blocks {
		if !v.keeps(i) {
			continue
		}
		for _, r := range p.regions {
			if why := r.conflict(b.OldStart, b.OldStart+len(b.Old), len(b.New) > 0); why != "" {
				with = appendUnique(with, r.origin...)
				if reason == "" {
					reason = why
				}
			}
		}
	}
	return with, reason
}

// keep applies a kept step (that does not conflict) to R and S: the blocks v rejects
// go to R only.
func (p *replayer) keep(st *step, blocks []udiff.Block, v verdict) error {
	switch {
	case !st.existsBefore(): // create
		if err := p.patchR(st, blocks); err != nil {
			return err
		}
		p.R.exists, p.R.path = true, st.to()
		p.S = fileState{exists: true, path: st.to(), lines: append([]string(nil), p.R.lines...)}
		p.regions = nil
		p.track.reset(0)
		for i := len(blocks) - 1; i >= 0; i-- {
			p.track.splice(0, 0, len(blocks[i].New), p.origin(st, i, blocks))
		}
		return nil
	case !st.existsAfter(): // delete: the file is gone whatever came before
		p.R = fileState{path: st.to()}
		p.S = fileState{path: p.S.path}
		p.regions = nil
		p.track.reset(0)
		return nil
	}
	if st.from() != st.to() { // move
		p.R.path, p.S.path = st.to(), st.to()
	}
	for i := len(blocks) - 1; i >= 0; i-- { // last first: earlier positions stay valid
		var err error
		if v.keeps(i) {
			err = p.keepBlock(blocks[i], p.origin(st, i, blocks))
		} else {
			err = p.skipBlock(blocks[i], p.origin(st, i, blocks), st.origins())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keepBlock applies a kept block to R and S. A deletion across places where removed
// lines go back is applied piece by piece between them: those lines stay, in order.
func (p *replayer) keepBlock(b udiff.Block, from *lineOrigin) error {
	a, e := b.OldStart, b.OldStart+len(b.Old)
	if len(b.New) == 0 {
		cuts := []int{a}
		for _, r := range p.regions {
			if r.empty() && a < r.start && r.start < e && r.start != cuts[len(cuts)-1] {
				cuts = append(cuts, r.start)
			}
		}
		if len(cuts) > 1 {
			cuts = append(cuts, e)
			for i := len(cuts) - 2; i >= 0; i-- {
				lo, hi := cuts[i], cuts[i+1]
				if err := p.keepSpan(udiff.Block{OldStart: lo, Old: b.Old[lo-a : hi-a]}, from); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return p.keepSpan(b, from)
}

// keepSpan applies a kept block that no region lies inside.
func (p *replayer) keepSpan(b udiff.Block, from *lineOrigin) error {
	a, e := b.OldStart, b.OldStart+len(b.Old)
	before := 0 // regions before the block come first
	for before < len(p.regions) && p.regions[before].before(a, e) {
		before++
	}
	sPos := a + p.offset(before)
	if sPos+len(b.Old) > len(p.S.lines) || !equalLines(p.S.lines[sPos:sPos+len(b.Old)], b.Old) {
		return fmt.Errorf("the recorded history of %s does not add up at edit %s (its lines are not where it left them); the store may be damaged", p.R.path, short(from.entry.EditID))
	}
	if err := p.patchOne(b, from); err != nil {
		return err
	}
	p.S.lines = splice(p.S.lines, sPos, len(b.Old), b.New)
	p.track.splice(sPos, len(b.Old), len(b.New), from)
	p.shift(before, len(b.New)-len(b.Old))
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
		if err := p.patchR(st, blocks); err != nil {
			return err
		}
		p.regions = nil // no lines to align: a kept change is checked by existence
		if p.S.exists { // R (re)appears while S holds other content: the whole file differs
			p.regions = []region{{start: 0, end: len(p.R.lines), s: append([]string(nil), p.S.lines...), origin: st.origins()}}
		}
	default:
		// One block at a time, last first, so each block's region is measured in
		// the coordinates it was made in.
		for i := len(blocks) - 1; i >= 0; i-- {
			if err := p.skipBlock(blocks[i], p.origin(st, i, blocks), st.origins()); err != nil {
				return err
			}
		}
	}
	return nil
}

// skipBlock applies a rejected block to R only and records where S differs.
func (p *replayer) skipBlock(b udiff.Block, from *lineOrigin, origin []string) error {
	if err := p.patchOne(b, from); err != nil {
		return err
	}
	p.widen(b, origin)
	return nil
}

// widen records that R's lines of block b (already applied to R) differ from S.
// Regions the block changes, or inserts into, merge with it; so do regions whose
// open side an insertion meets (where removed lines go back is then unknown
// relative to the inserted lines too).
func (p *replayer) widen(b udiff.Block, origin []string) {
	a, e := b.OldStart, b.OldStart+len(b.Old)
	// side is -1 for a region before the block, 0 for one merged, 1 after.
	side := func(r region) int {
		if a == e { // an insertion
			switch {
			case r.empty() && r.start == a,
				!r.empty() && r.start < a && a < r.end,
				!r.empty() && r.end == a && r.openEnd,
				!r.empty() && r.start == a && r.openStart:
				return 0
			case r.end <= a && (r.start < a || !r.empty()):
				return -1
			}
			return 1
		}
		switch {
		case r.empty() && a < r.start && r.start < e, !r.empty() && a < r.end && r.start < e:
			return 0
		case r.end <= a:
			return -1
		}
		return 1
	}
	before, first, last := 0, -1, -1
	u0, u1 := a, e
	for i, r := range p.regions {
		switch side(r) {
		case -1:
			before++
		case 0:
			if first < 0 {
				first = i
			}
			last = i
			u0, u1 = min(u0, r.start), max(u1, r.end)
		}
	}
	delta := len(b.New) - len(b.Old)
	merged := region{start: u0, end: u1 + delta}
	sLen := u1 - u0
	rest := before
	if first >= 0 {
		rest = last + 1
		for _, r := range p.regions[first:rest] {
			sLen += len(r.s) - (r.end - r.start)
			merged.origin = appendUnique(merged.origin, r.origin...)
			if r.start == u0 && (r.openStart || r.empty()) {
				merged.openStart = true
			}
			if r.end == u1 && (r.openEnd || r.empty()) {
				merged.openEnd = true
			}
		}
	}
	merged.origin = appendUnique(merged.origin, origin...)
	sStart := u0 + p.offset(before)
	merged.s = append([]string(nil), p.S.lines[sStart:sStart+sLen]...)
	out := make([]region, 0, len(p.regions)+1)
	out = append(out, p.regions[:before]...)
	if !equalLines(merged.s, p.R.lines[merged.start:merged.end]) {
		out = append(out, merged)
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

// patchR applies all of a step's blocks to R.
func (p *replayer) patchR(st *step, blocks []udiff.Block) error {
	for i := len(blocks) - 1; i >= 0; i-- {
		if err := p.patchOne(blocks[i], p.origin(st, i, blocks)); err != nil {
			return err
		}
	}
	return nil
}

// patchOne replaces b.Old by b.New in R, after checking b.Old is there.
func (p *replayer) patchOne(b udiff.Block, from *lineOrigin) error {
	l := p.R.lines
	pos := b.OldStart
	if pos+len(b.Old) > len(l) || !equalLines(l[pos:pos+len(b.Old)], b.Old) {
		return fmt.Errorf("the recorded history of %s does not add up (a diff does not apply to the file it was made on); the store may be damaged", p.R.path)
	}
	p.R.lines = splice(l, pos, len(b.Old), b.New)
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
func splice[T any](lines []T, at, del int, ins []T) []T {
	tail := len(lines) - at - del
	n := at + len(ins) + tail
	if n > cap(lines) {
		out := make([]T, n, n+n/4+8)
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
	p, err := s.replay(l, snap, currentStatus)
	return p.R, err
}
