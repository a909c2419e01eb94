package workspace

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

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
