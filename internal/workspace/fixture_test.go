package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a layout full of ways out of the root, in a fresh temp folder:
//
//	base/root/            the allowed root: a.txt, sub/b.txt and the links below
//	base/root_evil/       a prefix sibling, with secret.txt
//	base/rootX            a file whose name starts with the root's
//	base/outside/         secret.txt
//	root/link_out     -> base/outside/secret.txt   (absolute)
//	root/linkdir_out  -> base/outside              (absolute)
//	root/dangling     -> base/outside/created.txt  (absent)
//	root/link_in      -> a.txt                     (relative)
//
// Every test that builds one checks at cleanup that nothing outside root changed.
type fixture struct {
	base, root, rootEvil, outside string
	r                             *Root
	p                             *Policy
	before                        map[string]string
}

// twoRoots is a policy over the fixture's root and root_evil, and the second Root.
func (f *fixture) twoRoots(t testing.TB) (*Policy, *Root) {
	t.Helper()
	other := openRoot(t, f.rootEvil)
	p, err := NewPolicy([]*Root{f.r, other})
	if err != nil {
		t.Fatal(err)
	}
	return p, other
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		base:     base,
		root:     filepath.Join(base, "root"),
		rootEvil: filepath.Join(base, "root_evil"),
		outside:  filepath.Join(base, "outside"),
	}
	writeFiles(t, base, map[string]string{
		"root/a.txt":            "hello\n",
		"root/sub/b.txt":        "bee\n",
		"root_evil/secret.txt":  "evil secret\n",
		"rootX":                 "x\n",
		"outside/secret.txt":    "secret\n",
		"outside/sub/deep.txt":  "deep secret\n",
		"outside/not_in_root/x": "x\n",
	})
	symlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, "link_out"))
	symlink(t, f.outside, filepath.Join(f.root, "linkdir_out"))
	symlink(t, filepath.Join(f.outside, "created.txt"), filepath.Join(f.root, "dangling"))
	symlink(t, "a.txt", filepath.Join(f.root, "link_in"))

	f.r = openRoot(t, f.root)
	if f.p, err = NewPolicy([]*Root{f.r}); err != nil {
		t.Fatal(err)
	}
	f.before = snapshotOutside(t, base, f.root)
	t.Cleanup(func() { f.assertOutsideUntouched(t) })
	return f
}

// openRoot opens dir as a Root, closed when the test ends.
func openRoot(tb testing.TB, dir string) *Root {
	tb.Helper()
	r, err := OpenRoot(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// snapshotOutside describes every entry under base that is not inside root: type,
// mode and content (or link target).
func snapshotOutside(t testing.TB, base, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == root {
			return filepath.SkipDir
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		switch {
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += " " + string(data)
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			desc += " -> " + target
		}
		snap[path] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func (f *fixture) assertOutsideUntouched(t testing.TB) {
	t.Helper()
	after := snapshotOutside(t, f.base, f.root)
	for path, desc := range after {
		if before, ok := f.before[path]; !ok {
			t.Errorf("created outside the root: %s (%s)", path, desc)
		} else if before != desc {
			t.Errorf("changed outside the root: %s: was %q, now %q", path, before, desc)
		}
	}
	for path := range f.before {
		if _, ok := after[path]; !ok {
			t.Errorf("removed outside the root: %s", path)
		}
	}
}

// The operations as the MCP tool handlers do them: resolve, then act through Root.

func (f *fixture) read(path string) (string, error) {
	file, err := f.p.Resolve(path)
	if err != nil {
		return "", err
	}
	data, _, err := file.Root.ReadFile(file.Rel, 0)
	return string(data), err
}

func (f *fixture) write(path, content string) error {
	file, err := f.p.Resolve(path)
	if err != nil {
		return err
	}
	return file.Root.WriteFile(file.Rel, []byte(content), WriteOptions{})
}

func (f *fixture) create(path, content string) error {
	file, err := f.p.Resolve(path)
	if err != nil {
		return err
	}
	return file.Root.CreateFile(file.Rel, []byte(content), WriteOptions{})
}

func (f *fixture) remove(path string) error {
	file, err := f.p.ResolveNoFollow(path)
	if err != nil {
		return err
	}
	return file.Root.Remove(file.Rel)
}

func (f *fixture) move(src, dst string) error {
	from, err := f.p.ResolveNoFollow(src)
	if err != nil {
		return err
	}
	to, err := f.p.ResolveNoFollow(dst)
	if err != nil {
		return err
	}
	return MoveFile(from, to)
}

func (f *fixture) list(path string) ([]Entry, error) {
	file, err := f.p.Resolve(path)
	if err != nil {
		return nil, err
	}
	return file.Root.List(file.Rel, true)
}

func (f *fixture) stat(path string) error {
	file, err := f.p.Resolve(path)
	if err != nil {
		return err
	}
	_, err = file.Root.Lstat(file.Rel)
	return err
}

// helpers

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func assertKind(t *testing.T, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want kind %v", err, kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *workspace.Error", err)
	}
}

func assertNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s exists (err %v), want it absent", path, err)
	}
}

// tempFilesIn lists leftover temp files anywhere under dir.
func tempFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			found = append(found, path)
		}
		return nil
	})
	return found
}
