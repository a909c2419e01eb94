package filetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// target is a file a tool call reads or changes, as it was when the call read it.
type target struct {
	file    workspace.File
	content []byte
	exists  bool
	info    fs.FileInfo // of the file read: its identity, to notice a later change
}

// fileChange is one change a tool computed.
type fileChange struct {
	op    history.Operation
	t     *target        // the file changed; for a move, the source
	dest  workspace.File // destination of a move
	after []byte         // new content (create, replace, edit)
}

// computeFunc turns the current content of a call's files into changes and the
// result text. It is pure: it may run again if a file changes under it.
type computeFunc func(ts []*target) ([]fileChange, string, error)

// errChangedMeanwhile means a file changed between reading it and writing it (another
// process); the call is computed again on the new content.
var errChangedMeanwhile = errors.New("file changed while the edit was computed")

// toolError is an error whose message is shown to the model as it is.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &toolError{fmt.Sprintf(format, args...)} }

// fail is the isError result of a failed call: what went wrong and what to do.
func fail(err error) *mcp.CallToolResult {
	msg := err.Error()
	if !strings.HasPrefix(msg, "Error: ") {
		msg = "Error: " + msg
	}
	return mcp.NewToolResultError(msg)
}

// readOpts say how a call reads its files.
type readOpts struct {
	mayBeMissing bool // a missing file is a target that does not exist (create, write)
	binaryOK     bool // bytes are not checked for being text (move, delete)
	linkItself   bool // the first path names a symlink itself, not its target (move, delete)
}

// modify runs one tool call that changes files: read the files (holding their
// locks), compute the changes, refuse files with unsaved changes in Neovim, then log
// and apply everything through the edit history. Nothing is written when any step
// fails.
func (s *Server) modify(ctx context.Context, req mcp.CallToolRequest, tool string, paths []string, o readOpts, compute computeFunc) (*mcp.CallToolResult, error) {
	conv, note, err := conversation(req)
	if err != nil {
		return fail(err), nil
	}
	sc, err := s.scope(ctx)
	if err != nil {
		return fail(err), nil
	}
	files, err := resolveAll(sc, paths, o.linkItself)
	if err != nil {
		return fail(err), nil
	}
	defer lockAll(sc.pol, files)()
	for attempt := 0; ; attempt++ {
		ts, err := s.readTargets(files, o)
		if err != nil {
			return fail(err), nil
		}
		changes, result, err := compute(ts)
		if err != nil {
			return fail(err), nil
		}
		err = s.commit(ctx, conv, tool, changes)
		if errors.Is(err, errChangedMeanwhile) && attempt < 3 {
			continue
		}
		if err != nil {
			return fail(err), nil
		}
		if len(changes) > 0 {
			s.reloadBuffers(changes)
		}
		return mcp.NewToolResultText(result + note), nil
	}
}

// conversation is the call's mcp_conversation_id, or a new one plus the note that
// tells the client to pass it on.
func conversation(req mcp.CallToolRequest) (id, note string, err error) {
	id = strings.TrimSpace(req.GetString("mcp_conversation_id", ""))
	if id != "" {
		if !history.ValidConversationID(id) {
			return "", "", errorf("mcp_conversation_id %q is not a valid id: use the id a previous call returned (at most 128 letters, digits, '_', '-', '.'; not starting with '.')", id)
		}
		return id, "", nil
	}
	id = history.NewConversationID()
	return id, "\n\nmcp_conversation_id: " + id + " (new conversation: pass this id as mcp_conversation_id on every later file-changing call of this turn)", nil
}

// resolveAll resolves client paths, refusing one file named twice; with linkItself
// the first one is not followed if it is a symlink (a delete or move acts on the name
// it was given, never its target).
func resolveAll(sc scope, paths []string, linkItself bool) ([]workspace.File, error) {
	out := make([]workspace.File, len(paths))
	seen := make(map[string]string, len(paths))
	for i, p := range paths {
		f, err := sc.resolve(p, i == 0 && linkItself)
		if err != nil {
			return nil, err
		}
		// Every change of a call is computed from the file as it was: two of one file
		// would lose the first.
		if first, dup := seen[f.Abs]; dup {
			return nil, errorf("%q and %q are the same file; a call changes each file once: put both changes in one item, or make two calls", first, p)
		}
		seen[f.Abs] = p
		out[i] = f
	}
	return out, nil
}

// lockAll takes the in-process locks of files in a fixed order (no deadlock between
// calls that share files) and returns the function that releases them.
func lockAll(pol *workspace.Policy, files []workspace.File) func() {
	abs := make([]string, 0, len(files))
	seen := map[string]bool{}
	for _, f := range files {
		if !seen[f.Abs] {
			seen[f.Abs] = true
			abs = append(abs, f.Abs)
		}
	}
	sort.Strings(abs)
	unlocks := make([]func(), len(abs))
	for i, a := range abs {
		unlocks[i] = pol.Lock(a)
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}

func (s *Server) readTargets(files []workspace.File, o readOpts) ([]*target, error) {
	ts := make([]*target, len(files))
	for i, f := range files {
		if f.Rel == "." {
			return nil, errorf("%s is the workspace root folder itself; the file tools work on files inside it and never move or delete the root", f.Abs)
		}
		t := &target{file: f}
		content, info, err := f.Root.ReadFile(f.Rel, s.cfg.MaxFileSize)
		switch {
		case err == nil:
			t.content, t.exists, t.info = content, true, info
			if !o.binaryOK {
				if err := edit.CheckText(content); err != nil {
					return nil, errorf("%s: %v", f.Abs, err)
				}
			}
		case errors.Is(err, fs.ErrNotExist) && o.mayBeMissing:
		case errors.Is(err, fs.ErrNotExist):
			return nil, errorf("file not found: %s (check the path; relative paths are resolved against %s)", f.Abs, f.Root.Path())
		default:
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// commit records and applies changes, one history store (workspace root) at a time.
func (s *Server) commit(ctx context.Context, conv, tool string, changes []fileChange) error {
	if len(changes) == 0 {
		return nil
	}
	if err := s.checkBuffers(changes); err != nil {
		return err
	}
	if s.noHistory {
		if err := s.unchangedAll(changes); err != nil {
			return err
		}
		w := s.newWrites(changes)
		err := w.stage()
		if err == nil {
			err = w.apply()
		}
		if err != nil {
			w.discard()
		}
		return err
	}
	return s.record(ctx, conv, tool, byRoot(changes))
}

// byRoot groups changes by workspace root, each of which has its own history store,
// ordered by the roots' paths: stores are locked in that order, so two calls that
// span the same roots never wait for each other in a cycle.
func byRoot(changes []fileChange) [][]fileChange {
	index := map[*workspace.Root]int{}
	var groups [][]fileChange
	for _, c := range changes {
		r := c.t.file.Root
		i, ok := index[r]
		if !ok {
			i = len(groups)
			index[r] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		return groups[i][0].t.file.Root.Path() < groups[j][0].t.file.Root.Path()
	})
	return groups
}

// record logs and applies the first group in its root's history, and the other
// groups from inside its Apply, each under its store's lock. A failure anywhere
// undoes the writes already made and, through the failed Apply, every group's log
// entries: a call that spans roots lands in all of them or in none (short of a crash
// between two roots' writes).
func (s *Server) record(ctx context.Context, conv, tool string, groups [][]fileChange) error {
	group := groups[0]
	store, err := s.store(group[0].t.file.Root)
	if err != nil {
		return err
	}
	w := s.newWrites(group)
	commit := history.Commit{Conversation: conv, Tool: tool, Source: history.SourceMCP,
		Check: func() error { return s.unchangedAll(group) },
		Stage: w.stage,
		Apply: func() error {
			if err := w.apply(); err != nil || len(groups) == 1 {
				return err
			}
			if err := s.record(ctx, conv, tool, groups[1:]); err != nil {
				return w.undoAll(err)
			}
			return nil
		}}
	for _, c := range group {
		commit.Changes = append(commit.Changes, c.record())
	}
	if _, err := store.Record(ctx, commit); err != nil {
		w.discard()
		return err
	}
	return nil
}

func (c fileChange) record() history.Change {
	h := history.Change{Op: c.op, Path: c.t.file.Abs, Before: c.t.content, BeforeExists: c.t.exists, BeforeInfo: c.t.info, After: c.after}
	if c.op == history.Move {
		h.Path, h.From = c.dest.Abs, c.t.file.Abs
	}
	return h
}

// unchangedAll checks every changed file still holds what the call read. Runs with
// the history lock held, before anything is logged.
func (s *Server) unchangedAll(changes []fileChange) error {
	for _, c := range changes {
		if err := s.unchanged(c.t); err != nil {
			return err
		}
	}
	return nil
}

// fileWrites are the file operations of one commit: new contents are staged to temp
// files (while the history logs the change) and then put in place by apply, which
// takes back what it already did when a later change fails.
type fileWrites struct {
	s       *Server
	changes []fileChange
	staged  []*workspace.Staged // by change; nil for a delete or a move, or once committed
	newDirs [][]string          // by change: folders a create or move makes, deepest first
	undo    []undoStep          // what apply did, in order
}

// undoStep takes back one change apply made.
type undoStep struct {
	path string
	run  func() error
}

// testBeforeApply, set only by tests, runs before each change is put in place; an
// error fails that change (tests use it to make a commit fail half-way).
var testBeforeApply func(path string) error

func (s *Server) newWrites(changes []fileChange) *fileWrites {
	return &fileWrites{s: s, changes: changes, staged: make([]*workspace.Staged, len(changes)), newDirs: make([][]string, len(changes))}
}

func (w *fileWrites) opts(perm fs.FileMode) workspace.WriteOptions {
	return workspace.WriteOptions{Perm: perm, Sync: w.s.cfg.Sync, TempDir: historyTempDir}
}

// stage writes every new content to its temp file.
func (w *fileWrites) stage() error {
	for i, c := range w.changes {
		root, rel := c.t.file.Root, c.t.file.Rel
		var st *workspace.Staged
		var err error
		switch c.op {
		case history.Delete:
			continue
		case history.Move:
			w.newDirs[i] = missingDirs(root, c.dest.Rel)
			continue
		case history.Create:
			w.newDirs[i] = missingDirs(root, rel) // before staging makes them
			st, err = root.StageCreate(rel, c.after, w.opts(0o644))
		default:
			st, err = root.StageWrite(rel, c.after, w.opts(0o644))
		}
		if err != nil {
			return err
		}
		w.staged[i] = st
	}
	return nil
}

// apply puts every change in place. Runs with the history lock held, after the
// changes are logged. If one fails, the ones before it are undone, newest first.
func (w *fileWrites) apply() error {
	for i, c := range w.changes {
		if err := w.applyOne(i, c); err != nil {
			return w.undoAll(err)
		}
	}
	return nil
}

func (w *fileWrites) applyOne(i int, c fileChange) error {
	if testBeforeApply != nil {
		if err := testBeforeApply(c.t.file.Abs); err != nil {
			return err
		}
	}
	root, rel := c.t.file.Root, c.t.file.Rel
	var mode fs.FileMode
	if c.t.info != nil {
		mode = c.t.info.Mode() & modeBits
	}
	switch c.op {
	case history.Delete:
		if err := root.Remove(rel); err != nil {
			return err
		}
		w.done(c.t.file.Abs, func() error { return w.put(root, rel, c.t.content, mode, true) })
	case history.Move:
		if err := root.Move(rel, c.dest.Rel); err != nil {
			return err
		}
		w.done(c.t.file.Abs, func() error {
			if err := root.Move(c.dest.Rel, rel); err != nil {
				return err
			}
			removeDirs(root, w.newDirs[i])
			return nil
		})
	default:
		err := w.staged[i].Commit()
		w.staged[i] = nil
		if err != nil {
			return err
		}
		if c.op == history.Create {
			w.done(c.t.file.Abs, func() error {
				if err := root.Remove(rel); err != nil {
					return err
				}
				removeDirs(root, w.newDirs[i])
				return nil
			})
		} else {
			w.done(c.t.file.Abs, func() error { return w.put(root, rel, c.t.content, mode, false) })
		}
	}
	return nil
}

func (w *fileWrites) done(path string, undo func() error) {
	w.undo = append(w.undo, undoStep{path: path, run: undo})
}

// undoAll takes back every change apply made, newest first, after cause made the
// commit fail. Undoing nothing leaves cause as it is.
func (w *fileWrites) undoAll(cause error) error {
	if len(w.undo) == 0 {
		return cause
	}
	ae, ok := cause.(*applyError)
	if !ok {
		ae = &applyError{cause: cause}
	}
	for i := len(w.undo) - 1; i >= 0; i-- {
		u := w.undo[i]
		if err := u.run(); err != nil {
			ae.lost = append(ae.lost, fmt.Sprintf("%s (%v)", u.path, err))
		} else {
			ae.restored++
		}
	}
	w.undo = nil
	return ae
}

// put writes a file's old content back with its old mode; create: the file was
// deleted, and must not have been made again since.
func (w *fileWrites) put(root *workspace.Root, rel string, content []byte, mode fs.FileMode, create bool) error {
	stage := root.StageWrite
	if create {
		stage = root.StageCreate
	}
	st, err := stage(rel, content, w.opts(mode.Perm()))
	if err != nil {
		return err
	}
	if err := st.Commit(); err != nil {
		return err
	}
	return setMode(root, rel, mode)
}

// modeBits are the mode bits a restored file gets back: the umask may have cut a
// recreated file's, and a write drops setuid, setgid and sticky.
const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

func setMode(root *workspace.Root, rel string, mode fs.FileMode) error {
	info, err := root.Lstat(rel)
	if err != nil {
		return err
	}
	if info.Mode()&modeBits == mode {
		return nil
	}
	if err := root.Chmod(rel, mode); err != nil {
		return fmt.Errorf("restore the mode of %s: %w", rel, err)
	}
	return nil
}

// missingDirs lists the folders above rel that do not exist yet, deepest first.
func missingDirs(root *workspace.Root, rel string) []string {
	var out []string
	for dir := filepath.Dir(rel); dir != "."; dir = filepath.Dir(dir) {
		if _, err := root.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		out = append(out, dir)
	}
	return out
}

// removeDirs removes folders a failed call created, deepest first. One that is not
// empty (someone put a file in it meanwhile) stays.
func removeDirs(root *workspace.Root, dirs []string) {
	for _, d := range dirs {
		_ = root.RemoveEmptyDir(d) // not empty: someone else put a file there meanwhile
	}
}

// applyError is a commit that failed after some of its changes were in place, and
// were undone (all of them, unless lost names some).
type applyError struct {
	cause    error
	restored int      // changes undone
	lost     []string // files that could not be put back, with why
}

func (e *applyError) Error() string {
	if len(e.lost) == 0 {
		return fmt.Sprintf("%v; nothing was changed: the %d change(s) this call had already made were undone, and nothing was recorded in the edit history. Fix the cause, then call again", e.cause, e.restored)
	}
	return fmt.Sprintf("%v; this call's other changes were undone, except in %s: these could not be put back and may hold this call's content, so check them. Nothing was recorded in the edit history", e.cause, strings.Join(e.lost, ", "))
}

// Unwrap lets a retryable cause (a file changed meanwhile) be retried, but only when
// the disk is back to what the call read.
func (e *applyError) Unwrap() error {
	if len(e.lost) > 0 {
		return nil
	}
	return e.cause
}

// discard drops whatever was staged and not committed.
func (w *fileWrites) discard() {
	for i, st := range w.staged {
		if st != nil {
			st.Discard()
			w.staged[i] = nil
		}
	}
}

// historyTempDir stages writes inside the history store, so a process killed
// mid-write leaves no temp file among the user's files (the store sweeps it).
var historyTempDir = history.Dir + "/tmp"

// unchanged checks that t's file is still the one that was read: same inode, size
// and modification time. Writers that go through mcpdiff replace files by rename (a
// new inode) while holding the history lock; anything writing in place changes the
// modification time. Comparing identities saves reading the file a second time.
func (s *Server) unchanged(t *target) error {
	info, err := t.file.Root.Stat(t.file.Rel)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if exists != t.exists {
		return errChangedMeanwhile
	}
	if exists && (!os.SameFile(info, t.info) || info.Size() != t.info.Size() || !info.ModTime().Equal(t.info.ModTime())) {
		return errChangedMeanwhile
	}
	return nil
}

// checkBuffers refuses to change a file that has unsaved changes in Neovim.
func (s *Server) checkBuffers(changes []fileChange) error {
	if s.cfg.Buffers == nil {
		return nil
	}
	for _, c := range changes {
		for _, path := range c.paths() {
			dirty, err := s.cfg.Buffers.Modified(path)
			if err != nil {
				// Fail closed: the answer could have been yes. (Buffers whose
				// Neovim exited answers false, nil.)
				return errorf("%v", err)
			}
			if dirty {
				return errorf("%s has unsaved changes in the editor (Neovim); ask the user to save or discard them, then try again", path)
			}
		}
	}
	return nil
}

// reloadBuffers reloads Neovim's unmodified buffers of the changed files.
func (s *Server) reloadBuffers(changes []fileChange) {
	if s.cfg.Buffers == nil {
		return
	}
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.paths()...)
	}
	if err := s.cfg.Buffers.Reload(paths...); err != nil {
		s.cfg.Logf("reload Neovim buffers: %v", err)
	}
}

func (c fileChange) paths() []string {
	if c.op == history.Move {
		return []string{c.t.file.Abs, c.dest.Abs}
	}
	return []string{c.t.file.Abs}
}

// readText reads one text file for a read tool.
func (s *Server) readText(ctx context.Context, path string) (workspace.File, []byte, error) {
	sc, err := s.scope(ctx)
	if err != nil {
		return workspace.File{}, nil, err
	}
	files, err := resolveAll(sc, []string{path}, false)
	if err != nil {
		return workspace.File{}, nil, err
	}
	ts, err := s.readTargets(files, readOpts{})
	if err != nil {
		return workspace.File{}, nil, err
	}
	return files[0], ts[0].content, nil
}

// sessionID identifies the calling client (views are per client).
func sessionID(ctx context.Context) string {
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		return sess.SessionID()
	}
	return ""
}
