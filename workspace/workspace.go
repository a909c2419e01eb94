// Package workspace is the one path policy every file operation goes through: the
// allowed roots, how a path a client sends becomes a file inside one of them, and the
// file operations themselves, done through os.Root so that nothing (symlinks, "..",
// a folder swapped for a link between check and use) can reach outside a root.
package workspace

import (
	"io/fs"
)

// Root is one allowed directory.
type Root struct{ /* TODO */ }

// OpenRoot opens dir (which must be an existing directory) as a root. Its real path
// (symlinks resolved) and the spelling given are both accepted by Resolve.
func OpenRoot(dir string) (*Root, error) { panic("TODO") }

// Path is the root's real absolute path.
func (r *Root) Path() string { panic("TODO") }

// Close releases the root's directory handle.
func (r *Root) Close() error { panic("TODO") }

// Policy is the set of allowed roots and the base folder for relative paths.
// It is safe for concurrent use.
type Policy struct{ /* TODO */ }

// NewPolicy makes a policy over roots (at least one). The base is the first root.
func NewPolicy(roots []*Root) (*Policy, error) { panic("TODO") }

// Roots returns the allowed roots.
func (p *Policy) Roots() []*Root { panic("TODO") }

// Base is the folder relative paths are resolved against.
func (p *Policy) Base() string { panic("TODO") }

// SetBase makes dir (absolute, or relative to the current base) the base for
// relative paths. It must be an existing folder inside a root: it never widens them.
// It returns the folder's absolute path.
func (p *Policy) SetBase(dir string) (string, error) { panic("TODO") }

// File is a path resolved inside a root. The file itself may not exist yet.
type File struct {
	Root *Root
	Rel  string // relative to Root.Path(), cleaned, OS separators; never "." or ".."-prefixed
	Abs  string // Root.Path() joined with Rel
}

// Resolve turns a client's path (absolute, or relative to Base) into a File. It
// refuses NUL bytes, anything that ends outside every root (lexically or through
// symlinks), and mcpdiff's own history store (.mcp/edit_history). A final symlink
// that points inside the root is followed (File names the target); one that points
// outside, or dangles, is refused.
func (p *Policy) Resolve(path string) (File, error) { panic("TODO") }

// Lock serialises operations on one file (keyed by its absolute path) within this
// process. Call the returned function to unlock.
func (p *Policy) Lock(abs string) (unlock func()) { panic("TODO") }

// ReadFile reads a regular file. It refuses anything else (FIFOs, devices, sockets,
// folders) without blocking, and files larger than limit bytes (limit <= 0: no limit).
func (r *Root) ReadFile(rel string, limit int64) ([]byte, fs.FileInfo, error) { panic("TODO") }

// WriteOptions tune WriteFile.
type WriteOptions struct {
	Perm fs.FileMode // mode for a new file (before umask); an existing file keeps its mode
	Sync bool        // fsync the file and its folder before returning
}

// WriteFile replaces (or creates) a regular file atomically: a temp file in the same
// folder, then rename. Missing parent folders are created. A crash leaves either the
// old or the new content, never a mix, and no temp file survives a failed call.
func (r *Root) WriteFile(rel string, data []byte, o WriteOptions) error { panic("TODO") }

// CreateFile is WriteFile that fails with an error wrapping fs.ErrExist if rel exists,
// atomically (no window where another creator is overwritten).
func (r *Root) CreateFile(rel string, data []byte, o WriteOptions) error { panic("TODO") }

// Remove deletes one regular file.
func (r *Root) Remove(rel string) error { panic("TODO") }

// Move renames one regular file; it fails with an error wrapping fs.ErrExist if dst
// exists (no clobbering, atomically). Missing parent folders of dst are created.
func (r *Root) Move(src, dst string) error { panic("TODO") }

// Lstat describes rel without following a final symlink.
func (r *Root) Lstat(rel string) (fs.FileInfo, error) { panic("TODO") }

// Entry is one listed file or folder.
type Entry struct {
	Rel   string // relative to the listed folder, slash-separated
	IsDir bool
}

// List lists a folder (recursively if asked), sorted, without the history store.
func (r *Root) List(rel string, recursive bool) ([]Entry, error) { panic("TODO") }
