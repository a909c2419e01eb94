package workspace

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"
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

// maxSymlinkHops bounds how many symlinks one path may go through, as Linux's
// MAXSYMLINKS does, so that a link loop ends with an error instead of a hang.
const maxSymlinkHops = 40

// part is one path component still to be walked.
type part struct {
	name string
	link string // absolute path of the symlink whose target this part came from; "" for the client's own path
}

// walker resolves a path one component at a time, the way the kernel would, but
// refusing any step outside the roots. Every file system call goes through the
// os.Root of the root holding that step, so even the walk itself cannot be led out.
type walker struct {
	policy   *Policy
	path     string // the client's path, for messages
	hops     int    // symlinks followed so far
	lastLink string // the last symlink followed, for messages
}

// splitParts splits a slash- or OS-separated path into components, dropping empty
// and "." ones; link is recorded on each part (see part.link).
func splitParts(path, link string) []part {
	var parts []part
	for _, name := range strings.Split(filepath.ToSlash(path), "/") {
		if name != "" && name != "." {
			parts = append(parts, part{name: name, link: link})
		}
	}
	return parts
}

// walk resolves todo starting from the real folder cur and returns the real absolute
// path it names. Existing components are symlink-free in the result; a missing tail
// is appended as is. With followFinal false, a final symlink of the client's path is
// left unresolved.
func (w *walker) walk(cur string, todo []part, followFinal bool) (string, error) {
	for len(todo) > 0 {
		pt := todo[0]
		todo = todo[1:]
		if pt.name == ".." { // only symlink targets have "..": the client's path is clean
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, pt.name)
		root, rel, ok := w.policy.containingRoot(next)
		if !ok {
			return "", w.outsideError(next)
		}
		info, err := root.dir.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			var name string
			if name, err = w.matchUnicode(root, rel, pt.name); err != nil {
				return "", err
			}
			if name == "" {
				return w.missing(next, pt, todo)
			}
			next, rel = filepath.Join(cur, name), filepath.Join(filepath.Dir(rel), name)
			info, err = root.dir.Lstat(rel)
		}
		if err != nil {
			return "", osError("resolve", w.path, root, err)
		}
		isFinal := len(todo) == 0 && pt.link == ""
		if info.Mode()&fs.ModeSymlink != 0 && (followFinal || !isFinal) {
			if cur, todo, err = w.follow(root, rel, next, todo); err != nil {
				return "", err
			}
			continue
		}
		if !info.IsDir() && len(todo) > 0 {
			return "", newError(ErrNotDir, w.path, nil,
				"path %q goes through %q, which is %s, not a folder; check the path", w.path, next, describeKind(info.Mode()))
		}
		cur = next
	}
	return cur, nil
}

// follow reads the symlink rel of root (at absolute path link, inside the folder
// where the walk is) and returns where the walk continues: the folder to resolve the
// target from, and the target's components before the rest of the path.
func (w *walker) follow(root *Root, rel, link string, rest []part) (string, []part, error) {
	w.hops++
	if w.hops > maxSymlinkHops {
		return "", nil, newError(ErrSymlinkLoop, w.path, nil,
			"path %q goes through more than %d symlinks (a loop?) at %q; fix or remove the link", w.path, maxSymlinkHops, link)
	}
	target, err := root.dir.Readlink(rel)
	if err != nil {
		return "", nil, osError("read the symlink", link, root, err)
	}
	w.lastLink = link
	if !filepath.IsAbs(target) {
		return filepath.Dir(link), append(splitParts(target, link), rest...), nil
	}
	// Map an absolute target onto a root by its part before any "..", so that a
	// target naming the root by its alias (/tmp vs /private/tmp) works; the ".."
	// parts are then walked physically, from the real path.
	lexical, climbing := splitAtDotDot(target)
	r, relTarget, ok := w.policy.lexicalRoot(lexical)
	if !ok {
		return "", nil, w.outsideError(target)
	}
	parts := append(splitParts(relTarget, link), splitParts(climbing, link)...)
	return r.real, append(parts, rest...), nil
}

// splitAtDotDot splits an absolute path before its first ".." component: the clean
// lexical head and the unprocessed rest ("" when there is no "..").
func splitAtDotDot(path string) (head, rest string) {
	slashed := filepath.ToSlash(path)
	parts := strings.Split(slashed, "/")
	for i, name := range parts {
		if name == ".." {
			return filepath.Clean(filepath.FromSlash(strings.Join(parts[:i], "/") + "/")), filepath.FromSlash(strings.Join(parts[i:], "/"))
		}
	}
	return filepath.Clean(path), ""
}

// missing handles a component that does not exist: the rest of the path is
// appended as is, unless the missing name came from a symlink (a dangling link:
// never create its target) or a ".." follows (that cannot be walked).
func (w *walker) missing(next string, pt part, rest []part) (string, error) {
	if pt.link != "" {
		return "", newError(ErrDanglingSymlink, w.path, nil,
			"path %q goes through the symlink %q, whose target %q does not exist; mcpdiff does not create files through dangling symlinks; write to the target path itself, or remove the link",
			w.path, pt.link, next)
	}
	for _, p := range rest {
		if p.name == ".." {
			return "", newError(fs.ErrNotExist, w.path, nil,
				"path %q goes through %q, which does not exist; check the path", w.path, next)
		}
		next = filepath.Join(next, p.name)
	}
	return next, nil
}

// matchUnicode looks, in the folder holding rel, for an existing entry whose name is
// the same as name after Unicode normalization (NFC vs NFD, as macOS writes names),
// so that a client spelling a name differently reaches the existing file instead of
// creating a look-alike. It returns "" when there is none, and refuses two.
func (w *walker) matchUnicode(root *Root, rel, name string) (string, error) {
	dir, err := root.dir.Open(filepath.Dir(rel))
	if err != nil {
		return "", nil // the Lstat that follows reports the real problem
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return "", nil
	}
	want := norm.NFC.String(name)
	var found []string
	for _, n := range names {
		if n != name && norm.NFC.String(n) == want {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", newError(ErrAmbiguous, w.path, nil,
		"path %q matches %d names that differ only in Unicode normalization (%+q); rename all but one of them, or use the exact name",
		w.path, len(found), found)
}

func (w *walker) outsideError(where string) error {
	if w.lastLink == "" {
		return w.policy.outsideError(w.path)
	}
	return newError(ErrOutside, w.path, nil,
		"path %q goes through the symlink %q to %q, which is outside the allowed roots (%s); mcpdiff does not follow symlinks out of the roots; use a path inside them",
		w.path, w.lastLink, where, w.policy.rootList())
}
