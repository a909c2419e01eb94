package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/udiff"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Change is one file change to record.
type Change struct {
	Op           Operation
	Path         string      // absolute; the destination of a move
	From         string      // absolute source of a move
	Before       []byte      // content before the change (of From for a move)
	BeforeExists bool        // false for a create
	BeforeInfo   fs.FileInfo // optional: the stat of the file Before was read from
	After        []byte      // content after; unused for delete and move

	// Computed by prepare, before the lock is taken.
	beforeHash, afterHash string
	diff                  string
	added, removed        int // lines of the diff
}

// Sizes from which hashing a file's content is worth avoiding (a stat and a line in
// heads.log are cheaper than hashing a quarter megabyte) or spreading over cores.
const (
	rememberFrom = 256 << 10
	parallelFrom = 1 << 20
)

// rememberIdentity records in the heads the identity big files have after their
// commit wrote them, so the next change of them need not hash their content again.
func (s *Store) rememberIdentity(entries []*Entry, changes []Change) {
	var hs []head
	for i, ch := range changes {
		if len(ch.After) < rememberFrom || ch.Op == Delete || ch.Op == Move {
			continue
		}
		rel, err := s.relPath(ch.Path)
		if err != nil {
			continue
		}
		fi, err := s.workspace.Stat(rel)
		if err != nil {
			continue
		}
		if ino, size, mtime, ok := identity(fi); ok {
			hs = append(hs, head{Path: ch.Path, Seq: entries[i].Seq, Exists: true, Hash: ch.afterHash, Ino: ino, Size: size, Mtime: mtime})
		}
	}
	if len(hs) > 0 {
		_ = s.heads.put(hs...) // only an optimisation: without it, the next change hashes
	}
}

// prepare computes the hashes and the diff of a change, the two hashes in parallel
// with the diff for big files (an 11 MB file takes tens of milliseconds to hash).
// A big file mcpdiff wrote itself is not hashed again: its head knows the hash while
// the file keeps the identity it had after that write. Called with the lock held.
func (s *Store) prepare(ch *Change) error {
	from := ch.Path
	if ch.Op == Move {
		from = ch.From
	}
	if ch.BeforeExists && ch.BeforeInfo != nil && len(ch.Before) >= rememberFrom {
		h, err := s.heads.get(from)
		if err != nil {
			return err
		}
		if h != nil && h.knows(ch.BeforeInfo) {
			ch.beforeHash = h.Hash
		}
	}
	var wg sync.WaitGroup
	run := func(f func()) {
		if len(ch.Before)+len(ch.After) < parallelFrom {
			f() // a goroutine costs more than hashing a small file
		} else {
			wg.Go(f)
		}
	}
	knownBefore := ch.beforeHash // the after hash starts from its states, if kept
	if ch.BeforeExists && ch.beforeHash == "" {
		run(func() { ch.beforeHash = hashBytes(ch.Before) })
	}
	if ch.Op != Delete && ch.Op != Move {
		if len(ch.After) >= rememberFrom {
			run(func() { ch.afterHash = s.hashes.sum(ch.After, ch.Before, knownBefore) })
		} else {
			run(func() { ch.afterHash = hashBytes(ch.After) })
		}
	}
	if ch.Op != Move {
		after := ch.After
		if ch.Op == Delete {
			after = nil
		}
		ch.diff = udiff.Unified(s.relName(ch.Path, ch.BeforeExists), s.relName(ch.Path, ch.Op != Delete), ch.Before, after, 3)
		ch.added, ch.removed = countLines(ch.diff)
	}
	wg.Wait()
	return nil
}

// Commit is one tool call's changes in one store.
type Commit struct {
	Conversation string
	Tool         string
	Source       string // SourceMCP, SourceIDE, or an agent's (SourceClaude...)
	Title        string // the conversation's title (its prompt's first line), or ""
	Changes      []Change
	// Status is the new entries' status: "" is Pending. A change the user made or
	// accepted is Accepted.
	Status Status
}

// Files are the files a batch changes, as RecordAll drives them under the store's
// lock: Verify, then Stage while the changes are hashed, diffed and logged (the
// files' writes overlap the logging), then Apply. When a step fails, Undo.
// workspace.Tx is the implementation. Verify comes before the logging because
// nothing may be logged for a file another process changed; Apply after it, so that
// a process killed in between leaves entries the next one knows were never written.
type Files interface {
	// Verify fails unless every file still holds what its Change says it held before:
	// another process may have changed it since it was read. Nothing is logged then.
	Verify() error
	// Stage prepares what Apply only has to put in place (temp files).
	Stage() error
	// Apply performs the changes, in order; when one fails it stops there.
	Apply() error
	// Undo takes back whatever Stage and Apply did, after cause failed the batch (or
	// the batch of a later store), and returns the error to report.
	Undo(cause error) error
}

// Record logs c, whose changes are on disk already, under the store's lock. A
// change made outside mcpdiff since a file's last recorded state is recorded first,
// as an accepted entry of its own ("external"), so rejecting an older edit later
// keeps it.
func (s *Store) Record(ctx context.Context, c Commit) ([]*Entry, error) {
	entries, err := RecordAll(ctx, []Batch{{Store: s, Commits: []Commit{c}}})
	if err != nil {
		return nil, err
	}
	return entries[0], nil
}

// Batch is the commits of tool calls to record in one store, in order, each call
// starting from what the one before it left, and the Files that put the state
// after the last one on disk (nil when it is there already). All are logged under
// one hold of the store's lock, and land together or not at all.
type Batch struct {
	Store   *Store
	Commits []Commit
	Files   Files
}

// RecordAll records and applies the batches of one write in several stores (calls
// that span workspace roots), one after the other, each store's lock held until
// all are done. When one fails, the earlier ones' files and log entries are taken
// back, newest first, so the write lands in every store or in none (short of a
// crash between two stores' writes). Give the stores in a fixed order (their paths
// sorted) so that two writes spanning the same stores never wait for each other in
// a cycle. It returns each batch's entries, in order.
func RecordAll(ctx context.Context, batches []Batch) ([][]*Entry, error) {
	var done []*storeWrites
	defer func() {
		for _, w := range done {
			w.unlock()
		}
	}()
	for _, b := range batches {
		w, err := b.Store.record(ctx, b)
		if err != nil {
			for i := len(done) - 1; i >= 0; i-- {
				err = done[i].undo(err)
			}
			return nil, err
		}
		done = append(done, w)
	}
	out := make([][]*Entry, len(done))
	for i, w := range done {
		if w.files != nil {
			w.store.rememberIdentity(w.entries, w.changes)
		}
		out[i] = w.entries
	}
	return out, nil
}

// storeWrites is what one batch wrote to a store, under its lock, so that a
// failure (of its own Files, or of a later store's batch) can take it back.
type storeWrites struct {
	store    *Store
	files    Files            // what puts the batch on disk; nil when it is there already
	unlock   func()           // releases the store's lock
	now      string           // the timestamp of its entries, when it logs several calls
	newFiles []string         // store files created (diffs, checkpoints)
	logs     map[string]int64 // log name → size before the append
	heads    map[string]*head // path → head before (nil: none)
	changes  []Change         // the last commit's, which files put on disk
	entries  []*Entry         // every commit's, in order
}

// undo takes back the batch's files and log entries after cause failed a later
// store's batch.
func (w *storeWrites) undo(cause error) error {
	if w.files != nil {
		cause = w.files.Undo(cause)
	}
	w.rollback()
	return cause
}

// record logs b's commits and applies its files: verify, stage while logging,
// apply. It returns with the store's lock held (unless it fails: then nothing of
// the batch stays, and the lock is released).
func (s *Store) record(ctx context.Context, b Batch) (*storeWrites, error) {
	for _, c := range b.Commits {
		if !ValidConversationID(c.Conversation) {
			return nil, fmt.Errorf("invalid conversation id %q: use letters, digits, '_', '-' or '.'", c.Conversation)
		}
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	w := &storeWrites{store: s, files: b.Files, unlock: unlock}
	if err := w.run(b.Commits); err != nil {
		unlock()
		return nil, err
	}
	return w, nil
}

// run is record's work under the lock.
func (w *storeWrites) run(commits []Commit) error {
	f := w.files
	if f == nil {
		entries, err := w.logAll(commits)
		if err != nil {
			w.rollback()
		}
		w.entries = entries
		return err
	}
	if err := f.Verify(); err != nil {
		return err
	}
	var staging sync.WaitGroup
	var stageErr error
	staging.Go(func() { stageErr = f.Stage() })
	entries, err := w.logAll(commits)
	staging.Wait()
	if err == nil {
		err = stageErr
	}
	if err == nil {
		err = f.Apply()
	}
	if err != nil {
		w.rollback()
		return f.Undo(err)
	}
	w.entries, w.changes = entries, commits[len(commits)-1].Changes
	return nil
}

// logAll logs commits in order. A change that starts from the bytes the change
// before it ended with (a batched call) takes that change's hash instead of hashing
// them again.
func (w *storeWrites) logAll(commits []Commit) ([]*Entry, error) {
	if len(commits) > 1 { // one instant: a batch cut off before its write is known as one (interrupted)
		w.now = timestamp()
	}
	var entries []*Entry
	var prev *Change
	for _, c := range commits {
		if len(c.Changes) == 0 {
			continue
		}
		if ch := &c.Changes[0]; prev != nil && ch.BeforeExists && sameBytes(ch.Before, prev.After) && prev.afterHash != "" {
			ch.beforeHash = prev.afterHash
		}
		es, err := w.logChanges(c)
		if err != nil {
			return nil, err
		}
		entries = append(entries, es...)
		prev = &c.Changes[len(c.Changes)-1]
	}
	return entries, nil
}

// sameBytes reports whether a and b are the same slice of memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// logChanges hashes, diffs and logs c's changes (after any change made outside
// mcpdiff, in its own). Called with the lock held.
func (w *storeWrites) logChanges(c Commit) ([]*Entry, error) {
	s := w.store
	for i := range c.Changes {
		if err := s.prepare(&c.Changes[i]); err != nil {
			return nil, err
		}
	}
	if err := s.recordOutsideChanges(c.Changes, SourceExternal); err != nil {
		return nil, err
	}
	return w.logCommit(c)
}

func (w *storeWrites) logCommit(c Commit) ([]*Entry, error) {
	s := w.store
	logPath := "logs/" + c.Conversation + ".log"
	index, err := s.nextIndex(c.Conversation, logPath)
	if err != nil {
		return nil, err
	}
	if index == 0 { // a new log, unless it exists and is empty
		s.files.spares.take(logPath, false)
	}
	now := w.now
	if now == "" {
		now = timestamp()
	}
	var entries []*Entry
	for _, ch := range c.Changes {
		e, err := w.entry(c, ch, index, now)
		if err != nil {
			w.rollback()
			return nil, err
		}
		entries = append(entries, e)
	}
	size, err := w.appendEntries(logPath, entries)
	if err != nil {
		w.rollback()
		return nil, err
	}
	s.known.lastIndex[c.Conversation], s.known.logSize[c.Conversation] = index, size
	for i, ch := range c.Changes {
		if err := w.moveHeads(ch, entries[i]); err != nil {
			w.rollback()
			return nil, err
		}
	}
	return entries, nil
}

// nextIndex is the tool_call_index of a conversation's next call: one more than the
// last one in its log, remembered while the log keeps the size this process left it.
func (s *Store) nextIndex(conv, logPath string) (int, error) {
	fi, err := s.files.root.Stat(logPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	if size, ok := s.known.logSize[conv]; ok && err == nil && size == fi.Size() {
		return s.known.lastIndex[conv] + 1, nil
	}
	// Someone else wrote to this conversation, or cleaned it up: forget what this
	// process believed about its checkpoints.
	prefix := "checkpoints/" + conv + "/"
	for k := range s.known.touched {
		if strings.HasPrefix(k, prefix) {
			delete(s.known.touched, k)
		}
	}
	if err != nil {
		return 0, nil
	}
	last, err := s.files.lastEntry(logPath)
	if err != nil || last == nil {
		return 0, err
	}
	return last.ToolCallIndex + 1, nil
}

// entry builds the log entry of one change and writes its checkpoint and diff.
func (w *storeWrites) entry(c Commit, ch Change, index int, now string) (*Entry, error) {
	s := w.store
	seq, err := s.nextSeq(ch.Path, ch.From)
	if err != nil {
		return nil, err
	}
	e := &Entry{
		EditID: newID(), ConversationID: c.Conversation, ToolCallIndex: index, Seq: seq,
		Timestamp: now, Operation: ch.Op, FilePath: ch.Path, ToolName: c.Tool,
		Status: Pending, Source: c.Source, Added: &ch.added, Removed: &ch.removed,
		ConversationTitle: c.Title,
	}
	if c.Status != "" {
		e.Status = c.Status
	}
	from := ch.Path
	if ch.Op == Move {
		from = ch.From
		e.SourcePath = strPtr(ch.From)
	}
	if ch.BeforeExists {
		e.HashBefore = strPtr(ch.beforeHash)
	}
	switch ch.Op {
	case Delete:
		e.Mode = s.modeOf(ch)
	case Move:
		e.HashAfter = e.HashBefore
	default:
		e.HashAfter = strPtr(ch.afterHash)
	}
	if e.CheckpointFile, err = w.checkpoint(c, ch, from); err != nil {
		return nil, err
	}
	if ch.Op == Move { // the destination is touched too (it did not exist)
		if _, err := w.checkpoint(c, Change{Op: Create, Path: ch.Path}, ch.Path); err != nil {
			return nil, err
		}
	}
	if ch.Op != Move {
		rel := filepath.ToSlash(filepath.Join("diffs", c.Conversation, e.EditID+".diff"))
		if err := w.writeNew(rel, []byte(ch.diff)); err != nil {
			return nil, err
		}
		e.DiffFile = strPtr(rel)
	}
	return e, nil
}

// modeOf is the permissions of the file a change starts from, as an octal string
// ("" if it cannot be read: the file then comes back 0644).
func (s *Store) modeOf(ch Change) string {
	info := ch.BeforeInfo
	if info == nil {
		rel, err := s.relPath(ch.Path)
		if err != nil {
			return ""
		}
		if info, err = s.workspace.Lstat(rel); err != nil {
			return ""
		}
	}
	return fmt.Sprintf("%04o", info.Mode().Perm())
}

// relName is the name a diff header shows: the path relative to the workspace, or
// /dev/null for a side where the file does not exist.
func (s *Store) relName(path string, exists bool) string {
	if !exists {
		return "/dev/null"
	}
	return s.rel(path)
}

// rel is path relative to the workspace, slash-separated.
func (s *Store) rel(path string) string {
	if r, ok := strings.CutPrefix(path, s.workspace.Path()+string(filepath.Separator)); ok {
		return filepath.ToSlash(r)
	}
	return path
}

// checkpoint saves the bytes ch starts from (of the file at path) the first time the
// history sees that path, and returns the checkpoint's path in the store (nil when
// none was written now). A path that did not exist gets an empty ".none" marker so it
// is not checkpointed later.
func (w *storeWrites) checkpoint(c Commit, ch Change, path string) (*string, error) {
	// A path the history already holds the state of needs none: its lineage replays
	// from the checkpoint its first step took. (A copy or link would only cost time
	// and space, and a link keeps the replaced file's pages from being reused.)
	if h, err := w.store.heads.get(path); err != nil || h != nil {
		return nil, err
	}
	base := w.store.checkpointName(c.Conversation, path)
	known := w.store.known.touched
	if known[base] {
		return nil, nil
	}
	for _, name := range w.store.checkpointNames(c.Conversation, path) {
		for _, ext := range []string{".chkpt", ".none"} {
			if w.store.files.exists(name + ext) {
				known[base] = true
				return nil, nil
			}
		}
	}
	known[base] = true // forgotten again if the batch rolls back
	if !ch.BeforeExists {
		return nil, w.writeNew(base+".none", nil)
	}
	name := base + ".chkpt"
	if w.linkCheckpoint(ch, name) {
		return strPtr(name), nil
	}
	if err := w.writeNew(name, ch.Before); err != nil {
		return nil, err
	}
	return strPtr(name), nil
}

// checkpointName is where conversation conv keeps path as it first found it, plus
// ".chkpt" (its bytes) or ".none" (it did not exist). It is keyed by the path
// relative to the workspace, so that a copy of the workspace finds it.
func (s *Store) checkpointName(conv, path string) string {
	return checkpointKey(conv, s.rel(path), path)
}

// checkpointNames are checkpointName, then the names mcpdiff 0.2.0 gave the same
// checkpoint: keyed by the absolute path, in each folder the workspace was in.
func (s *Store) checkpointNames(conv, path string) []string {
	names := []string{s.checkpointName(conv, path), checkpointKey(conv, path, path)}
	if earlier := s.earlier.Load(); earlier != nil {
		for _, w := range *earlier {
			names = append(names, checkpointKey(conv, filepath.Join(w, s.rel(path)), path))
		}
	}
	return names
}

func checkpointKey(conv, key, path string) string {
	return "checkpoints/" + conv + "/" + pathKey(key)[:16] + "-" + safeName(filepath.Base(path))
}

// linkCheckpoint makes the checkpoint name a second name of the file ch replaces,
// instead of a copy of its bytes: an agent edit starts a conversation, and a copy
// of an 11 MB file per edit was most of an edit's cost. It is only right when
// nothing writes that file's inode again: the file tools put a new file in place by
// rename (a new inode) or remove it, and Files does that right after the logging,
// while Verify has just checked that the file is still the one Before was read
// from. A commit without Files (the file already holds its new bytes), a move (the
// inode lives on under the new name), a link that names another inode than the one
// read, or a link the file system refuses, all get a copy. The replay checks every
// checkpoint against hash_before, so even a write in the short window before the
// rename shows as an error, never as wrong bytes.
func (w *storeWrites) linkCheckpoint(ch Change, name string) bool {
	if w.files == nil || ch.BeforeInfo == nil || !ch.BeforeInfo.Mode().IsRegular() ||
		(ch.Op != Edit && ch.Op != Replace && ch.Op != Delete) {
		return false
	}
	rel, err := w.store.relPath(ch.Path)
	if err != nil || w.store.files.mkdirs(name) != nil {
		return false
	}
	if w.store.workspace.LinkFile(rel, filepath.Join(filepath.FromSlash(Dir), filepath.FromSlash(name))) != nil {
		return false
	}
	w.newFiles = append(w.newFiles, name) // removed again if the batch rolls back
	info, err := w.store.files.root.Lstat(name)
	if err != nil || !workspace.Unchanged(ch.BeforeInfo, info) {
		w.newFiles = w.newFiles[:len(w.newFiles)-1]
		_ = w.store.files.root.Remove(name)
		return false
	}
	return true
}

func (w *storeWrites) writeNew(rel string, data []byte) error {
	if err := w.store.writeNewFile(rel, data); err != nil {
		return err
	}
	w.newFiles = append(w.newFiles, rel)
	return nil
}

// appendEntries appends a commit's entries to the conversation log in one write and
// returns the log's size after it.
func (w *storeWrites) appendEntries(logPath string, entries []*Entry) (int64, error) {
	if w.logs == nil {
		w.logs = map[string]int64{}
	}
	var lines []byte
	for _, e := range entries {
		line, err := jsonLine(e)
		if err != nil {
			return 0, err
		}
		lines = append(lines, line...)
	}
	size, err := w.store.files.appendRaw(logPath, lines)
	if err != nil {
		return 0, err
	}
	w.logs[logPath] = size
	return size + int64(len(lines)), nil
}

// moveHeads records the state each touched path is in after the change.
func (w *storeWrites) moveHeads(ch Change, e *Entry) error {
	switch ch.Op {
	case Move:
		if err := w.setHead(head{Path: ch.From, Seq: e.Seq}); err != nil {
			return err
		}
		return w.setHead(head{Path: ch.Path, Seq: e.Seq, Exists: true, Hash: deref(e.HashAfter)})
	case Delete:
		return w.setHead(head{Path: ch.Path, Seq: e.Seq})
	default:
		return w.setHead(head{Path: ch.Path, Seq: e.Seq, Exists: true, Hash: deref(e.HashAfter)})
	}
}

func (w *storeWrites) setHead(h head) error {
	if w.heads == nil {
		w.heads = map[string]*head{}
	}
	if _, saved := w.heads[h.Path]; !saved {
		old, err := w.store.heads.get(h.Path)
		if err != nil {
			return err
		}
		w.heads[h.Path] = old
	}
	return w.store.heads.put(h)
}

// rollback undoes what the batch wrote to the store, newest first. Best effort: it runs
// after a failure, with the lock held.
func (w *storeWrites) rollback() {
	s := w.store
	for path, h := range w.heads {
		if h == nil {
			_ = s.heads.put(head{Path: path, Forget: true})
		} else {
			_ = s.heads.put(*h)
		}
	}
	for name, size := range w.logs {
		_ = s.files.truncate(name, size)
	}
	for i := len(w.newFiles) - 1; i >= 0; i-- {
		_ = s.files.root.Remove(w.newFiles[i])
	}
	*s.known = *newKnownFiles() // some of what it held was undone
	w.heads, w.logs, w.newFiles = nil, nil, nil
}

// recordOutsideChanges compares every path the changes start from (and the
// destination of moves, which must not exist) with its head. Where they differ, the
// file was changed outside mcpdiff since its last recorded state: that change is
// recorded as an accepted entry of its own, from source, before the new ones.
func (s *Store) recordOutsideChanges(changes []Change, source string) error {
	var snap *snapshot
	for _, ch := range changes {
		type state struct {
			path    string
			exists  bool
			content []byte
			hash    string
		}
		states := []state{{ch.Path, ch.BeforeExists, ch.Before, ch.beforeHash}}
		if ch.Op == Move {
			states = []state{{ch.From, ch.BeforeExists, ch.Before, ch.beforeHash}, {ch.Path, false, nil, ""}}
		}
		for _, st := range states {
			h, err := s.heads.get(st.path)
			if err != nil {
				return err
			}
			if h == nil || (h.Exists == st.exists && (!st.exists || h.Hash == st.hash)) {
				continue
			}
			if snap == nil {
				if snap, err = s.load(); err != nil {
					return err
				}
			}
			recorded, err := s.recordedState(snap, st.path)
			if err != nil {
				return fmt.Errorf("%s changed outside mcpdiff and its recorded state cannot be rebuilt: %w", st.path, err)
			}
			disk := fileState{exists: st.exists, path: st.path, lines: udiff.SplitLines(st.content)}
			if cut := interrupted(snap, h, st.exists, st.hash, st.path); cut != nil {
				// Logged, then the process died before writing them: the edits never
				// happened. They are marked rejected (accepting them later applies them).
				if err := s.markNeverWritten(cut, recorded, disk); err != nil {
					return err
				}
			} else if err := s.logOutsideChange(st.path, recorded, st.exists, st.content, source); err != nil {
				return err
			}
			snap = nil // reload: the new entry is part of the history now
		}
	}
	return nil
}

// interrupted returns the entries that last set path's head when the file is exactly
// as it was before them: a process logged them and was killed before writing the
// file. They are the head's entry and the entries of the calls batched before it
// (logged at the same instant, each starting where the one before it ended). (A
// cut-off move touches two paths; it is recorded as outside changes.)
func interrupted(snap *snapshot, h *head, exists bool, hash, path string) []*Entry {
	var chain []*Entry // newest first
	for i := len(snap.entries) - 1; i >= 0; i-- {
		e := snap.entries[i]
		if e.Seq > h.Seq || (e.FilePath != path && (e.SourcePath == nil || *e.SourcePath != path)) {
			continue
		}
		if len(chain) == 0 && e.Seq != h.Seq {
			return nil
		}
		if e.Status == Rejected || e.Operation == Move || e.FilePath != path {
			return nil
		}
		if n := len(chain); n > 0 && (e.Timestamp != chain[0].Timestamp || deref(e.HashAfter) != deref(chain[n-1].HashBefore)) {
			return nil
		}
		chain = append(chain, e)
		if exists == (e.HashBefore != nil) && (!exists || hash == deref(e.HashBefore)) {
			return chain
		}
	}
	return nil
}

// markNeverWritten marks rejected the edits cut off before their file was written,
// through the journal: the file is disk, the history says recorded.
func (s *Store) markNeverWritten(cut []*Entry, recorded, disk fileState) error {
	ids := make([]string, len(cut))
	next := make(map[string]verdict, len(cut))
	for i, e := range cut {
		ids[i] = e.EditID
		next[e.EditID] = verdict{status: Rejected}
	}
	what := "marking of edit " + short(ids[0]) + " rejected (it was logged, but its file never written)"
	if len(ids) > 1 {
		what = fmt.Sprintf("marking of %d edits batched together rejected (they were logged, but their file never written)", len(ids))
	}
	j := s.newJournal(what)
	if err := s.stageVerdicts(j, cut, next); err != nil {
		return err
	}
	if err := s.stageMarker(j, &rebuild{R: recorded, S: disk, mode: 0o644, changed: ids}); err != nil {
		return err
	}
	_, err := j.commit()
	return err
}

// logOutsideChange records the difference between a file's recorded state and what
// is on disk as an accepted entry of source (SourceExternal or SourceUser) in a
// conversation of its own.
func (s *Store) logOutsideChange(path string, recorded fileState, exists bool, content []byte, source string) error {
	ch := Change{Path: path, Before: recorded.content(), BeforeExists: recorded.exists, After: content}
	switch {
	case !recorded.exists:
		ch.Op = Create
	case !exists:
		ch.Op = Delete
	default:
		ch.Op = Edit
	}
	if err := s.prepare(&ch); err != nil {
		return err
	}
	c := Commit{Conversation: newPrefixedID("ext"), Tool: "external", Source: SourceExternal, Changes: []Change{ch}, Status: Accepted}
	if source == SourceUser {
		c.Conversation, c.Tool, c.Source = newPrefixedID("user"), "save", SourceUser
	}
	// Logged for good: it stays even if the batch that found it fails.
	_, err := (&storeWrites{store: s}).logCommit(c)
	return err
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func pathKey(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:])
}

// safeName keeps a file name readable in checkpoint names without letting it carry
// separators or odd bytes.
func safeName(name string) string {
	var b strings.Builder
	for _, c := range name {
		if c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 60 {
			break
		}
	}
	return b.String()
}
