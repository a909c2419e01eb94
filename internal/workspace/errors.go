package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Kinds of refusal. An *Error wraps exactly one of these (or one of fs.ErrNotExist,
// fs.ErrExist, fs.ErrPermission), so callers test with errors.Is.
var (
	ErrInvalidPath     = errors.New("invalid path")
	ErrOutside         = errors.New("outside the allowed roots")
	ErrHistoryStore    = errors.New("inside mcpdiff's edit history store")
	ErrDanglingSymlink = errors.New("dangling symlink")
	ErrSymlinkLoop     = errors.New("too many levels of symbolic links")
	ErrAmbiguous       = errors.New("ambiguous Unicode name")
	ErrNotDir          = errors.New("not a folder")
	ErrNotRegular      = errors.New("not a regular file")
	ErrTooLarge        = errors.New("file too large")
	ErrIsRoot          = errors.New("is a root folder")
	ErrCrossRoot       = errors.New("across roots")
)

// Error is every error this package returns. Its message says what was wrong and
// what to do next, ready to be shown to a user or a model.
type Error struct {
	Kind error  // one of the Err* values above, or fs.ErrNotExist/ErrExist/ErrPermission
	Path string // the path the operation was about, as given
	Err  error  // the underlying OS error, if any
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Unwrap lets errors.Is match both the Kind and the underlying OS error.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func newError(kind error, path string, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Path: path, Err: cause, msg: fmt.Sprintf(format, args...)}
}

// osError turns an error from an os.Root call into an *Error whose message names the
// operation, the path and the next step. op is a verb phrase like "read" or "write".
func osError(op, rel string, root *Root, err error) error {
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	switch {
	case isEscape(err):
		return newError(ErrOutside, rel, err,
			"cannot %s %q: it leads outside the root %s (a symlink on the way points outside, or a folder was just swapped for one); nothing was changed; use a path inside the root",
			op, rel, root.Path())
	case errors.Is(err, fs.ErrNotExist):
		return newError(fs.ErrNotExist, rel, err,
			"cannot %s %q: no such file or folder in %s; check the path (list the folder to see what exists)",
			op, rel, root.Path())
	case errors.Is(err, syscall.ENOTDIR):
		return newError(ErrNotDir, rel, err,
			"cannot %s %q: a part of the path is a file, not a folder; check the path", op, rel)
	case errors.Is(err, syscall.ELOOP):
		return newError(ErrSymlinkLoop, rel, err,
			"cannot %s %q: too many levels of symlinks (a symlink loop?); fix or remove the link", op, rel)
	case errors.Is(err, syscall.EROFS):
		return newError(fs.ErrPermission, rel, err,
			"cannot %s %q: the file system is read-only; use a writable location", op, rel)
	case errors.Is(err, fs.ErrPermission):
		return newError(fs.ErrPermission, rel, err,
			"cannot %s %q: permission denied (%v); check the permissions of the file and its folder",
			op, rel, unwrapPathError(err))
	}
	cause := unwrapPathError(err)
	return newError(cause, rel, err, "cannot %s %q in %s: %v", op, rel, root.Path(), cause)
}

// isEscape reports whether err is os.Root's refusal of a path that leaves the root
// (through "..", an absolute symlink or a symlink climbing out). os does not export
// that error, so it is recognised by its text; the A3, A4 and A21 tests guard that.
func isEscape(err error) bool {
	return err != nil && strings.HasSuffix(err.Error(), "path escapes from parent")
}

// unwrapPathError drops the *PathError's (or *LinkError's) own "op path:" prefix,
// since our messages name the operation and path already.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
