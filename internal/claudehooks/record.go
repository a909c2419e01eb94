package claudehooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// A write is recorded in two steps. PreToolUse keeps the file's bytes, as they are
// just before the tool runs, in the store, keyed by the tool call's id; PostToolUse
// takes them back and records the change to the bytes the file holds just after.
// Claude Code's own tool_response.originalFile is not used: it is null for new files,
// and comes with LF line endings for a CRLF file.

// place is where a write lands.
type place struct {
	path  string         // absolute, with its folders' symlinks resolved
	store *history.Store // the store that records it; nil: outside every workspace
	link  bool           // the path itself is a symlink
}

// locate finds the store of the event's file: the nearest .mcp/edit_history above it,
// else a new one in the event's cwd (Claude Code's project folder) when the file lies
// under it.
func locate(ev *Event, o Options) (*place, error) {
	p := ev.target()
	pl := &place{path: filepath.Join(history.RealPath(filepath.Dir(p)), filepath.Base(p))}
	if fi, err := os.Lstat(pl.path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		pl.link = true
	}
	var folders []string
	if ev.Cwd != "" {
		folders = append(folders, ev.Cwd)
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

// pre runs before a write: the guard may refuse it; else the file's bytes are kept.
func pre(ctx context.Context, ev *Event, o Options) Result {
	if r, refused := guard(ctx, ev.target(), o); refused {
		return r
	}
	pl, err := locate(ev, o)
	if err != nil {
		return failed("%s will not be recorded in the edit history: %v", ev.target(), err)
	}
	if pl.store == nil {
		return ok()
	}
	if !history.ValidBeforeKey(ev.ToolUseID) {
		return failed("%s will not be recorded in the edit history: the hook input has no usable tool_use_id (%q)", pl.path, ev.ToolUseID)
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
	if err := pl.store.SaveBefore(ev.ToolUseID, b); err != nil {
		return failed("%s will not be recorded in the edit history: %v", pl.path, err)
	}
	if b.Skip != "" {
		return note("%s will not be recorded in the edit history: %s", pl.path, b.Skip)
	}
	return ok()
}

// post runs after a write and records it.
func post(ctx context.Context, ev *Event, o Options) Result {
	pl, err := locate(ev, o)
	if err != nil {
		return failed("%s was written but not recorded in the edit history: %v", ev.target(), err)
	}
	if pl.store == nil {
		return note("%s is outside every workspace with an edit history; not recorded", pl.path)
	}
	b, err := pl.store.TakeBefore(ev.ToolUseID)
	resp := ev.response()
	if resp.Staged {
		return ok() // held for review: the file was not written
	}
	if err != nil {
		return failed("%s was written but not recorded in the edit history: %v", pl.path, err)
	}
	if b == nil {
		if resp.Type != "create" {
			return failed("%s was written but not recorded in the edit history: its content before the write is unknown "+
				"(the PreToolUse hook did not run for this call; `mcpdiff hooks status` shows where the hooks are installed)", pl.path)
		}
		b = &history.Before{Path: pl.path} // Claude Code created it: there was nothing before
	}
	if b.Skip != "" {
		return failed("%s was written but not recorded in the edit history: %s", pl.path, b.Skip)
	}
	if b.Path != pl.path {
		return failed("%s was written but not recorded in the edit history: the content kept before the write is of %s", pl.path, b.Path)
	}
	if pl.link {
		return failed("%s was written but not recorded in the edit history: it is a symlink (the history records files, not links)", pl.path)
	}
	after, _, err := pl.store.ReadWorkspaceFile(pl.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failed("%s was written but not recorded in the edit history: it is gone", pl.path)
	case err != nil:
		return failed("%s was written but not recorded in the edit history: %s", pl.path, unreadable(err, o.MaxFileSize))
	case edit.IsBinary(after):
		return failed("%s was written but not recorded in the edit history: it is a binary file now", pl.path)
	case b.Exists && bytes.Equal(b.Content, after):
		return ok() // nothing changed
	}
	op := history.Create
	switch {
	case !b.Exists:
	case ev.ToolName == "Write":
		op = history.Replace
	default:
		op = history.Edit
	}
	start := time.Now()
	_, err = pl.store.Record(ctx, history.Commit{
		Conversation: ConversationID(ev.SessionID, ev.PromptID),
		Tool:         ev.ToolName,
		Source:       history.SourceClaude,
		Changes:      []history.Change{{Op: op, Path: pl.path, Before: b.Content, BeforeExists: b.Exists, After: after}},
		Once:         history.RecordOnceWithin, // Neovim may have recorded it (a diff accepted there)
	})
	if err != nil {
		if ctx.Err() != nil {
			waited := time.Since(start)
			return failed("%s was written but not recorded in the edit history: the history in %s stayed locked by another "+
				"process (gave up after %v)", pl.path, pl.store.Workspace(), waited.Round(100*time.Millisecond))
		}
		return failed("%s was written but not recorded in the edit history: %v", pl.path, err)
	}
	return ok()
}
