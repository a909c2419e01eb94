package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/shell"
	"github.com/mcpdiff/mcpdiff/internal/udiff"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// ErrNoPendingChange means a selection by lines touched no pending change, or one by
// file named a file the history holds no edit of.
var ErrNoPendingChange = errors.New("no pending change")

// ErrInvalidEntry means a selection named an entry no decision acts on (Entry.Invalid).
var ErrInvalidEntry = errors.New("invalid entry")

// Selection picks the edits a decision applies to.
type Selection struct {
	IDs          []string // edit ids (or unique prefixes of at least 4 characters) or conversation ids
	Conversation string   // every edit of this conversation
	File         string   // the pending edits of this file (absolute path)
	// Lines narrows File to the pending changes that touch these lines of the
	// file as it is on disk: part of an edit when they cover part of it.
	Lines   []LineRange
	Changes []ChangeRef // changes of edits
	// WithLater makes a reject take along every later kept edit in its way (those a
	// plain reject refuses naming), instead of refusing.
	WithLater bool
}

// ChangeRef names one change of an edit: its block (PendingChange.Block), as
// `mcpdiff reject ID:N` names change N.
type ChangeRef struct {
	EditID string
	Block  int
}

// Outcome is what a decision did. A failed decision's outcome holds only warnings.
type Outcome struct {
	Edits    []string // edits whose status (of all or some of their blocks) changed
	Later    []string // of those, the later edits WithLater took along
	Blocks   int      // blocks decided when the selection named lines or changes
	Files    []string // files rewritten, created or removed on disk
	Warnings []string // corrupted log lines skipped; what recovering an interrupted decision found
	// How long the store's own checks took: its signature, the plan's, and the
	// agreement of each file's history with itself (measured for the benchmarks).
	Checks time.Duration
}

// Drift is a file that changed outside mcpdiff since its last recorded state.
type Drift struct {
	Path string
	Diff string // recorded state → what is on disk
	// Blocked is the folder on the way to Path (relative, slash-separated) that is no
	// longer a folder (a file, a symlink), or "": until it is one again the history
	// can neither restore Path nor record it.
	Blocked string
	// NowIs names what Path is now when it is no longer a regular file ("a symlink",
	// "a folder", "a special file"), or "": restore needs it moved away first.
	NowIs string
}

// ExternalChangeError stops a decision that would overwrite changes made outside
// mcpdiff. Deciding again with force discards them.
type ExternalChangeError struct {
	Drifts []Drift
	// Workspace, when set, goes into the restore commands the message suggests: the
	// decision named its workspace, so the user may be outside it.
	Workspace string
}

func (e *ExternalChangeError) Error() string {
	var paths, restores []string
	for _, d := range e.Drifts {
		if d.Blocked != "" { // restore cannot reach it: say what status says
			return fmt.Sprintf("%s changed outside mcpdiff since the last recorded edit, and this decision would discard that change; nothing was done: %s",
				d.Path, blockedNote(d.Blocked))
		}
		paths = append(paths, d.Path)
		cmd := []string{"mcpdiff", "restore", "--file", d.Path}
		if e.Workspace != "" {
			cmd = append(cmd, "--workspace", e.Workspace)
		}
		restores = append(restores, "`"+shell.Command(cmd...)+"`")
	}
	return fmt.Sprintf("%s changed outside mcpdiff since the last recorded edit, and this decision would discard that change; nothing was done. "+
		"To discard it, run %s and decide again; to keep it, leave the file until the next agent edit of it records the change as yours",
		strings.Join(paths, ", "), strings.Join(restores, " and "))
}

// Decide sets the status of the selected edits (or of their selected blocks) and
// rebuilds the files whose content must change: rejecting removes what was selected
// while every other kept edit stays, and accepting a rejected edit puts it back.
// Every file the selected edits touched is checked against its recorded state first,
// even when no status changes. Nothing changes if the result would be a guess (a
// *ConflictError naming every later edit in the way, unless sel.WithLater rejects
// them too), or (unless force) if a file was changed outside mcpdiff. The decision is carried out all or nothing (journal.go). The
// outcome is never nil, even with an error.
func (s *Store) Decide(ctx context.Context, sel Selection, to Status, force bool) (*Outcome, error) {
	if to != Accepted && to != Rejected {
		return &Outcome{}, fmt.Errorf("can only accept or reject, not %q", to)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return &Outcome{}, err
	}
	defer unlock()
	j, out, err := s.decision(sel, to, force)
	if err != nil {
		return out, err
	}
	if err := s.askGuard(out.Files); err != nil {
		return &Outcome{Warnings: out.Warnings}, err
	}
	notes, err := j.commit()
	out.Warnings = append(out.Warnings, notes...)
	if err != nil {
		return &Outcome{Warnings: out.Warnings}, err
	}
	out.Checks = s.checking
	return out, nil
}

// decision works out what Decide does, as a journal ready to commit, and the outcome
// it will have. Called with the lock held.
func (s *Store) decision(sel Selection, to Status, force bool) (*journal, *Outcome, error) {
	out := &Outcome{Warnings: s.takeNotes()}
	snap, err := s.load()
	if err != nil {
		return nil, out, err
	}
	out.Warnings = append(out.Warnings, snap.warnings...)
	if err := snap.whole(); err != nil {
		return nil, out, err
	}
	next, picked, err := s.decisions(snap, sel, to, out)
	if err != nil {
		return nil, out, err
	}
	status := func(e *Entry) verdict {
		if v, ok := next[e.EditID]; ok {
			return v
		}
		return e.verdict()
	}
	files, err := s.rebuilds(snap, touchedLineages(snap, picked, next, sel.File), next, status, force)
	var conflict *ConflictError
	for errors.As(err, &conflict) {
		conflict.Rejecting = to == Rejected
		if !sel.WithLater || to != Rejected || !takeAlong(conflict, next, out) {
			break
		}
		files, err = s.rebuilds(snap, touchedLineages(snap, picked, next, sel.File), next, status, force)
	}
	if err != nil {
		return nil, &Outcome{Warnings: out.Warnings}, err
	}
	j := s.newJournal(describeDecision(to, out.Edits))
	if err := s.stageDecision(j, snap, next, files); err != nil {
		return nil, &Outcome{Warnings: out.Warnings}, err
	}
	for _, f := range files {
		out.Files = append(out.Files, f.written()...)
	}
	return j, out, nil
}

// WriteGuard is asked, with the store's lock held and everything else ready, just
// before a decision writes users' files (absolute paths); an error refuses the
// decision and nothing is written. The CLI's guard asks the Neovims running mcpdiff
// whether they hold one of the files with unsaved changes.
type WriteGuard func(paths []string) error

// SetWriteGuard makes g the store's guard (nil: none).
func (s *Store) SetWriteGuard(g WriteGuard) { s.guard = g }

func (s *Store) askGuard(paths []string) error {
	if s.guard == nil || len(paths) == 0 {
		return nil
	}
	return s.guard(paths)
}

// describeDecision names a decision in messages.
func describeDecision(to Status, edits []string) string {
	verb := "accept"
	if to == Rejected {
		verb = "reject"
	}
	switch len(edits) {
	case 0:
		return verb + " (rebuilding files changed outside mcpdiff)"
	case 1:
		return verb + " of edit " + short(edits[0])
	}
	return fmt.Sprintf("%s of %d edits", verb, len(edits))
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

// hasHistory says whether an entry of snap names path, as its file or as a move's source.
func hasHistory(snap *snapshot, path string) bool {
	for _, e := range snap.entries {
		if e.FilePath == path || e.from() == path {
			return true
		}
	}
	return false
}

// decisions resolves a selection into the new verdict of every entry it changes.
func (s *Store) decisions(snap *snapshot, sel Selection, to Status, out *Outcome) (map[string]verdict, []*Entry, error) {
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
		return nil, nil, err
	}
	for _, e := range picked {
		decide(e, verdict{status: to})
	}
	if sel.File != "" && !hasHistory(snap, sel.File) {
		// A file the history never held is a wrong name (a typo), not "already decided".
		return nil, nil, fmt.Errorf("%w for %s: no edit of this history touches it (`mcpdiff status` lists the files it holds)", ErrNoPendingChange, sel.File)
	}
	refs := append([]ChangeRef(nil), sel.Changes...)
	switch {
	case sel.File != "" && len(sel.Lines) > 0:
		_, owner := lineages(snap)
		changes, err := s.pendingIn(snap, owner, sel.File)
		if err != nil {
			return nil, nil, err
		}
		touched := touching(changes, sel.Lines)
		if len(touched) == 0 {
			var rs []string
			for _, r := range sel.Lines {
				rs = append(rs, r.String())
			}
			return nil, nil, fmt.Errorf("%w on line(s) %s of %s (see the signs, or `%s`)", ErrNoPendingChange, strings.Join(rs, ","), sel.File,
				shell.Command("mcpdiff", "status", "--file", sel.File))
		}
		for _, h := range touched {
			refs = append(refs, ChangeRef{EditID: h.EditID, Block: h.Block})
		}
	case sel.File != "":
		// The pending edits of the file: their pending blocks (others keep theirs).
		for _, e := range snap.entries {
			if e.Status == Pending && (e.FilePath == sel.File || e.from() == sel.File) {
				v := e.verdict()
				decide(e, v.set(max(len(v.blocks), 1), to, func(i int) bool { return v.block(i) == Pending }))
			}
		}
	}
	byEdit := map[string][]int{}
	var order []*Entry
	for _, r := range refs {
		matched, err := snap.lookup(r.EditID)
		if err != nil {
			return nil, nil, err
		}
		if len(matched) != 1 {
			return nil, nil, fmt.Errorf("%w: %q names a conversation, not one edit", ErrUnknownID, r.EditID)
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
				return nil, nil, err
			}
			n = max(len(blocks), 1)
		}
		picks := map[int]bool{}
		for _, b := range byEdit[e.EditID] {
			if b < 0 || b >= n {
				return nil, nil, fmt.Errorf("%w: edit %s has no change %d (it has %d)", ErrUnknownID, short(e.EditID), b+1, n)
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
	return next, picked, nil
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
		conv, err := snap.conversationNamed(sel.Conversation)
		if err != nil {
			return nil, err
		}
		if err := snap.refuseInvalid(conv); err != nil {
			return nil, err
		}
		for _, e := range snap.entries {
			if e.ConversationID == conv {
				add(e)
			}
		}
	}
	for _, id := range sel.IDs {
		matched, err := snap.lookup(id)
		if err != nil {
			return nil, err
		}
		for _, e := range matched {
			add(e)
		}
	}
	return out, nil
}

// lookup is Named among the entries a decision may act on: an id that names an
// invalid entry, or a conversation holding one, is refused saying why.
func (snap *snapshot) lookup(id string) ([]*Entry, error) {
	if err := snap.refuseInvalid(id); err != nil {
		return nil, err
	}
	return Named(snap.entries, id)
}

// refuseInvalid fails when id names an invalid entry or a conversation holding one.
func (snap *snapshot) refuseInvalid(id string) error {
	bad, err := Named(snap.invalid, id)
	if err != nil || len(bad) == 0 {
		return nil
	}
	if valid, err := Named(snap.entries, id); err == nil && len(valid) == 1 && valid[0].EditID == id {
		return nil // a whole id of a valid entry, which also prefixes or names something invalid
	}
	what := "edit " + short(bad[0].EditID)
	if bad[0].EditID != id && bad[0].ConversationID == id {
		what = "conversation " + id + " holds edit " + short(bad[0].EditID) + ", which"
	}
	return fmt.Errorf("%w: %s is invalid: %s; %s", ErrInvalidEntry, what, bad[0].invalid, invalidAdvice)
}

// touchedLineages are the files a decision looks at: those of the picked edits and
// of the edits whose verdict changes, and the file a --file selection names even when
// none of its edits is pending.
func touchedLineages(snap *snapshot, picked []*Entry, next map[string]verdict, file string) []*lineage {
	all, owner := lineages(snap)
	ids := map[string]bool{}
	for _, e := range picked {
		ids[e.EditID] = true
	}
	for id := range next {
		ids[id] = true
	}
	var out []*lineage
	for _, l := range all {
		hit := file != "" && owner[file] == l
		for _, st := range l.steps {
			if hit {
				break
			}
			hit = st.entry != nil && ids[st.entry.EditID]
		}
		if hit {
			out = append(out, l)
		}
	}
	return out
}

// rebuild is what a decision does to one file.
type rebuild struct {
	R, S    fileState   // recorded and wanted versions
	mode    fs.FileMode // mode of the recorded file (a removed file comes back with it)
	changed []string    // edits of this file whose status changed
	writes  []fileWrite // the paths whose bytes on disk must change
}

// fileWrite takes one path from what is on disk to the wanted version.
type fileWrite struct {
	path string
	disk onDisk
	want fileState
	mode fs.FileMode // of the new content
}

// onDisk is a workspace file as it is now.
type onDisk struct {
	exists  bool
	content []byte
	mode    fs.FileMode
	unread  int64 // the size of a file over the size limit, whose content was not read
}

func (d onDisk) holds(f fileState) bool {
	if !d.exists || !f.exists {
		return d.exists == f.exists
	}
	return string(d.content) == string(f.content())
}

func (f *rebuild) written() []string {
	var out []string
	for _, w := range f.writes {
		out = append(out, w.path)
	}
	return out
}

func sameFile(a, b fileState) bool {
	if !a.exists || !b.exists {
		return a.exists == b.exists
	}
	return a.path == b.path && equalLines(a.lines, b.lines)
}

// rebuilds replays the files a decision looks at under the new verdicts, and compares
// each with the disk: a path is written where the disk differs from what the
// decision wants, and refused (unless force) where the disk is neither that nor the
// recorded version. A replay that would be a guess is a *ConflictError naming every
// later edit in the way, over all files.
func (s *Store) rebuilds(snap *snapshot, ls []*lineage, next map[string]verdict, status func(*Entry) verdict, force bool) ([]*rebuild, error) {
	var files []*rebuild
	var drifts []Drift
	var conflicts []Conflict
	for _, l := range ls {
		var changed []string
		for _, st := range l.steps {
			if st.entry == nil {
				continue
			}
			if v, ok := next[st.entry.EditID]; ok && !sameKept(st.entry.verdict(), v) {
				changed = append(changed, st.entry.EditID)
			}
		}
		p, err := s.replay(l, snap, status)
		if err != nil {
			return nil, err
		}
		if len(p.conflicts) > 0 {
			conflicts = append(conflicts, p.conflicts...)
			continue
		}
		err = s.timeCheck(func() error {
			if len(changed) == 0 { // the replay was under the recorded decisions
				return s.agrees(l, snap, p)
			}
			return s.agrees(l, snap, nil)
		})
		if err != nil {
			return nil, err
		}
		f := &rebuild{R: p.R, S: p.S, changed: changed}
		d, err := s.compare(l, f)
		if err != nil {
			return nil, err
		}
		drifts = append(drifts, d...)
		files = append(files, f)
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Conflicts: conflicts}
	}
	if len(drifts) > 0 && !force {
		return nil, &ExternalChangeError{Drifts: drifts}
	}
	return files, nil
}

// compare fills f.writes and returns the paths changed outside mcpdiff.
func (s *Store) compare(l *lineage, f *rebuild) ([]Drift, error) {
	paths := []string{f.R.path}
	if f.S.exists && f.S.path != f.R.path {
		paths = append(paths, f.S.path)
	}
	var drifts []Drift
	for i, p := range paths {
		disk, err := s.observe(p)
		if err != nil {
			return nil, err
		}
		if i == 0 { // the recorded file: its mode is kept, or comes back with it
			f.mode = cappedMode(0o644)
			if disk.exists {
				f.mode = disk.mode
			}
			if !f.R.exists {
				f.mode = deletedMode(l, f.mode)
			}
		}
		recorded, want := fileState{path: p}, fileState{path: p}
		if p == f.R.path {
			recorded = f.R
		}
		if f.S.exists && p == f.S.path {
			want = f.S
		}
		if disk.holds(want) {
			continue // already what the decision wants (a decision cut off by an older mcpdiff, or done by hand)
		}
		if !disk.holds(recorded) {
			var before, after []byte
			if recorded.exists {
				before = recorded.content()
			}
			if disk.exists {
				after = disk.content
			}
			drifts = append(drifts, Drift{Path: p, Diff: udiff.Unified(s.relName(p, recorded.exists), s.relName(p, disk.exists), before, after, 3),
				Blocked: s.blockedFolder(p)})
		}
		mode := f.mode
		if disk.exists {
			mode = disk.mode
		}
		f.writes = append(f.writes, fileWrite{path: p, disk: disk, want: want, mode: mode})
	}
	return drifts, nil
}

// observe reads a workspace file a decision may write. Only a regular file can be
// rebuilt: anything else at the path is refused before anything changes, and so is
// a path no decision writes (offLimits), whatever the store says.
func (s *Store) observe(path string) (onDisk, error) {
	rel, err := s.relPath(path)
	if err != nil {
		return onDisk{}, err
	}
	if why := s.writeOffLimits(rel); why != "" {
		return onDisk{}, fmt.Errorf("the edit history would write %s, but %s: it may have been planted; nothing was changed", filepath.ToSlash(rel), why)
	}
	fi, err := s.workspace.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return onDisk{}, nil
	}
	if err != nil {
		return onDisk{}, err
	}
	if !fi.Mode().IsRegular() {
		return onDisk{}, fmt.Errorf("%s is now %s, not a regular file: the edit history can only rebuild a regular file; move it away and try again", path, describeMode(fi.Mode()))
	}
	b, info, err := s.workspace.ReadFile(rel, s.maxFile)
	if errors.Is(err, workspace.ErrTooLarge) {
		// The way out is the user's: moved away, the file is rebuilt as recorded.
		return onDisk{}, fmt.Errorf("%s is now %d bytes, over the size limit of %d bytes of a file the edit history rebuilds: move it away and try again; nothing was changed",
			path, fi.Size(), s.maxFile)
	}
	if err != nil {
		return onDisk{}, err
	}
	return onDisk{exists: true, content: b, mode: info.Mode().Perm()}, nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a special file"
}

// deletedMode is the mode a file that is brought back gets: the one it had when the
// step that removed it (a delete, or a rebuild) ran, capped as git's (cappedMode).
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
		if m, ok := parseMode(mode); ok {
			return m
		}
		break
	}
	return fallback
}

// stageDecision puts into j everything a decision writes: the files, a rebuild
// marker and new heads for each file whose recorded version changes, and the
// conversation logs with the new statuses.
func (s *Store) stageDecision(j *journal, snap *snapshot, next map[string]verdict, files []*rebuild) error {
	for _, f := range files {
		for _, w := range f.writes {
			var old, new *[]byte
			if w.disk.exists {
				old = &w.disk.content
			}
			if w.want.exists {
				c := w.want.content()
				new = &c
			}
			j.putFile(w.path, old, new, w.disk.mode, w.mode)
		}
		if !sameFile(f.R, f.S) {
			if err := s.stageMarker(j, f); err != nil {
				return err
			}
		}
	}
	return s.stageVerdicts(j, snap.entries, next)
}

// stageMarker records in j that the file went from R to S: a line in rebuilds.log
// (with the diff in rebuilds/), and the new heads of its paths.
func (s *Store) stageMarker(j *journal, f *rebuild) error {
	seq, err := s.nextSeq(f.R.path, f.S.path)
	if err != nil {
		return err
	}
	m := &Marker{
		Seq: seq, Timestamp: timestamp(),
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
		j.putStore(rel, nil, []byte(diff))
		m.DiffFile = strPtr(rel)
	}
	line, err := jsonLine(m)
	if err != nil {
		return err
	}
	if err := j.appendTo("rebuilds.log", line); err != nil {
		return err
	}
	hs := []head{{Path: m.FilePath, Seq: seq, Exists: f.S.exists, Hash: deref(m.HashAfter)}}
	if m.FromPath != m.FilePath {
		hs = append(hs, head{Path: m.FromPath, Seq: seq})
	}
	return j.appendTo(headsLog, headLines(hs))
}

// relPath is path relative to the workspace, refusing anything outside it.
func (s *Store) relPath(path string) (string, error) {
	r, err := filepath.Rel(s.workspace.Path(), path)
	if err != nil || r == "." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || r == ".." || filepath.IsAbs(r) {
		return "", fmt.Errorf("%s is outside the workspace %s", path, s.workspace.Path())
	}
	return r, nil
}
