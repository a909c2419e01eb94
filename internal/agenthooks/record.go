package agenthooks

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// A write is recorded in two steps. The before-hook keeps each file's bytes, as they
// are just before the tool runs, in the store, keyed by the tool call (its id, or its
// session, tool and arguments); the after-hook takes them back and records the change
// to the bytes the file holds just after. What agents report of the old content is
// not used: Claude Code's originalFile is null for new files and comes with LF line
// endings for a CRLF file.

// place is where a write lands.
type place struct {
	path  string         // absolute, with its folders' symlinks resolved
	store *history.Store // the store that records it; nil: outside every workspace
	link  bool           // the path itself is a symlink
}

// locate finds the store of a file: the nearest .mcp/edit_history above it, else a
// new one in the agent's cwd (its project folder) when the file lies under it.
func locate(p, cwd string, o Options) (*place, error) {
	pl := &place{path: filepath.Join(history.RealPath(filepath.Dir(p)), filepath.Base(p))}
	if fi, err := os.Lstat(pl.path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		pl.link = true
	}
	var folders []string
	if cwd != "" {
		folders = append(folders, cwd)
	}
	folder := history.StoreFolder(pl.path, folders)
	if folder == "" {
		return pl, nil
	}
	store := filepath.Join(folder, filepath.FromSlash(history.Dir))
	if pl.path == store || strings.HasPrefix(pl.path, store+string(filepath.Separator)) {
		return pl, nil // the history's own files are never recorded
	}
	s, err := history.OpenFolder(folder)
	if err != nil {
		return nil, err
	}
	if o.MaxFileSize > 0 {
		s.SetMaxFileSize(o.MaxFileSize)
	}
	pl.store = s
	return pl, nil
}

// unreadable says why a file cannot be recorded.
func unreadable(err error, limit int64) string {
	switch {
	case errors.Is(err, workspace.ErrTooLarge):
		if limit >= 1<<20 {
			return fmt.Sprintf("it is larger than the history's size limit (%d MB)", limit>>20)
		}
		return fmt.Sprintf("it is larger than the history's size limit (%d bytes)", limit)
	case errors.Is(err, workspace.ErrNotRegular):
		return "it is not a regular file"
	}
	return err.Error()
}

// snapshotKey is the key of the snapshot of the call's i-th file. queued: the call
// has no id, the key is a prefix that each before-hook completes with the time, and
// the after-hook takes the oldest (two identical calls at once are two snapshots).
func snapshotKey(c *Call, a *Agent, i int) (key string, queued bool, err error) {
	if c.CallID == "" && c.PairWith == "" {
		if a == Claude {
			return "", false, fmt.Errorf("the hook input has no usable tool_use_id (%q)", c.CallID)
		}
		return "", false, errors.New("the hook input names no tool call")
	}
	if c.CallID == "" {
		h := sha256.Sum256([]byte(a.Name + "\x00" + c.PairWith))
		return "q" + hex.EncodeToString(h[:12]) + "." + strconv.Itoa(i) + "-", true, nil
	}
	key = c.CallID
	if !history.ValidBeforeKey(key) {
		if a == Claude {
			return "", false, fmt.Errorf("the hook input has no usable tool_use_id (%q)", c.CallID)
		}
		h := sha256.Sum256([]byte(a.Name + "\x00" + c.CallID))
		key = "c" + hex.EncodeToString(h[:12])
	}
	if len(c.Files) > 1 {
		key += "." + strconv.Itoa(i)
	}
	return key, false, nil
}

// queuedName completes a queued key: the time orders the snapshots of one key.
func queuedName(prefix string) string {
	var r [3]byte
	_, _ = rand.Read(r[:])
	return prefix + fmt.Sprintf("%019d", time.Now().UnixNano()) + hex.EncodeToString(r[:])
}

// pre runs before a write: the guard may refuse it; else each file's bytes are kept.
func pre(ctx context.Context, c *Call, o Options, a *Agent) Result {
	if r, refused := guard(ctx, c.Paths(), o, a); refused {
		return r
	}
	var notes []string
	for i, t := range c.Files {
		pl, err := locate(t.Path, c.Cwd, o)
		if err != nil {
			return failed("%s will not be recorded in the edit history: %v", t.Path, err)
		}
		if pl.store == nil {
			continue
		}
		key, queued, err := snapshotKey(c, a, i)
		if err != nil {
			return failed("%s will not be recorded in the edit history: %v", pl.path, err)
		}
		if queued {
			key = queuedName(key)
		}
		b := history.Before{Path: pl.path}
		content, _, err := pl.store.ReadWorkspaceFile(pl.path)
		switch {
		case pl.link:
			b.Skip = "it is a symlink (the history records files, not links)"
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			b.Skip = unreadable(err, o.MaxFileSize)
		case edit.IsBinary(content):
			b.Skip = "it is a binary file"
		default:
			b.Exists, b.Content = true, content
		}
		if err := pl.store.SaveBefore(key, b); err != nil {
			return failed("%s will not be recorded in the edit history: %v", pl.path, err)
		}
		if b.Skip != "" {
			notes = append(notes, fmt.Sprintf("%s will not be recorded in the edit history: %s", pl.path, b.Skip))
		}
	}
	if len(notes) > 0 {
		return note("%s", strings.Join(notes, "; "))
	}
	return ok()
}

// commits are one call's changes in one store: the moves and writes, then the edits
// of moved files (a second step, recorded after the move).
type commits struct {
	store        *history.Store
	main, edited []history.Change
}

// post runs after a write and records it: one entry per file written.
func post(ctx context.Context, c *Call, o Options, a *Agent) Result {
	byStore := map[string]*commits{}
	add := func(s *history.Store, ch history.Change, second bool) {
		k := s.Workspace()
		if byStore[k] == nil {
			byStore[k] = &commits{store: s}
		}
		if second {
			byStore[k].edited = append(byStore[k].edited, ch)
		} else {
			byStore[k].main = append(byStore[k].main, ch)
		}
	}
	var problems, notes []string
	for i, t := range c.Files {
		msg, isNote := changesOf(ctx, c, a, i, t, o, add)
		switch {
		case msg == "":
		case isNote:
			notes = append(notes, msg)
		default:
			problems = append(problems, msg)
		}
	}
	if a == Claude {
		notes = append(notes, leaveToBridge(ctx, byStore, o)...)
	}
	if len(byStore) > 0 {
		conv, title := conversation(c, o, a)
		if err := record(ctx, c, a, conv, title, byStore); err != nil {
			problems = append(problems, err.Error())
		}
	}
	switch {
	case len(problems) > 0:
		return failed("%s", strings.Join(problems, "; "))
	case len(notes) > 0:
		return note("%s", strings.Join(notes, "; "))
	}
	return ok()
}

// record writes the changes into their stores, in the order of the stores' paths.
func record(ctx context.Context, c *Call, a *Agent, conv, title string, byStore map[string]*commits) error {
	var keys []string
	for k := range byStore {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var all []history.Batch
	var paths []string
	for _, k := range keys {
		g := byStore[k]
		commit := func(changes []history.Change) history.Commit {
			for _, ch := range changes {
				paths = append(paths, ch.Path)
			}
			return history.Commit{Conversation: conv, Title: title, Tool: c.Tool, Source: a.Source, Changes: changes}
		}
		b := history.Batch{Store: g.store}
		for _, changes := range [][]history.Change{g.main, g.edited} {
			if len(changes) > 0 {
				b.Commits = append(b.Commits, commit(changes))
			}
		}
		all = append(all, b)
	}
	start := time.Now()
	if _, err := history.RecordAll(ctx, all); err != nil {
		what := strings.Join(paths, ", ")
		if ctx.Err() != nil {
			return fmt.Errorf("%s was written but not recorded in the edit history: the history in %s stayed locked by another "+
				"process (gave up after %v)", what, byStore[keys[0]].store.Workspace(), time.Since(start).Round(100*time.Millisecond))
		}
		return fmt.Errorf("%s was written but not recorded in the edit history: %v", what, err)
	}
	return nil
}

// changesOf finds what the call did to its i-th file and hands the changes to add. It
// returns a message: why the file is not recorded (isNote: nothing to worry about).
func changesOf(ctx context.Context, c *Call, a *Agent, i int, t Target, o Options, add func(*history.Store, history.Change, bool)) (msg string, isNote bool) {
	notRecorded := func(format string, args ...any) (string, bool) {
		return fmt.Sprintf("%s was written but not recorded in the edit history: ", t.Path) + fmt.Sprintf(format, args...), false
	}
	pl, err := locate(t.Path, c.Cwd, o)
	if err != nil {
		return notRecorded("%v", err)
	}
	if pl.store == nil {
		return fmt.Sprintf("%s is outside every workspace with an edit history; not recorded", pl.path), true
	}
	key, queued, err := snapshotKey(c, a, i)
	var b *history.Before
	if err == nil {
		if queued {
			b, err = pl.store.TakeFirstBefore(key)
		} else {
			b, err = pl.store.TakeBefore(key)
		}
	}
	if c.NotWritten {
		return "", false // held for review: the file was not written
	}
	if err != nil {
		return notRecorded("%v", err)
	}
	after, _, readErr := pl.store.ReadWorkspaceFile(pl.path)
	if b == nil {
		switch {
		case c.Created:
			b = &history.Before{Path: pl.path} // the agent created it: there was nothing before
		case c.Undo != nil && readErr == nil:
			if held, err := pl.store.Holds(ctx, pl.path, after); err != nil || held {
				if err != nil {
					return notRecorded("%v", err)
				}
				return "", false // recorded already: by this edit's postToolUse
			}
			before, undone := c.Undo(after)
			if !undone {
				return notRecorded("its content before the write is unknown (no before-hook ran for it, and its edits do not undo)")
			}
			b = &history.Before{Path: pl.path, Exists: true, Content: before}
		default:
			return notRecorded("its content before the write is unknown (the %s hook did not run for this call; "+
				"`mcpdiff hooks status%s` shows where the hooks are installed)", beforeEvent(a), agentFlag(a))
		}
	}
	if b.Skip != "" {
		return notRecorded("%s", b.Skip)
	}
	if b.Path != pl.path {
		return notRecorded("the content kept before the write is of %s", b.Path)
	}
	if pl.link {
		return notRecorded("it is a symlink (the history records files, not links)")
	}
	if t.MoveTo != "" && errors.Is(readErr, fs.ErrNotExist) && b.Exists {
		return moved(t, b, pl, o, add)
	}
	switch {
	case errors.Is(readErr, fs.ErrNotExist) && !b.Exists:
		return "", false // the tool created nothing (it failed)
	case errors.Is(readErr, fs.ErrNotExist) && (t.Delete || a != Claude):
		add(pl.store, history.Change{Op: history.Delete, Path: pl.path, Before: b.Content, BeforeExists: true}, false)
		return "", false
	case errors.Is(readErr, fs.ErrNotExist):
		return notRecorded("it is gone")
	case readErr != nil:
		return notRecorded("%s", unreadable(readErr, o.MaxFileSize))
	case edit.IsBinary(after):
		return notRecorded("it is a binary file now")
	case b.Exists && bytes.Equal(b.Content, after):
		return "", false // nothing changed
	}
	op := history.Edit
	switch {
	case !b.Exists:
		op = history.Create
	case t.Whole:
		op = history.Replace
	}
	add(pl.store, history.Change{Op: op, Path: pl.path, Before: b.Content, BeforeExists: b.Exists, After: after}, false)
	return "", false
}

// moved records a file the call moved (and perhaps changed): a move, then an edit of
// the moved file; across two stores, a delete in one and a create in the other.
func moved(t Target, b *history.Before, from *place, o Options, add func(*history.Store, history.Change, bool)) (string, bool) {
	to, err := locate(t.MoveTo, "", o)
	if err == nil && to.store == nil {
		to, err = locate(t.MoveTo, from.store.Workspace(), o)
	}
	if err != nil {
		return fmt.Sprintf("%s was moved to %s but not recorded in the edit history: %v", t.Path, t.MoveTo, err), false
	}
	after, _, err := from.store.ReadWorkspaceFile(to.path)
	if to.store != nil {
		after, _, err = to.store.ReadWorkspaceFile(to.path)
	}
	if err != nil {
		return fmt.Sprintf("%s was moved to %s but not recorded in the edit history: %s", t.Path, t.MoveTo, unreadable(err, o.MaxFileSize)), false
	}
	if to.store == nil || to.store.Workspace() != from.store.Workspace() {
		add(from.store, history.Change{Op: history.Delete, Path: from.path, Before: b.Content, BeforeExists: true}, false)
		if to.store != nil {
			add(to.store, history.Change{Op: history.Create, Path: to.path, After: after}, false)
		}
		return "", false
	}
	add(from.store, history.Change{Op: history.Move, From: from.path, Path: to.path, Before: b.Content, BeforeExists: true}, false)
	if !bytes.Equal(after, b.Content) {
		add(from.store, history.Change{Op: history.Edit, Path: to.path, Before: b.Content, BeforeExists: true, After: after}, true)
	}
	return "", false
}

// beforeEvent is the name of the agent's before-hook, for messages.
func beforeEvent(a *Agent) string {
	switch a {
	case Gemini:
		return "BeforeTool"
	case OpenCode:
		return "tool.execute.before"
	case Copilot, Cursor:
		return "preToolUse"
	}
	return PreToolUse
}

// agentFlag is the --agent flag that names a, "" for Claude Code (the default).
func agentFlag(a *Agent) string {
	if a == Claude {
		return ""
	}
	return " --agent " + a.Name
}
