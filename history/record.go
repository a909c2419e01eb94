package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/udiff"
)

// Change is one file change to record.
type Change struct {
	Op           Operation
	Path         string // absolute; the destination of a move
	From         string // absolute source of a move
	Before       []byte // content before the change (of From for a move)
	BeforeExists bool   // false for a create
	After        []byte // content after; unused for delete and move

	beforeHash string // computed once per Record
}

// Commit is one tool call's changes.
type Commit struct {
	Conversation string
	Tool         string
	Source       string // SourceMCP or SourceIDE
	Changes      []Change
	// Check runs first under the lock: it must fail (and nothing is recorded) unless
	// every file still holds Before — another process may have changed it since it
	// was read. Apply then performs the changes, after they are logged and before the
	// lock is released; if it fails nothing is recorded. Both are nil when the
	// changes are already on disk (a diff Claude Code wrote after the editor
	// accepted it).
	Check func() error
	Apply func() error
}

// head is the last recorded state of one path (heads/<key>.json). A file whose bytes
// differ from its head was changed outside mcpdiff.
type head struct {
	Path   string `json:"path"`
	Seq    int64  `json:"seq"`
	Exists bool   `json:"exists"`
	Hash   string `json:"hash,omitempty"`
}

// Record logs c and applies it, under the store's lock. A change made outside
// mcpdiff since a file's last recorded state is recorded first, as an accepted entry
// of its own ("external"), so rejecting an older edit later keeps it.
func (s *Store) Record(ctx context.Context, c Commit) ([]*Entry, error) {
	if !validConv(c.Conversation) {
		return nil, fmt.Errorf("invalid conversation id %q: use letters, digits, '_', '-' or '.'", c.Conversation)
	}
	if len(c.Changes) == 0 {
		return nil, nil
	}
	for i := range c.Changes {
		if c.Changes[i].BeforeExists {
			c.Changes[i].beforeHash = hashBytes(c.Changes[i].Before)
		}
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if c.Check != nil {
		if err := c.Check(); err != nil {
			return nil, err
		}
	}
	if err := s.recordOutsideChanges(c.Changes); err != nil {
		return nil, err
	}
	tx := &transaction{store: s}
	entries, err := tx.logCommit(c)
	if err == nil && c.Apply != nil {
		err = c.Apply()
	}
	if err != nil {
		tx.rollback()
		return nil, err
	}
	return entries, nil
}

// transaction remembers what a commit wrote to the store so a failed Apply can take
// it back.
type transaction struct {
	store    *Store
	newFiles []string         // store files created (diffs, checkpoints)
	logs     map[string]int64 // log path → size before the append
	heads    map[string]*head // path → head before (nil: none)
}

func (t *transaction) logCommit(c Commit) ([]*Entry, error) {
	s := t.store
	logPath := filepath.Join(s.dir, "logs", c.Conversation+".log")
	last, err := lastEntry(logPath)
	if err != nil {
		return nil, err
	}
	index := 0
	if last != nil {
		index = last.ToolCallIndex + 1
	}
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	var entries []*Entry
	for _, ch := range c.Changes {
		e, err := t.entry(c, ch, index, now)
		if err != nil {
			t.rollback()
			return nil, err
		}
		entries = append(entries, e)
	}
	if err := t.appendEntries(logPath, entries); err != nil {
		t.rollback()
		return nil, err
	}
	for i, ch := range c.Changes {
		if err := t.moveHeads(ch, entries[i]); err != nil {
			t.rollback()
			return nil, err
		}
	}
	return entries, nil
}

// entry builds the log entry of one change and writes its checkpoint and diff.
func (t *transaction) entry(c Commit, ch Change, index int, now string) (*Entry, error) {
	s := t.store
	seq, err := s.nextSeq(ch.Path, ch.From)
	if err != nil {
		return nil, err
	}
	e := &Entry{
		EditID: newID(), ConversationID: c.Conversation, ToolCallIndex: index, Seq: seq,
		Timestamp: now, Operation: ch.Op, FilePath: ch.Path, ToolName: c.Tool,
		Status: Pending, Source: c.Source,
	}
	if c.Source == SourceExternal {
		e.Status = Accepted
	}
	from := ch.Path
	if ch.Op == Move {
		from = ch.From
		e.SourcePath = strPtr(ch.From)
	}
	if ch.BeforeExists {
		if ch.beforeHash == "" {
			ch.beforeHash = hashBytes(ch.Before)
		}
		e.HashBefore = strPtr(ch.beforeHash)
	}
	switch ch.Op {
	case Delete:
	case Move:
		e.HashAfter = e.HashBefore
	default:
		e.HashAfter = strPtr(hashBytes(ch.After))
	}
	if e.CheckpointFile, err = t.checkpoint(c.Conversation, from, ch.Before, ch.BeforeExists); err != nil {
		return nil, err
	}
	if ch.Op == Move { // the destination is touched too (it did not exist)
		if _, err := t.checkpoint(c.Conversation, ch.Path, nil, false); err != nil {
			return nil, err
		}
	}
	if ch.Op != Move {
		after := ch.After
		if ch.Op == Delete {
			after = nil
		}
		diff := udiff.Unified(s.relName(from, ch.BeforeExists), s.relName(ch.Path, ch.Op != Delete), ch.Before, after, 3)
		rel := filepath.ToSlash(filepath.Join("diffs", c.Conversation, e.EditID+".diff"))
		if err := t.writeNew(rel, []byte(diff)); err != nil {
			return nil, err
		}
		e.DiffFile = strPtr(rel)
	}
	return e, nil
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
	if r, err := filepath.Rel(s.workspace.Path(), path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

// checkpoint saves a file's bytes the first time a conversation touches its path and
// returns the checkpoint's path in the store (nil when none was written now). A path
// that did not exist gets an empty ".none" marker so it is not checkpointed later.
func (t *transaction) checkpoint(conv, path string, content []byte, exists bool) (*string, error) {
	base := filepath.ToSlash(filepath.Join("checkpoints", conv, pathKey(path)[:16]+"-"+safeName(filepath.Base(path))))
	for _, ext := range []string{".chkpt", ".none"} {
		if _, err := os.Stat(filepath.Join(t.store.dir, filepath.FromSlash(base+ext))); err == nil {
			return nil, nil
		}
	}
	if !exists {
		return nil, t.writeNew(base+".none", nil)
	}
	if err := t.writeNew(base+".chkpt", content); err != nil {
		return nil, err
	}
	return strPtr(base + ".chkpt"), nil
}

func (t *transaction) writeNew(rel string, data []byte) error {
	if err := writeNewFile(t.store.dir, rel, data); err != nil {
		return err
	}
	t.newFiles = append(t.newFiles, rel)
	return nil
}

func (t *transaction) appendEntries(logPath string, entries []*Entry) error {
	if t.logs == nil {
		t.logs = map[string]int64{}
	}
	for i, e := range entries {
		size, err := appendLine(logPath, e)
		if err != nil {
			return err
		}
		if i == 0 {
			t.logs[logPath] = size
		}
	}
	return nil
}

// moveHeads records the state each touched path is in after the change.
func (t *transaction) moveHeads(ch Change, e *Entry) error {
	switch ch.Op {
	case Move:
		if err := t.setHead(head{Path: ch.From, Seq: e.Seq}); err != nil {
			return err
		}
		return t.setHead(head{Path: ch.Path, Seq: e.Seq, Exists: true, Hash: deref(e.HashAfter)})
	case Delete:
		return t.setHead(head{Path: ch.Path, Seq: e.Seq})
	default:
		return t.setHead(head{Path: ch.Path, Seq: e.Seq, Exists: true, Hash: deref(e.HashAfter)})
	}
}

func (t *transaction) setHead(h head) error {
	if t.heads == nil {
		t.heads = map[string]*head{}
	}
	if _, saved := t.heads[h.Path]; !saved {
		old, err := t.store.readHead(h.Path)
		if err != nil {
			return err
		}
		t.heads[h.Path] = old
	}
	return t.store.writeHead(h)
}

// rollback undoes what the transaction wrote, newest first. Best effort: it runs
// after a failure, with the lock held.
func (t *transaction) rollback() {
	s := t.store
	for path, h := range t.heads {
		if h == nil {
			_ = os.Remove(s.headPath(path))
		} else {
			_ = s.writeHead(*h)
		}
	}
	for path, size := range t.logs {
		if size == 0 {
			_ = os.Remove(path)
		} else {
			_ = os.Truncate(path, size)
		}
	}
	for i := len(t.newFiles) - 1; i >= 0; i-- {
		_ = os.Remove(filepath.Join(s.dir, filepath.FromSlash(t.newFiles[i])))
	}
	t.heads, t.logs, t.newFiles = nil, nil, nil
}

func (s *Store) headPath(path string) string {
	return filepath.Join(s.dir, "heads", pathKey(path)[:32]+".json")
}

// readHead returns the recorded state of path, or nil if it was never recorded.
func (s *Store) readHead(path string) (*head, error) {
	b, err := os.ReadFile(s.headPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var h head
	if err := json.Unmarshal(b, &h); err != nil || h.Path != path {
		return nil, nil // unreadable or a hash-prefix clash: treat as unknown
	}
	return &h, nil
}

func (s *Store) writeHead(h head) error {
	b, _ := json.Marshal(h)
	return writeFileAtomic(s.dir, filepath.Join("heads", pathKey(h.Path)[:32]+".json"), b, 0o600)
}

// recordOutsideChanges compares every path the changes start from (and the
// destination of moves, which must not exist) with its head. Where they differ, the
// file was changed outside mcpdiff since its last recorded state: that change is
// recorded as an accepted entry of its own before the new ones.
func (s *Store) recordOutsideChanges(changes []Change) error {
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
			h, err := s.readHead(st.path)
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
			if e := interrupted(snap, h, st.exists, st.hash, st.path); e != nil {
				// Logged, then the process died before writing it: the edit never
				// happened. It is marked rejected (accepting it later applies it).
				if err := s.rewriteLog(e.ConversationID, map[string]Status{e.EditID: Rejected}); err != nil {
					return err
				}
				if err := s.addMarker(&fileChange{R: recorded, S: disk, changed: []string{e.EditID}}); err != nil {
					return err
				}
			} else if err := s.logOutsideChange(st.path, recorded, st.exists, st.content); err != nil {
				return err
			}
			snap = nil // reload: the new entry is part of the history now
		}
	}
	return nil
}

// interrupted returns the entry that last set path's head when the file is exactly
// as it was before that entry: a process logged the change and was killed before
// writing it. (A cut-off move touches two paths; it is recorded as outside changes.)
func interrupted(snap *snapshot, h *head, exists bool, hash, path string) *Entry {
	for i := len(snap.entries) - 1; i >= 0; i-- {
		e := snap.entries[i]
		if e.Seq != h.Seq {
			continue
		}
		if e.Status == Rejected || e.Operation == Move || e.FilePath != path {
			return nil
		}
		if exists != (e.HashBefore != nil) || (exists && hash != deref(e.HashBefore)) {
			return nil
		}
		return e
	}
	return nil
}

// logOutsideChange records the difference between a file's recorded state and what
// is on disk as an accepted "external" entry in a conversation of its own.
func (s *Store) logOutsideChange(path string, recorded fileState, exists bool, content []byte) error {
	ch := Change{Path: path, Before: recorded.content(), BeforeExists: recorded.exists, After: content}
	switch {
	case !recorded.exists:
		ch.Op = Create
	case !exists:
		ch.Op = Delete
	default:
		ch.Op = Edit
	}
	c := Commit{Conversation: newPrefixedID("ext"), Tool: "external", Source: SourceExternal, Changes: []Change{ch}}
	tx := &transaction{store: s}
	_, err := tx.logCommit(c)
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
