package workspace

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Policy is the set of allowed roots and the base folder for relative paths.
// It is safe for concurrent use.
type Policy struct {
	roots []*Root // fixed at NewPolicy
	locks keyedMutex

	mu   sync.RWMutex
	base string // real absolute folder inside a root
}

// NewPolicy makes a policy over roots (at least one). The base is the first root.
func NewPolicy(roots []*Root) (*Policy, error) {
	if len(roots) == 0 {
		return nil, newError(ErrInvalidPath, "", nil,
			"no allowed roots; give at least one folder (--root DIR, or the client's MCP roots)")
	}
	if slices.Contains(roots, nil) {
		return nil, newError(ErrInvalidPath, "", nil, "a root is nil; open every root with OpenRoot")
	}
	return &Policy{roots: slices.Clone(roots), base: roots[0].real}, nil
}

// Roots returns the allowed roots.
func (p *Policy) Roots() []*Root { return slices.Clone(p.roots) }

// Base is the folder relative paths are resolved against.
func (p *Policy) Base() string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.base
}

// SetBase makes dir (absolute, or relative to the current base) the base for
// relative paths. It must be an existing folder inside a root: it never widens them.
// It returns the folder's absolute path.
func (p *Policy) SetBase(dir string) (string, error) {
	f, err := p.Resolve(dir)
	if err != nil {
		return "", err
	}
	info, err := f.Root.dir.Stat(f.Rel)
	if errors.Is(err, fs.ErrNotExist) {
		return "", newError(fs.ErrNotExist, dir, err,
			"cannot use %q as the workspace folder: it does not exist; create it first, or give an existing folder", dir)
	}
	if err != nil {
		return "", osError("use", dir, f.Root, err)
	}
	if !info.IsDir() {
		return "", newError(ErrNotDir, dir, nil,
			"cannot use %q as the workspace folder: it is %s, not a folder; give a folder", dir, describeKind(info.Mode()))
	}
	p.mu.Lock()
	p.base = f.Abs
	p.mu.Unlock()
	return f.Abs, nil
}

// File is a path resolved inside a root. The file itself may not exist yet.
type File struct {
	Root *Root
	Rel  string // relative to Root.Path(), cleaned, OS separators; "." only for the root itself, never ".."-prefixed
	Abs  string // Root.Path() joined with Rel
}

// Resolve turns a client's path (absolute, or relative to Base) into a File. It
// refuses NUL bytes, anything that ends outside every root (lexically or through
// symlinks), and mcpdiff's own history store (.mcp/edit_history). A final symlink
// that points inside the root is followed (File names the target); one that points
// outside, or dangles, is refused. Use it for reading and writing file contents.
func (p *Policy) Resolve(path string) (File, error) { return p.resolve(path, true) }

// ResolveNoFollow is Resolve except that a final symlink is not followed: File names
// the link itself. Use it for operations on the name rather than the content
// (delete, move), so that they act on (and refuse) the link, never silently on its
// target (TestA7InternalSymlinkMoveDelete). Symlinks on the way to the final component are followed
// as in Resolve.
func (p *Policy) ResolveNoFollow(path string) (File, error) { return p.resolve(path, false) }

// Lock serialises operations on one file (keyed by its absolute path) within this
// process. Call the returned function to unlock.
func (p *Policy) Lock(abs string) (unlock func()) { return p.locks.lock(abs) }

func (p *Policy) resolve(path string, followFinal bool) (File, error) {
	if path == "" {
		return File{}, newError(ErrInvalidPath, path, nil,
			"path is empty; give a path, absolute or relative to %s", p.Base())
	}
	if strings.ContainsRune(path, 0) {
		return File{}, newError(ErrInvalidPath, path, nil,
			"path %q contains a NUL byte; send the path without it", path)
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.Base(), abs)
	}
	abs = filepath.Clean(abs) // "%2e%2e" stays a literal name: nothing is URL-decoded
	root, rel, ok := p.lexicalRoot(abs)
	if !ok {
		return File{}, p.outsideError(path)
	}
	if err := p.refuseHistory(path, abs); err != nil {
		return File{}, err
	}
	w := walker{policy: p, path: path}
	real, err := w.walk(root.real, splitParts(rel, ""), followFinal)
	if err != nil {
		return File{}, err
	}
	if root, rel, ok = p.containingRoot(real); !ok {
		return File{}, p.outsideError(path) // the walk checks every step; kept for safety
	}
	if err := p.refuseHistory(path, real); err != nil {
		return File{}, err
	}
	return File{Root: root, Rel: rel, Abs: real}, nil
}

// lexicalRoot finds the innermost root that contains the clean absolute path abs by
// any of its spellings, and abs relative to it.
func (p *Policy) lexicalRoot(abs string) (*Root, string, bool) {
	var best *Root
	var bestRel, bestSpelling string
	for _, r := range p.roots {
		for _, s := range r.spellings() {
			if rel, ok := relWithin(s, abs); ok && len(s) > len(bestSpelling) {
				best, bestRel, bestSpelling = r, rel, s
			}
		}
	}
	return best, bestRel, best != nil
}

// containingRoot finds the innermost root whose real path contains the real path abs.
func (p *Policy) containingRoot(abs string) (*Root, string, bool) {
	var best *Root
	var bestRel string
	for _, r := range p.roots {
		if rel, ok := relWithin(r.real, abs); ok && (best == nil || len(r.real) > len(best.real)) {
			best, bestRel = r, rel
		}
	}
	return best, bestRel, best != nil
}

// refuseHistory refuses abs when it is in the history store of any root containing
// it (with nested roots, an outer root's store may hold an inner path).
func (p *Policy) refuseHistory(path, abs string) error {
	for _, r := range p.roots {
		for _, s := range r.spellings() {
			if rel, ok := relWithin(s, abs); ok && inHistoryStore(rel) {
				return newError(ErrHistoryStore, path, nil,
					"path %q is inside mcpdiff's private edit history (%s); use the mcpdiff CLI (mcpdiff status, show, accept, reject) instead",
					path, filepath.Join(r.real, filepath.FromSlash(HistoryDir)))
			}
		}
	}
	return nil
}

func (p *Policy) outsideError(path string) error {
	return newError(ErrOutside, path, nil,
		"path %q is outside the allowed roots (%s); use a path inside one of them", path, p.rootList())
}

// rootList is the roots' real paths, comma-separated, for error messages.
func (p *Policy) rootList() string {
	paths := make([]string, len(p.roots))
	for i, r := range p.roots {
		paths[i] = r.real
	}
	return strings.Join(paths, ", ")
}
