package workspace

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// StagingDir, relative to a workspace root, is where a Tx writes new contents before
// putting them in place: inside the edit history store, which sweeps it, so a process
// killed mid-write leaves no temp file among the user's files.
const StagingDir = HistoryDir + "/tmp"

// ErrChanged means a file is no longer the one a Tx was given (another process wrote
// it after it was read): the caller reads it again and computes its change anew.
var ErrChanged = errors.New("file changed while the edit was computed")

// Was is a file as its caller read it, before a Tx changes it.
type Was struct {
	Content []byte
	Exists  bool
	Info    fs.FileInfo // the stat of the file read: its identity, to notice a later change
	// Settled says that Info can tell any later write in place (see Settled); when
	// not, Verify compares the file's bytes with Content.
	Settled bool
}

// Tx changes several files together: Stage writes every new content to a temp file,
// Apply puts the changes in place one by one, and Undo takes back what Apply did,
// newest first (content, mode, and the folders a change created), for a call that
// must change all of its files or none. It is not crash-proof: a process killed during
// Apply leaves the files it had reached changed.
type Tx struct {
	// TakeTemp, when set, is WriteOptions.TakeTemp for the staged writes.
	TakeTemp func(name string) bool
	sync     bool
	ops      []*txOp
	applied  int // ops[:applied] are in place
}

type opKind int

const (
	opWrite opKind = iota
	opCreate
	opDelete
	opMove
)

type txOp struct {
	kind    opKind
	file    File // for a move, the source
	dest    File // for a move
	was     Was
	content []byte
	staged  *Staged // nil once put in place or dropped
	written fs.FileInfo
	settled bool     // written can tell a later write in place (Staged.Info)
	newDirs []string // folders a create or move makes, deepest first
}

// NewTx starts a Tx; with sync, the files and folders it writes are fsynced.
func NewTx(sync bool) *Tx { return &Tx{sync: sync} }

// Write replaces f (which held was) with content; a file that did not exist is
// created, never clobbering one that appeared since.
func (t *Tx) Write(f File, was Was, content []byte) {
	kind := opWrite
	if !was.Exists {
		kind = opCreate
	}
	t.ops = append(t.ops, &txOp{kind: kind, file: f, was: was, content: content})
}

// Delete removes f, which held was.
func (t *Tx) Delete(f File, was Was) {
	t.ops = append(t.ops, &txOp{kind: opDelete, file: f, was: was})
}

// Move renames src (which held was) to dst in the same root, never clobbering dst.
func (t *Tx) Move(src File, was Was, dst File) {
	t.ops = append(t.ops, &txOp{kind: opMove, file: src, dest: dst, was: was})
}

// Verify checks that every file is still the one that was read (see Same), or
// still missing; it fails with ErrChanged otherwise. A stat taken too soon after
// the file's last write to tell a write in place within the same tick (not
// Was.Settled) is not trusted: the file's bytes are compared. Writers that go
// through mcpdiff replace files while holding the history lock.
func (t *Tx) Verify() error {
	for _, op := range t.ops {
		info, err := op.file.Root.Stat(op.file.Rel)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if exists != op.was.Exists {
			return ErrChanged
		}
		w := op.was.Info
		if exists && (w == nil || !Same(w, info)) {
			return ErrChanged
		}
		if exists && !op.was.Settled {
			if same, err := op.file.Root.holds(op.file.Rel, op.was.Content); err != nil || !same {
				return cmp.Or(err, ErrChanged)
			}
		}
	}
	return nil
}

func (t *Tx) opts(perm fs.FileMode) WriteOptions {
	return WriteOptions{Perm: perm, Sync: t.sync, TempDir: StagingDir, TakeTemp: t.TakeTemp}
}

// Stage writes every new content to its temp file, and notes the folders a create or
// move will make (so that Undo removes them again).
func (t *Tx) Stage() error {
	for _, op := range t.ops {
		root, rel := op.file.Root, op.file.Rel
		var err error
		switch op.kind {
		case opDelete:
		case opMove:
			op.newDirs = missingDirs(root, op.dest.Rel)
		case opCreate:
			op.newDirs = missingDirs(root, rel) // before staging makes them
			op.staged, err = root.StageCreate(rel, op.content, t.opts(0o644))
		default:
			op.staged, err = root.StageWrite(rel, op.content, t.opts(0o644))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Apply puts every staged change in place, in order. When one fails it stops there:
// Undo takes back the ones before it.
func (t *Tx) Apply() error {
	for _, op := range t.ops[t.applied:] {
		if err := t.apply(op); err != nil {
			return err
		}
		t.applied++
	}
	return nil
}

func (t *Tx) apply(op *txOp) error {
	root, rel := op.file.Root, op.file.Rel
	switch op.kind {
	case opDelete:
		return root.Remove(rel)
	case opMove:
		return MoveFile(op.file, op.dest)
	}
	err := op.staged.Commit()
	if err == nil {
		op.written, op.settled = op.staged.Info()
		// A stat after the rename: it changed the file's change time (Same compares it).
		if info, err := root.Stat(rel); err == nil && Unchanged(op.written, info) {
			op.written = info
		}
	}
	op.staged = nil
	return err
}

// Written is the stat of the file Apply wrote at f, nil if none, and whether it is
// settled (see Staged.Info).
func (t *Tx) Written(f File) (fs.FileInfo, bool) {
	for _, op := range t.ops[:t.applied] {
		if op.file.Root == f.Root && op.file.Rel == f.Rel {
			return op.written, op.settled
		}
	}
	return nil, false
}

// Undo takes back every change Apply put in place, newest first, and drops what was
// staged, after cause failed the Tx (in Apply, or in a later step of the
// caller). It returns the error to report: cause itself when nothing had been put in
// place, else an *ApplyError counting what was undone and naming what could not be.
func (t *Tx) Undo(cause error) error {
	for _, op := range t.ops {
		if op.staged != nil {
			op.staged.Discard()
			op.staged = nil
		}
	}
	if t.applied == 0 {
		return cause
	}
	ae, ok := cause.(*ApplyError)
	if !ok {
		ae = &ApplyError{Cause: cause}
	}
	for ; t.applied > 0; t.applied-- {
		op := t.ops[t.applied-1]
		if err := t.undo(op); err != nil {
			ae.Lost = append(ae.Lost, fmt.Sprintf("%s (%v)", op.file.Abs, err))
		} else {
			ae.Restored++
		}
	}
	return ae
}

func (t *Tx) undo(op *txOp) error {
	root, rel := op.file.Root, op.file.Rel
	var mode fs.FileMode
	if op.was.Info != nil {
		mode = op.was.Info.Mode() & modeBits
	}
	switch op.kind {
	case opDelete:
		return t.put(root, rel, op.was.Content, mode, true)
	case opMove:
		if err := root.Move(op.dest.Rel, rel); err != nil {
			return err
		}
		removeDirs(root, op.newDirs)
		return nil
	case opCreate:
		if err := root.Remove(rel); err != nil {
			return err
		}
		removeDirs(root, op.newDirs)
		return nil
	}
	return t.put(root, rel, op.was.Content, mode, false)
}

// put writes a file's old content back with its old mode; create: the file was
// deleted, and must not have been made again since.
func (t *Tx) put(root *Root, rel string, content []byte, mode fs.FileMode, create bool) error {
	stage := root.StageWrite
	if create {
		stage = root.StageCreate
	}
	st, err := stage(rel, content, t.opts(mode.Perm()))
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

func setMode(root *Root, rel string, mode fs.FileMode) error {
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
func missingDirs(root *Root, rel string) []string {
	var out []string
	for dir := filepath.Dir(rel); dir != "."; dir = filepath.Dir(dir) {
		if _, err := root.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		out = append(out, dir)
	}
	return out
}

// removeDirs removes folders a failed Tx created, deepest first. One that
// is not empty (someone put a file in it meanwhile) stays.
func removeDirs(root *Root, dirs []string) {
	for _, d := range dirs {
		_ = root.RemoveEmptyDir(d)
	}
}

// ApplyError is a Tx that failed after some of its changes were in place,
// and were undone (all of them, unless Lost names some).
type ApplyError struct {
	Cause    error
	Restored int      // changes undone
	Lost     []string // files that could not be put back, with why
}

func (e *ApplyError) Error() string {
	if len(e.Lost) == 0 {
		return fmt.Sprintf("%v; nothing was changed: the %d change(s) this call had already made were undone", e.Cause, e.Restored)
	}
	return fmt.Sprintf("%v; this call's other changes were undone, except in %s: these could not be put back and may hold this call's content, so check them",
		e.Cause, strings.Join(e.Lost, ", "))
}

// Unwrap lets a retryable cause (ErrChanged) be retried, but only when the disk is
// back to what the call read.
func (e *ApplyError) Unwrap() error {
	if len(e.Lost) > 0 {
		return nil
	}
	return e.Cause
}
