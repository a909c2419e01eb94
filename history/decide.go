package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/udiff"
	"github.com/mcpdiff/mcpdiff/workspace"
)

// ErrUnknownID means an id matched no edit and no conversation.
var ErrUnknownID = errors.New("unknown edit or conversation id")

// ErrNoPendingChange means a selection by lines touched no pending change.
var ErrNoPendingChange = errors.New("no pending change")

// Selection picks the edits a decision applies to.
type Selection struct {
	IDs          []string // edit ids (or unique prefixes of at least 4 characters) or conversation ids
	Conversation string   // every edit of this conversation
	File         string   // the pending edits of this file (absolute path)
	// Lines narrows File to the pending change blocks that touch these lines of the
	// file as it is on disk: part of an edit when they cover part of it.
	Lines []LineRange
	Hunks []HunkRef // change blocks of edits
	// WithLater makes a reject take along every later kept edit in its way (those a
	// plain reject refuses naming), instead of refusing.
	WithLater bool
}

// HunkRef names one change block of an edit (Hunk.Block).
type HunkRef struct {
	EditID string
	Block  int
}

// Outcome is what a decision did.
type Outcome struct {
	Edits    []string // edits whose status (of all or some of their blocks) changed
	Later    []string // of those, the later edits WithLater took along
	Blocks   int      // blocks decided when the selection named lines or hunks
	Files    []string // files rewritten, created or removed on disk
	Warnings []string // corrupted log lines that were skipped
}

// Drift is a file that changed outside mcpdiff since its last recorded state.
type Drift struct {
	Path string
	Diff string // recorded state → what is on disk
}

// ExternalChangeError stops a decision that would overwrite changes made outside
// mcpdiff. Deciding again with force discards them.
type ExternalChangeError struct{ Drifts []Drift }

func (e *ExternalChangeError) Error() string {
	var paths []string
	for _, d := range e.Drifts {
		paths = append(paths, d.Path)
	}
	return fmt.Sprintf("%s changed outside mcpdiff since the last recorded edit; rebuilding would discard those changes (use --force to discard them)", strings.Join(paths, ", "))
}

// Decide sets the status of the selected edits (or of their selected blocks) and
// rebuilds the files whose content must change: rejecting removes what was selected
// while every other kept edit stays, and accepting a rejected edit puts it back.
// Nothing changes if the result would be a guess (a *ConflictError naming every later
// edit in the way, unless sel.WithLater rejects them too), or (unless force) if a file
// was changed outside mcpdiff.
func (s *Store) Decide(ctx context.Context, sel Selection, to Status, force bool) (*Outcome, error) {
	if to != Accepted && to != Rejected {
		return nil, fmt.Errorf("can only accept or reject, not %q", to)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	out := &Outcome{Warnings: snap.warnings}
	next, err := s.decisions(snap, sel, to, out)
	if err != nil || len(next) == 0 {
		return out, err
	}
	status := func(e *Entry) verdict {
		if v, ok := next[e.EditID]; ok {
			return v
		}
		return e.verdict()
	}
	plan, err := s.plan(snap, next, status, force)
	var conflict *ConflictError
	for errors.As(err, &conflict) {
		conflict.Rejecting = to == Rejected
		if !sel.WithLater || to != Rejected || !takeAlong(conflict, next, out) {
			return nil, err
		}
		plan, err = s.plan(snap, next, status, force)
	}
	if err != nil {
		return nil, err
	}
	if err := s.carryOut(plan); err != nil {
		return nil, err
	}
	if err := s.saveDecisions(snap, next, plan); err != nil {
		return nil, err
	}
	for _, f := range plan {
		out.Files = append(out.Files, f.touched()...)
	}
	return out, nil
}

// takeAlong adds the later edits in the way of a reject to it. It reports false when
// there is nothing to add (they are rejected already: the conflict is not theirs).
func takeAlong(c *ConflictError, next map[string]verdict, out *Outcome) bool {
	grew := false
	for _, e := range c.Later() {
		if v, ok := next[e.EditID]; ok && v.rejectedAll() {
			continue
		}
		if _, ok := next[e.EditID]; !ok {
			out.Edits = append(out.Edits, e.EditID)
		}
		next[e.EditID] = verdict{status: Rejected}
		out.Later = append(out.Later, e.EditID)
		grew = true
	}
	return grew
}

// decisions resolves a selection into the new verdict of every entry it changes.
func (s *Store) decisions(snap *snapshot, sel Selection, to Status, out *Outcome) (map[string]verdict, error) {
	next := map[string]verdict{}
	decide := func(e *Entry, v verdict) {
		if _, ok := next[e.EditID]; !ok {
			if e.verdict().equal(v) {
				return
			}
			out.Edits = append(out.Edits, e.EditID)
		}
		next[e.EditID] = v
	}
	picked, err := selectEntries(snap, sel)
	if err != nil {
		return nil, err
	}
	for _, e := range picked {
		decide(e, verdict{status: to})
	}
	refs := append([]HunkRef(nil), sel.Hunks...)
	switch {
	case sel.File != "" && len(sel.Lines) > 0:
		_, owner := lineages(snap)
		hunks, err := s.hunksIn(snap, owner, sel.File)
		if err != nil {
			return nil, err
		}
		touched := touching(hunks, sel.Lines)
		if len(touched) == 0 {
			var rs []string
			for _, r := range sel.Lines {
				rs = append(rs, r.String())
			}
			return nil, fmt.Errorf("%w on line(s) %s of %s (see the signs, or `mcpdiff status --file`)", ErrNoPendingChange, strings.Join(rs, ","), sel.File)
		}
		for _, h := range touched {
			refs = append(refs, HunkRef{EditID: h.EditID, Block: h.Block})
		}
	case sel.File != "":
		// The pending edits of the file: their pending blocks (others keep theirs).
		for _, e := range snap.entries {
			if e.Status == Pending && (e.FilePath == sel.File || e.from() == sel.File) {
				v := e.verdict()
				decide(e, v.set(max(len(v.hunks), 1), to, func(i int) bool { return v.block(i) == Pending }))
			}
		}
	}
	byEdit := map[string][]int{}
	var order []*Entry
	for _, r := range refs {
		matched, err := Lookup(snap.entries, r.EditID)
		if err != nil {
			return nil, err
		}
		if len(matched) != 1 {
			return nil, fmt.Errorf("%w: %q names a conversation, not one edit", ErrUnknownID, r.EditID)
		}
		e := matched[0]
		if _, ok := byEdit[e.EditID]; !ok {
			order = append(order, e)
		}
		byEdit[e.EditID] = append(byEdit[e.EditID], r.Block)
	}
	for _, e := range order {
		n := 1
		if e.DiffFile != nil && e.Operation != Create {
			blocks, err := s.diffBlocks(*e.DiffFile)
			if err != nil {
				return nil, err
			}
			n = max(len(blocks), 1)
		}
		picks := map[int]bool{}
		for _, b := range byEdit[e.EditID] {
			if b < 0 || b >= n {
				return nil, fmt.Errorf("%w: edit %s has no change block %d (it has %d)", ErrUnknownID, short(e.EditID), b+1, n)
			}
			picks[b] = true
		}
		out.Blocks += len(picks)
		base := e.verdict()
		if prev, ok := next[e.EditID]; ok {
			base = prev
		}
		decide(e, base.set(n, to, func(i int) bool { return picks[i] }))
	}
	return next, nil
}

// selectEntries resolves the whole edits a selection names (ids and conversation).
func selectEntries(snap *snapshot, sel Selection) ([]*Entry, error) {
	var out []*Entry
	seen := map[string]bool{}
	add := func(e *Entry) {
		if !seen[e.EditID] {
			seen[e.EditID] = true
			out = append(out, e)
		}
	}
	if sel.Conversation != "" {
		n := len(out)
		for _, e := range snap.entries {
			if e.ConversationID == sel.Conversation {
				add(e)
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%w: no conversation %s", ErrUnknownID, sel.Conversation)
		}
	}
	for _, id := range sel.IDs {
		matched, err := Lookup(snap.entries, id)
		if err != nil {
			return nil, err
		}
		for _, e := range matched {
			add(e)
		}
	}
	return out, nil
}

// Lookup finds the entries an id names: an edit id, a unique prefix of one (at
// least 4 characters), or a conversation id.
func Lookup(entries []*Entry, id string) ([]*Entry, error) {
	var conv, prefix []*Entry
	for _, e := range entries {
		switch {
		case e.EditID == id:
			return []*Entry{e}, nil
		case e.ConversationID == id:
			conv = append(conv, e)
		case len(id) >= 4 && strings.HasPrefix(e.EditID, id):
			prefix = append(prefix, e)
		}
	}
	switch {
	case len(conv) > 0:
		return conv, nil
	case len(prefix) == 1:
		return prefix, nil
	case len(prefix) > 1:
		return nil, fmt.Errorf("%w: %q matches %d edits; give more characters", ErrUnknownID, id, len(prefix))
	}
	return nil, fmt.Errorf("%w: %q (see `mcpdiff status`)", ErrUnknownID, id)
}

// fileChange is what a decision does to one file.
type fileChange struct {
	R, S    fileState   // recorded and wanted versions
	mode    fs.FileMode // mode of the recorded file, kept by the rewrite
	changed []string    // edits of this file whose status changed
}

func (f *fileChange) needed() bool { return !sameFile(f.R, f.S) }

func (f *fileChange) touched() []string {
	if !f.needed() {
		return nil
	}
	var out []string
	if f.S.exists {
		out = append(out, f.S.path)
	}
	if f.R.exists && (!f.S.exists || f.S.path != f.R.path) {
		out = append(out, f.R.path)
	}
	return out
}

func sameFile(a, b fileState) bool {
	if !a.exists || !b.exists {
		return a.exists == b.exists
	}
	return a.path == b.path && equalLines(a.lines, b.lines)
}

// plan replays every file whose content a decision changes and checks the result
// can be written without a guess.
func (s *Store) plan(snap *snapshot, next map[string]verdict, status func(*Entry) verdict, force bool) ([]*fileChange, error) {
	all, _ := lineages(snap)
	var plan []*fileChange
	var drifts []Drift
	var conflicts []Conflict
	for _, l := range all {
		var changed []string
		for _, st := range l.steps {
			if st.entry == nil {
				continue
			}
			if v, ok := next[st.entry.EditID]; ok && !sameKept(st.entry.verdict(), v) {
				changed = append(changed, st.entry.EditID)
			}
		}
		if len(changed) == 0 {
			continue
		}
		p, err := s.replay(l, snap, status)
		if err != nil {
			return nil, err
		}
		if len(p.conflicts) > 0 {
			conflicts = append(conflicts, p.conflicts...)
			continue
		}
		S, R := p.S, p.R
		d, mode, err := s.drift(R)
		if err != nil {
			return nil, err
		}
		if !R.exists {
			mode = deletedMode(l, mode)
		}
		f := &fileChange{R: R, S: S, changed: changed, mode: mode}
		if d != nil {
			drifts = append(drifts, *d)
		}
		if f.needed() && S.exists && S.path != R.path {
			if _, err := s.workspace.Lstat(s.mustRel(S.path)); err == nil {
				drifts = append(drifts, Drift{Path: S.path, Diff: "a file now exists at " + s.rel(S.path) + " (the rebuild would replace it)\n"})
			}
		}
		plan = append(plan, f)
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Conflicts: conflicts}
	}
	if len(drifts) > 0 && !force {
		return nil, &ExternalChangeError{Drifts: drifts}
	}
	return plan, nil
}

// deletedMode is the mode a file that is brought back gets: the one it had when the
// step that removed it (a delete, or a rebuild) ran.
func deletedMode(l *lineage, fallback fs.FileMode) fs.FileMode {
	for i := len(l.steps) - 1; i >= 0; i-- {
		st := l.steps[i]
		if st.existsAfter() {
			continue
		}
		mode := ""
		if st.entry != nil {
			mode = st.entry.Mode
		} else {
			mode = st.marker.Mode
		}
		if m, err := strconv.ParseUint(mode, 8, 32); err == nil && mode != "" {
			return fs.FileMode(m).Perm()
		}
		break
	}
	return fallback
}

// drift compares the disk with the recorded version R of a file.
func (s *Store) drift(R fileState) (*Drift, fs.FileMode, error) {
	rel, err := s.relPath(R.path)
	if err != nil {
		return nil, 0, err
	}
	disk, info, err := s.workspace.ReadFile(rel, s.maxFile)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("read %s: %w", R.path, err)
	}
	mode := fs.FileMode(0o644)
	if exists {
		mode = info.Mode().Perm()
	}
	recorded := R.content()
	switch {
	case R.exists && exists && string(disk) == string(recorded):
		return nil, mode, nil
	case !R.exists && !exists:
		return nil, mode, nil
	}
	var before, after []byte
	if R.exists {
		before = recorded
	}
	if exists {
		after = disk
	}
	diff := udiff.Unified(s.relName(R.path, R.exists), s.relName(R.path, exists), before, after, 3)
	return &Drift{Path: R.path, Diff: diff}, mode, nil
}

// carryOut writes the planned files: new contents first, then removals. If a write
// fails, the files already written are put back.
func (s *Store) carryOut(plan []*fileChange) error {
	type undo struct {
		rel     string
		content []byte
		existed bool
	}
	var done []undo
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			u := done[i]
			if u.existed {
				_ = s.workspace.WriteFile(u.rel, u.content, workspace.WriteOptions{Perm: 0o644, TempDir: s.tempDir()})
			} else {
				_ = s.workspace.Remove(u.rel)
			}
		}
	}
	for _, f := range plan {
		if !f.needed() || !f.S.exists {
			continue
		}
		rel, err := s.relPath(f.S.path)
		if err != nil {
			return err
		}
		old, _, rerr := s.workspace.ReadFile(rel, s.maxFile)
		if err := s.workspace.WriteFile(rel, f.S.content(), workspace.WriteOptions{Perm: f.mode, TempDir: s.tempDir()}); err != nil {
			rollback()
			return fmt.Errorf("rebuild %s: %w", f.S.path, err)
		}
		done = append(done, undo{rel: rel, content: old, existed: rerr == nil})
		if rerr != nil { // a new file: the umask may have cut its mode
			if err := s.workspace.Chmod(rel, f.mode); err != nil {
				rollback()
				return fmt.Errorf("rebuild %s: %w", f.S.path, err)
			}
		}
	}
	for _, f := range plan {
		if !f.needed() || !f.R.exists || (f.S.exists && f.S.path == f.R.path) {
			continue
		}
		rel, err := s.relPath(f.R.path)
		if err != nil {
			return err
		}
		old, _, rerr := s.workspace.ReadFile(rel, s.maxFile)
		if err := s.workspace.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			rollback()
			return fmt.Errorf("rebuild: remove %s: %w", f.R.path, err)
		}
		if rerr == nil {
			done = append(done, undo{rel: rel, content: old, existed: true})
		}
	}
	return nil
}

// saveDecisions records the new statuses and, for every file rewritten, a rebuild
// marker and its new head.
func (s *Store) saveDecisions(snap *snapshot, next map[string]verdict, plan []*fileChange) error {
	for _, f := range plan {
		if !f.needed() {
			continue
		}
		if err := s.addMarker(f); err != nil {
			return err
		}
	}
	byConv := map[string]map[string]verdict{}
	for _, e := range snap.entries {
		if st, ok := next[e.EditID]; ok {
			if byConv[e.ConversationID] == nil {
				byConv[e.ConversationID] = map[string]verdict{}
			}
			byConv[e.ConversationID][e.EditID] = st
		}
	}
	convs := make([]string, 0, len(byConv))
	for c := range byConv {
		convs = append(convs, c)
	}
	sort.Strings(convs)
	for _, c := range convs {
		if err := s.rewriteLog(c, byConv[c]); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) addMarker(f *fileChange) error {
	seq, err := s.nextSeq(f.R.path, f.S.path)
	if err != nil {
		return err
	}
	m := &Marker{
		Seq: seq, Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		FromPath: f.R.path, FilePath: f.S.path, EditIDs: f.changed,
	}
	if !f.S.exists {
		m.FilePath = f.R.path
		if f.R.exists {
			m.Mode = fmt.Sprintf("%04o", f.mode)
		}
	}
	if f.R.exists {
		m.HashBefore = strPtr(hashBytes(f.R.content()))
	}
	if f.S.exists {
		m.HashAfter = strPtr(hashBytes(f.S.content()))
		var before []byte
		if f.R.exists {
			before = f.R.content()
		}
		diff := udiff.Unified(s.relName(f.R.path, f.R.exists), s.relName(f.S.path, true), before, f.S.content(), 3)
		rel := fmt.Sprintf("rebuilds/%d.diff", seq)
		if err := s.files.writeAtomic(rel, []byte(diff)); err != nil {
			return err
		}
		m.DiffFile = strPtr(rel)
	}
	if _, err := s.files.appendLine("rebuilds.log", m); err != nil {
		return err
	}
	hs := []head{{Path: m.FilePath, Seq: seq, Exists: f.S.exists, Hash: deref(m.HashAfter)}}
	if m.FromPath != m.FilePath {
		hs = append(hs, head{Path: m.FromPath, Seq: seq})
	}
	return s.heads.put(hs...)
}

// relPath is path relative to the workspace, refusing anything outside it.
func (s *Store) relPath(path string) (string, error) {
	r, err := filepath.Rel(s.workspace.Path(), path)
	if err != nil || r == "." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || r == ".." || filepath.IsAbs(r) {
		return "", fmt.Errorf("%s is outside the workspace %s", path, s.workspace.Path())
	}
	return r, nil
}

func (s *Store) mustRel(path string) string {
	r, _ := s.relPath(path)
	return r
}
