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

// Selection picks the edits a decision applies to.
type Selection struct {
	IDs          []string // edit ids (or unique prefixes of at least 4 characters) or conversation ids
	Conversation string   // every edit of this conversation
	File         string   // the pending edits of this file (absolute path)
}

// Outcome is what a decision did.
type Outcome struct {
	Edits    []string // edits whose status changed
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

// Decide sets the status of the selected edits and rebuilds the files whose content
// must change: rejecting an edit removes it while every other kept edit stays, and
// accepting a rejected edit puts it back. Nothing changes if any file would conflict,
// or (unless force) if a file was changed outside mcpdiff.
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
	picked, err := selectEntries(snap, sel)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Warnings: snap.warnings}
	next := map[string]Status{}
	for _, e := range picked {
		if e.Status != to {
			next[e.EditID] = to
			out.Edits = append(out.Edits, e.EditID)
		}
	}
	if len(next) == 0 {
		return out, nil
	}
	status := func(e *Entry) Status {
		if st, ok := next[e.EditID]; ok {
			return st
		}
		return e.Status
	}
	plan, err := s.plan(snap, next, status, force)
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

// selectEntries resolves a selection against the store.
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
	if sel.File != "" {
		for _, e := range snap.entries {
			if e.Status == Pending && (e.FilePath == sel.File || e.from() == sel.File) {
				add(e)
			}
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

// plan replays every file an effective status change touches and checks the
// result can be written.
func (s *Store) plan(snap *snapshot, next map[string]Status, status func(*Entry) Status, force bool) ([]*fileChange, error) {
	all, _ := lineages(snap)
	var plan []*fileChange
	var drifts []Drift
	for _, l := range all {
		var changed []string
		for _, st := range l.steps {
			if st.entry == nil {
				continue
			}
			if _, ok := next[st.entry.EditID]; ok && st.entry.kept() != (status(st.entry) != Rejected) {
				changed = append(changed, st.entry.EditID)
			}
		}
		if len(changed) == 0 {
			continue
		}
		S, R, err := s.replay(l, snap, status)
		if err != nil {
			return nil, err
		}
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
func (s *Store) saveDecisions(snap *snapshot, next map[string]Status, plan []*fileChange) error {
	for _, f := range plan {
		if !f.needed() {
			continue
		}
		if err := s.addMarker(f); err != nil {
			return err
		}
	}
	byConv := map[string]map[string]Status{}
	for _, e := range snap.entries {
		if st, ok := next[e.EditID]; ok {
			if byConv[e.ConversationID] == nil {
				byConv[e.ConversationID] = map[string]Status{}
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
