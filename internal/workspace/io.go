package workspace

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// defaultPerm is the mode of a new file when WriteOptions.Perm is 0 (before umask).
const defaultPerm fs.FileMode = 0o644

// tempPrefix starts the name of every temp file this package makes.
const tempPrefix = ".mcpdiff-"

// The steps that put a new name in place, as variables so tests can make them fail.
var (
	renameInRoot = (*os.Root).Rename
	linkInRoot   = (*os.Root).Link
)

// DefaultMaxFileSize is the largest text file the file tools read or edit and the
// hooks record, unless `mcpdiff serve --max-file-size` says otherwise.
const DefaultMaxFileSize = 32 << 20

// ReadFile reads a regular file. It refuses anything else (FIFOs, devices, sockets,
// folders) without blocking, and files larger than limit bytes (limit <= 0: no limit).
func (r *Root) ReadFile(rel string, limit int64) ([]byte, fs.FileInfo, error) {
	f, info, err := r.openRegular(rel)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if limit > 0 && info.Size() > limit {
		return nil, nil, tooLargeError(rel, info.Size(), limit)
	}
	var src io.Reader = f
	if limit > 0 {
		src = io.LimitReader(f, limit+1) // one byte more tells a file that grew
	}
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(src); err != nil {
		return nil, nil, osError("read", rel, r, err)
	}
	if limit > 0 && int64(buf.Len()) > limit {
		return nil, nil, tooLargeError(rel, int64(buf.Len()), limit)
	}
	return buf.Bytes(), info, nil
}

// CopyFile writes the bytes of a regular file to w as they are read, whatever its
// size: for a file too large to hold in memory. It refuses what ReadFile refuses.
func (r *Root) CopyFile(rel string, w io.Writer) (fs.FileInfo, error) {
	f, info, err := r.openRegular(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return nil, osError("read", rel, r, err)
	}
	return info, nil
}

// openRegular opens a regular file to read it, refusing anything else (FIFOs,
// devices, sockets, folders) without blocking.
func (r *Root) openRegular(rel string) (*os.File, fs.FileInfo, error) {
	// Stat before opening: opening some devices has side effects.
	info, err := r.dir.Stat(rel)
	if err != nil {
		return nil, nil, osError("read", rel, r, err)
	}
	if err := refuseNonRegular("read", rel, info); err != nil {
		return nil, nil, err
	}
	// O_NONBLOCK: if rel was swapped for a FIFO since the Stat, opening it must not
	// wait for a writer; the Stat of the open file below then refuses it.
	f, err := r.dir.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, osError("read", rel, r, err)
	}
	if info, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, osError("read", rel, r, err)
	}
	if err := refuseNonRegular("read", rel, info); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// WriteOptions tune WriteFile.
type WriteOptions struct {
	Perm fs.FileMode // mode for a new file (before umask; 0 means 0644); an existing file keeps its mode
	Sync bool        // fsync the file and its folder before returning
	// TempDir, relative to the root, is where the temp file is written before its
	// rename; empty means next to the target. The edit history stages files in its own
	// folder, which it sweeps, so a process killed mid-write leaves nothing among the
	// user's files. A TempDir on another file system falls back to the target's folder.
	TempDir string
	// TakeTemp, when set, puts an empty file at TempDir/name and reports whether it
	// did: the edit history keeps files made ahead, as creating one can take a
	// millisecond. Used for a file that is replaced (its mode is then set exactly).
	TakeTemp func(name string) bool
}

// WriteFile replaces (or creates) a regular file atomically: a temp file in the same
// folder, then rename. Missing parent folders are created. A crash leaves either the
// old or the new content, never a mix, and no temp file survives a failed call
// (unless its folder is swapped away mid-call: the temp file, out of reach, then
// stays inside the root). Power loss is covered only with Sync: without it, some
// file systems may show an empty file after a power cut right after the write.
//
// A symlink at rel is refused: renaming over it would replace the link, not change
// its target. Resolve the client's path with Policy.Resolve first, which names the
// target.
//
// The rename gives the path a new inode: other hard links to the old file (even one
// outside the root) keep the old content, and the file's owner becomes the writer.
// The permission bits are kept; setuid, setgid and sticky bits are dropped, as a
// write by a non-root user would do.
func (r *Root) WriteFile(rel string, data []byte, o WriteOptions) error {
	st, err := r.StageWrite(rel, data, o)
	if err != nil {
		return err
	}
	return st.Commit()
}

// CreateFile is WriteFile that fails with an error wrapping fs.ErrExist if rel exists,
// atomically (no window where another creator is overwritten).
//
// The new content is written to a temp file which is then hard linked to rel, and
// link(2) fails if rel exists (even as a dangling symlink). On a file system without
// hard links it falls back to checking then renaming, where a file created by someone
// else in between would be overwritten.
func (r *Root) CreateFile(rel string, data []byte, o WriteOptions) error {
	st, err := r.StageCreate(rel, data, o)
	if err != nil {
		return err
	}
	return st.Commit()
}

// Staged is a file's new content written to a temp file, waiting for Commit to put
// it in place (or Discard to drop it). WriteFile and CreateFile are a stage and a
// commit; the edit history, which must log a change before it lands, stages the
// write first so that it overlaps the logging.
type Staged struct {
	r           *Root
	op, rel     string
	tmp         string
	data        []byte
	mode        fs.FileMode
	replacing   bool // rel existed: rename over it (its mode is kept)
	info        fs.FileInfo
	settled     bool // info's modification time is one no later write can repeat
	oldSize     int64
	noClobber   bool // CreateFile: never replace a file that appeared meanwhile
	o           WriteOptions
	undoParents func()
}

// StageWrite stages WriteFile's write.
func (r *Root) StageWrite(rel string, data []byte, o WriteOptions) (*Staged, error) {
	info, err := r.dir.Lstat(rel)
	switch {
	case err == nil:
		if err := refuseNonRegular("write", rel, info); err != nil {
			return nil, err
		}
		st := &Staged{r: r, op: "write", rel: rel, data: data, mode: info.Mode().Perm(), replacing: true, oldSize: info.Size(), o: o, undoParents: func() {}}
		return st, st.writeTemp()
	case errors.Is(err, fs.ErrNotExist):
		return r.stageNew("write", rel, data, o, false)
	}
	return nil, osError("write", rel, r, err)
}

// StageCreate stages CreateFile's write.
func (r *Root) StageCreate(rel string, data []byte, o WriteOptions) (*Staged, error) {
	_, err := r.dir.Lstat(rel)
	if err == nil {
		return nil, existsError("create", rel)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, osError("create", rel, r, err)
	}
	return r.stageNew("create", rel, data, o, true)
}

func (r *Root) stageNew(op, rel string, data []byte, o WriteOptions, noClobber bool) (*Staged, error) {
	perm := o.Perm.Perm()
	if perm == 0 {
		perm = defaultPerm
	}
	undoParents, err := r.makeParents(op, rel)
	if err != nil {
		return nil, err
	}
	st := &Staged{r: r, op: op, rel: rel, data: data, mode: perm, noClobber: noClobber, o: o, undoParents: undoParents}
	if err := st.writeTemp(); err != nil {
		undoParents()
		return nil, err
	}
	return st, nil
}

func (st *Staged) writeTemp() error {
	tmp, info, settled, err := st.r.writeTemp(st.op, st.rel, st.data, st.mode, st.replacing, st.o)
	st.tmp, st.info, st.settled = tmp, info, settled
	return err
}

// Info is the staged file's stat once written: a rename keeps its identity (inode,
// size, modification time), so it is the file's after Commit, for as long as
// nobody changes it. Settled tells whether that identity is one no later write in
// place can keep (see Settled): its modification time is an instant of the fine
// clock that the file system kept, which the coarse clock stamping other writes
// does not give.
func (st *Staged) Info() (info fs.FileInfo, settled bool) { return st.info, st.settled }

// Commit puts the staged content in place: a rename (keeping an existing file's
// mode), or for CreateFile a hard link that fails if the file appeared meanwhile.
func (st *Staged) Commit() error {
	r := st.r
	var err error
	switch {
	case st.replacing || !st.noClobber:
		held := st.holdOld()
		if err = renameInRoot(r.dir, st.tmp, st.rel); err != nil {
			r.dir.Remove(st.tmp)
			err = osError(st.op, st.rel, r, err)
		}
		if held != "" {
			if err == nil {
				go r.dir.Remove(held)
			} else {
				r.dir.Remove(held)
			}
		}
	default:
		_, err = r.linkNoClobber(st.op, st.tmp, st.rel)
		r.dir.Remove(st.tmp) // the extra name after a link; already gone after a rename
	}
	if err != nil && st.o.TempDir != "" && errors.Is(err, syscall.EXDEV) {
		// The staging folder is on another file system: stage next to the file.
		st.o.TempDir = ""
		if err = st.writeTemp(); err == nil {
			return st.Commit()
		}
	}
	if err != nil {
		st.undoParents()
		return err
	}
	return r.syncDirIf(st.o.Sync, st.op, st.rel, filepath.Dir(st.rel))
}

// holdFrom is the size from which a replaced file is held by holdOld.
const holdFrom = 1 << 20

// holdOld gives a big file about to be replaced a second name in the staging folder,
// so that the rename does not free its blocks and pages: freeing 11 MB took 6 ms of
// the rename here (ext4 mounted with discard). The caller removes the second name
// off the call's path; a process killed first leaves it to the staging folder's
// sweep. "" when the file is small, there is no staging folder, or the link fails
// (the rename then frees the file itself).
func (st *Staged) holdOld() string {
	if !st.replacing || st.oldSize < holdFrom || st.o.TempDir == "" {
		return ""
	}
	name := filepath.Join(st.o.TempDir, tempPrefix+rand.Text()+".old")
	if linkInRoot(st.r.dir, st.rel, name) != nil {
		return ""
	}
	return name
}

// Discard drops a staged write that will not be committed.
func (st *Staged) Discard() {
	st.r.dir.Remove(st.tmp)
	st.undoParents()
}

// Remove deletes one regular file. It refuses the root, folders and symlinks (the
// edit history records file contents, so it could not bring a link back).
func (r *Root) Remove(rel string) error {
	if filepath.Clean(rel) == "." {
		return newError(ErrIsRoot, rel, nil, "cannot delete the root folder %s itself; mcpdiff deletes single files", r.real)
	}
	info, err := r.dir.Lstat(rel)
	if err != nil {
		return osError("delete", rel, r, err)
	}
	if err := refuseNonRegular("delete", rel, info); err != nil {
		return err
	}
	if err := r.dir.Remove(rel); err != nil {
		return osError("delete", rel, r, err)
	}
	return nil
}

// Move renames one regular file; it fails with an error wrapping fs.ErrExist if dst
// exists (no clobbering, atomically). Missing parent folders of dst are created.
//
// It refuses the root, folders, symlinks, and anything in or into the history store.
// The no-clobber step is link(dst) then unlink(src); on a file system without hard
// links it falls back to checking then renaming (see CreateFile).
func (r *Root) Move(src, dst string) error {
	if filepath.Clean(src) == "." {
		return newError(ErrIsRoot, src, nil, "cannot move the root folder %s itself; mcpdiff moves single files", r.real)
	}
	for _, p := range []string{src, dst} {
		if inHistoryStore(filepath.Clean(p)) {
			return newError(ErrHistoryStore, p, nil,
				"cannot move %q to %q: %q is inside mcpdiff's private edit history; use the mcpdiff CLI instead", src, dst, p)
		}
	}
	info, err := r.dir.Lstat(src)
	if err != nil {
		return osError("move", src, r, err)
	}
	if err := refuseNonRegular("move", src, info); err != nil {
		return err
	}
	op := fmt.Sprintf("move %q to", src)
	if _, err := r.dir.Lstat(dst); err == nil {
		return existsError(op, dst)
	}
	undoParents, err := r.makeParents(op, dst)
	if err != nil {
		return err
	}
	renamed, err := r.linkNoClobber(op, src, dst)
	if err != nil {
		undoParents()
		return err
	}
	if renamed {
		return nil
	}
	if err := r.dir.Remove(src); err != nil {
		r.dir.Remove(dst) // back to one name: the move did not happen
		undoParents()
		return osError("move", src, r, err)
	}
	return nil
}

// MoveFile moves src to dst (see Root.Move). Both must be in the same root: each
// root keeps its own edit history, which could not follow the file.
func MoveFile(src, dst File) error {
	if src.Root != dst.Root {
		return newError(ErrCrossRoot, dst.Abs, nil,
			"cannot move %s to %s: they are in different roots (%s and %s), and each root keeps its own edit history; write the content to the new path and delete the old file instead",
			src.Abs, dst.Abs, src.Root.real, dst.Root.real)
	}
	return src.Root.Move(src.Rel, dst.Rel)
}

// writeTemp writes data to a new temp file next to rel (or in o.TempDir) and
// returns its name and stat, and whether that stat is settled (Staged.Info). With
// chmod, the file is created 0600 and given mode once written (an existing file's
// mode, kept exactly); without, it is created with mode and the umask applies.
func (r *Root) writeTemp(op, rel string, data []byte, mode fs.FileMode, chmod bool, o WriteOptions) (string, fs.FileInfo, bool, error) {
	createMode := mode
	if chmod {
		createMode = 0o600
	}
	dir := filepath.Dir(rel)
	if o.TempDir != "" {
		dir = o.TempDir
	}
	f, tmp, err := r.takeTemp(dir, chmod, o)
	if f == nil && err == nil {
		f, tmp, err = r.createTemp(dir, createMode)
	}
	if o.TempDir != "" && errors.Is(err, fs.ErrNotExist) { // made on first use only
		if err = r.dir.MkdirAll(o.TempDir, 0o700); err == nil {
			f, tmp, err = r.createTemp(dir, createMode)
		}
	}
	if err != nil {
		return "", nil, false, r.tempError(op, rel, o.TempDir, err)
	}
	_, err = f.Write(data)
	if err == nil && chmod {
		err = f.Chmod(mode)
	}
	// The file's modification time, from the fine clock: the coarse one of the
	// kernel's stamps would let a write in place within the same tick keep it.
	stamp := time.Now()
	if err == nil && r.dir.Chtimes(tmp, time.Time{}, stamp) != nil {
		stamp = time.Time{}
	}
	if err == nil && o.Sync {
		err = f.Sync()
	}
	var info fs.FileInfo
	if err == nil {
		info, err = f.Stat()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		r.dir.Remove(tmp)
		return "", nil, false, r.tempError(op, rel, o.TempDir, err)
	}
	return tmp, info, !stamp.IsZero() && info.ModTime().Equal(stamp), nil
}

// tempError explains a failure to write the temp file of rel. When it is staged in
// a folder of its own (the edit history's), that folder is at fault, not rel's.
func (r *Root) tempError(op, rel, tempDir string, err error) error {
	if tempDir == "" {
		return osError(op, rel, r, err)
	}
	cause := unwrapPathError(err)
	return newError(cause, rel, err, "cannot %s %q: cannot write its temp file in %s: %v; check that folder (its permissions, and free space on its disk)",
		op, rel, filepath.Join(r.real, tempDir), cause)
}

// Install puts the regular file src (relative to the root: a file the edit history
// staged in its own folder, with its final content and mode) at rel by rename,
// creating rel's missing folders. Like WriteFile it is atomic and refuses a
// symlink, folder or other non-regular file at rel. src is gone afterwards. When
// src lies on another file system than rel, its content is copied instead.
func (r *Root) Install(src, rel string) error {
	if info, err := r.dir.Lstat(rel); err == nil {
		if err := refuseNonRegular("write", rel, info); err != nil {
			return err
		}
	}
	undoParents, err := r.makeParents("write", rel)
	if err != nil {
		return err
	}
	err = renameInRoot(r.dir, src, rel)
	if errors.Is(err, syscall.EXDEV) {
		err = r.copyInto(src, rel)
	}
	if err != nil {
		undoParents()
		return osError("write", rel, r, err)
	}
	return nil
}

// LinkFile gives the regular file rel a second name dst (relative to the root:
// the edit history keeps what a rebuild replaces this way, without a copy).
func (r *Root) LinkFile(rel, dst string) error {
	info, err := r.dir.Lstat(rel)
	if err != nil {
		return osError("link", rel, r, err)
	}
	if err := refuseNonRegular("link", rel, info); err != nil {
		return err
	}
	if err := linkInRoot(r.dir, rel, dst); err != nil {
		return osError("link", rel, r, err)
	}
	return nil
}

// copyInto is Install across file systems: src's content and mode go to rel
// through a temp file next to it.
func (r *Root) copyInto(src, rel string) error {
	data, info, err := r.ReadFile(src, 0)
	if err != nil {
		return err
	}
	st := &Staged{r: r, op: "write", rel: rel, data: data, mode: info.Mode().Perm(), replacing: true, undoParents: func() {}}
	if err := st.writeTemp(); err != nil {
		return err
	}
	if err := st.Commit(); err != nil {
		return err
	}
	return r.dir.Remove(src)
}

// takeTemp opens a temp file o.TakeTemp put in dir; nil, nil when it put none.
func (r *Root) takeTemp(dir string, chmod bool, o WriteOptions) (*os.File, string, error) {
	if o.TakeTemp == nil || !chmod || dir != o.TempDir {
		return nil, "", nil
	}
	name := tempPrefix + rand.Text() + ".tmp"
	if !o.TakeTemp(name) {
		return nil, "", nil
	}
	tmp := filepath.Join(dir, name)
	f, err := r.dir.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		r.dir.Remove(tmp)
		return nil, "", nil
	}
	return f, tmp, nil
}

// createTemp creates a new file with a random name in dir, exclusively.
func (r *Root) createTemp(dir string, mode fs.FileMode) (*os.File, string, error) {
	for {
		name := filepath.Join(dir, tempPrefix+rand.Text()+".tmp")
		f, err := r.dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if !errors.Is(err, fs.ErrExist) { // 130 random bits: a clash means a retry, not a loop
			return f, name, err
		}
	}
}

// linkNoClobber gives the file src the new name dst, failing if dst exists. It
// reports whether it had to rename (src is then gone) instead of linking (src stays).
func (r *Root) linkNoClobber(op, src, dst string) (renamed bool, err error) {
	err = linkInRoot(r.dir, src, dst)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, fs.ErrExist):
		return false, existsError(op, dst)
	case !linkUnsupported(err):
		return false, osError(op, dst, r, err)
	}
	// No hard links here (FAT, some network file systems): check, then rename.
	// A file created at dst between the two steps would be replaced.
	if _, err := r.dir.Lstat(dst); err == nil {
		return false, existsError(op, dst)
	}
	if err := r.dir.Rename(src, dst); err != nil {
		return false, osError(op, dst, r, err)
	}
	return true, nil
}

// linkUnsupported reports whether link(2) failed because the file system (or a
// security setting such as protected_hardlinks) does not allow it, rather than
// because of the paths.
func linkUnsupported(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.ENOTSUP, syscall.EOPNOTSUPP, syscall.EMLINK, syscall.ENOSYS, syscall.EXDEV} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// makeParents creates the missing folders above rel (0755, before umask) and
// returns a function that removes the ones it created, for a failed call to leave
// the tree as it found it.
func (r *Root) makeParents(op, rel string) (undo func(), err error) {
	var missing []string // deepest first
	for dir := filepath.Dir(rel); dir != "."; dir = filepath.Dir(dir) {
		info, err := r.dir.Stat(dir)
		if err == nil {
			if !info.IsDir() {
				return nil, newError(ErrNotDir, rel, nil,
					"cannot %s %q: %q is %s, not a folder; check the path", op, rel, dir, describeKind(info.Mode()))
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, osError(op, rel, r, err)
		}
		missing = append(missing, dir)
	}
	var created []string
	undo = func() {
		for i := len(created) - 1; i >= 0; i-- {
			r.dir.Remove(created[i]) // fails, harmlessly, if someone put a file in it
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		err := r.dir.Mkdir(missing[i], 0o755)
		if errors.Is(err, fs.ErrExist) {
			err = r.requireDir(missing[i]) // made by someone else meanwhile, or a dangling link
		} else if err == nil {
			created = append(created, missing[i])
		}
		if err != nil {
			undo()
			return nil, osError(op, rel, r, err)
		}
	}
	return undo, nil
}

func (r *Root) requireDir(dir string) error {
	info, err := r.dir.Stat(dir)
	if err == nil && !info.IsDir() {
		err = &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	return err
}

// syncDirIf fsyncs dir when sync is set, so that a rename or link in it survives a crash.
func (r *Root) syncDirIf(sync bool, op, rel, dir string) error {
	if !sync {
		return nil
	}
	d, err := r.dir.Open(dir)
	if err == nil {
		err = d.Sync()
		if closeErr := d.Close(); err == nil {
			err = closeErr
		}
	}
	if err != nil {
		return osError(op+" (sync the folder of)", rel, r, err)
	}
	return nil
}

// refuseNonRegular explains why op cannot work on anything but a regular file.
func refuseNonRegular(op, rel string, info fs.FileInfo) error {
	mode := info.Mode()
	switch {
	case mode.IsRegular():
		return nil
	case mode.IsDir():
		return newError(ErrNotRegular, rel, nil,
			"cannot %s %q: it is a folder; mcpdiff %ss single files (list the folder to see its files)", op, rel, op)
	case mode&fs.ModeSymlink != 0:
		return newError(ErrNotRegular, rel, nil,
			"cannot %s %q: it is a symlink; mcpdiff %ss regular files only, because its edit history records file contents and could not restore a link; %s the link's target instead, or change the link yourself",
			op, rel, op, op)
	}
	return newError(ErrNotRegular, rel, nil,
		"cannot %s %q: it is %s, not a regular file; mcpdiff only works on regular files", op, rel, describeKind(mode))
}

func existsError(op, rel string) error {
	return newError(fs.ErrExist, rel, nil,
		"cannot %s %q: a file or folder of that name already exists; choose another name, or edit the existing file instead", op, rel)
}

func tooLargeError(rel string, size, limit int64) error {
	return newError(ErrTooLarge, rel, nil,
		"cannot read %q: it is %d bytes, over the size limit of %d bytes; read part of it or raise the limit", rel, size, limit)
}
