package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Root is one allowed directory. All its file operations go through an *os.Root
// opened on the real folder, so symlinks are followed only while they stay inside.
type Root struct {
	dir   *os.Root
	real  string // absolute, symlinks resolved: what Path returns and File.Abs uses
	given string // absolute and cleaned, as given to OpenRoot (may be a symlinked alias)
}

// OpenRoot opens dir (which must be an existing directory) as a root. Its real path
// (symlinks resolved) and the spelling given are both accepted by Resolve.
func OpenRoot(dir string) (*Root, error) {
	if dir == "" || strings.ContainsRune(dir, 0) {
		return nil, newError(ErrInvalidPath, dir, nil,
			"root folder %q is not a valid path; give an existing folder", dir)
	}
	given, err := filepath.Abs(dir)
	if err != nil {
		return nil, newError(ErrInvalidPath, dir, err, "root folder %q: %v; give an absolute path", dir, err)
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, newError(fs.ErrNotExist, dir, err,
			"root folder %q cannot be opened (%v); give an existing folder", dir, unwrapPathError(err))
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, newError(fs.ErrNotExist, dir, err,
			"root folder %q cannot be opened (%v); give an existing folder", dir, unwrapPathError(err))
	}
	if !info.IsDir() {
		return nil, newError(ErrNotDir, dir, nil, "root %q is not a folder; give a folder", dir)
	}
	handle, err := os.OpenRoot(real)
	if err != nil {
		return nil, newError(fs.ErrPermission, dir, err,
			"root folder %q cannot be opened (%v); check its permissions", dir, unwrapPathError(err))
	}
	// The folder may have been swapped between EvalSymlinks and OpenRoot; make sure
	// the handle is the folder whose path we keep.
	opened, err := handle.Stat(".")
	if err != nil || !StampOf(opened).SameObject(StampOf(info)) {
		handle.Close()
		return nil, newError(ErrInvalidPath, dir, err,
			"root folder %q changed while it was being opened; try again", dir)
	}
	return &Root{dir: handle, real: real, given: filepath.Clean(given)}, nil
}

// Path is the root's real absolute path.
func (r *Root) Path() string { return r.real }

// Close releases the root's directory handle.
func (r *Root) Close() error { return r.dir.Close() }

// Lstat describes rel without following a final symlink.
func (r *Root) Lstat(rel string) (fs.FileInfo, error) {
	info, err := r.dir.Lstat(rel)
	if err != nil {
		return nil, osError("stat", rel, r, err)
	}
	return info, nil
}

// Stat describes rel, following symlinks (within the root), as ReadFile does.
func (r *Root) Stat(rel string) (fs.FileInfo, error) {
	info, err := r.dir.Stat(rel)
	if err != nil {
		return nil, osError("stat", rel, r, err)
	}
	return info, nil
}

// spellings are the absolute paths by which clients may name the root: the real
// path first, then the given alias when it differs.
func (r *Root) spellings() []string {
	if r.given == r.real {
		return []string{r.real}
	}
	return []string{r.real, r.given}
}

// relWithin returns path relative to dir when path is dir or inside it. Both must be
// clean absolute paths. The test is separator-aware: "/a/root_evil" is not inside
// "/a/root" (CVE-2025-53110).
func relWithin(dir, path string) (string, bool) {
	if path == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if strings.HasPrefix(path, prefix) {
		return path[len(prefix):], true
	}
	return "", false
}

// describeKind names a file type for error messages.
func describeKind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a file"
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeSymlink != 0:
		return "a symlink"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// OpenDir opens the folder rel inside the root as an *os.Root of its own, creating
// it (0700) first when create is set. Symlinks on the way are followed only while
// they stay inside the root.
func (r *Root) OpenDir(rel string, create bool) (*os.Root, error) {
	if create {
		if err := r.dir.MkdirAll(rel, 0o700); err != nil {
			return nil, osError("create", rel, r, err)
		}
	}
	d, err := r.dir.OpenRoot(rel)
	if err != nil {
		return nil, osError("open", rel, r, err)
	}
	return d, nil
}

// Chmod sets rel's mode bits (setuid, setgid and sticky included), past the umask
// that cut them when the file was created.
func (r *Root) Chmod(rel string, mode fs.FileMode) error {
	if err := r.dir.Chmod(rel, mode); err != nil {
		return osError("chmod", rel, r, err)
	}
	return nil
}

// RemoveEmptyDir removes rel if it is an empty folder (a folder a failed call made).
func (r *Root) RemoveEmptyDir(rel string) error {
	info, err := r.dir.Lstat(rel)
	if err != nil {
		return osError("remove", rel, r, err)
	}
	if !info.IsDir() {
		return newError(ErrNotDir, rel, nil, "cannot remove %q: it is not a folder", rel)
	}
	if err := r.dir.Remove(rel); err != nil {
		return osError("remove", rel, r, err)
	}
	return nil
}
