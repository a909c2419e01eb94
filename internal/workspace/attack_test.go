package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One test per way out of a root (links, swaps, special files). Each checks the error and, through the
// fixture's cleanup, that nothing outside the root was created or changed.

// attack is one operation that must be refused with an error of kind want.
type attack struct {
	name string
	do   func() error
	want error
}

func runAttacks(t *testing.T, attacks []attack) {
	t.Helper()
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			assertKind(t, a.do(), a.want)
		})
	}
}

func readErr(f *fixture, path string) func() error {
	return func() error {
		data, err := f.read(path)
		if strings.Contains(data, "secret") {
			return errors.New("read returned the secret: " + data)
		}
		return err
	}
}

func TestA1PrefixSibling(t *testing.T) {
	f := newFixture(t)
	runAttacks(t, []attack{
		{"read sibling", readErr(f, filepath.Join(f.rootEvil, "secret.txt")), ErrOutside},
		{"read rootX", readErr(f, f.root+"X"), ErrOutside},
		{"write sibling", func() error { return f.write(filepath.Join(f.rootEvil, "pwn"), "x") }, ErrOutside},
		{"create sibling", func() error { return f.create(filepath.Join(f.rootEvil, "pwn"), "x") }, ErrOutside},
		{"relative", func() error { return f.write("../root_evil/pwn", "x") }, ErrOutside},
	})
	assertNotExist(t, filepath.Join(f.rootEvil, "pwn"))
}

func TestA2DotDotTraversal(t *testing.T) {
	f := newFixture(t)
	runAttacks(t, []attack{
		{"absolute", func() error { return f.write(f.root+"/../outside/x", "x") }, ErrOutside},
		{"relative", func() error { return f.write("../outside/x", "x") }, ErrOutside},
		{"through a subfolder", readErr(f, "sub/../../outside/secret.txt"), ErrOutside},
		{"deep relative", func() error { return f.create("sub/../../../../../../tmp/pwn", "x") }, ErrOutside},
	})
	assertNotExist(t, filepath.Join(f.outside, "x"))

	// %2e%2e is a literal name, never decoded: it stays inside the root.
	if err := f.write("%2e%2e/outside/x", "literal"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(f.root, "%2e%2e", "outside", "x")); got != "literal" {
		t.Fatalf("content = %q", got)
	}
}

func TestA3FileSymlinkOut(t *testing.T) {
	f := newFixture(t)
	runAttacks(t, []attack{
		{"read", readErr(f, "link_out"), ErrOutside},
		{"stat", func() error { return f.stat("link_out") }, ErrOutside},
		{"write", func() error { return f.write("link_out", "pwned") }, ErrOutside},
		{"create", func() error { return f.create("link_out", "pwned") }, ErrOutside},
		// Delete and move act on the name: the link itself is refused (not followed).
		{"delete", func() error { return f.remove("link_out") }, ErrNotRegular},
		{"move", func() error { return f.move("link_out", "moved") }, ErrNotRegular},
		// Root methods alone refuse too (os.Root does not follow it out).
		{"root read", func() error { _, _, err := f.r.ReadFile("link_out", 0); return err }, ErrOutside},
		{"root write", func() error { return f.r.WriteFile("link_out", []byte("pwned"), WriteOptions{}) }, ErrNotRegular},
	})
	if target, err := os.Readlink(filepath.Join(f.root, "link_out")); err != nil || target != filepath.Join(f.outside, "secret.txt") {
		t.Fatalf("link_out changed: %q, %v", target, err)
	}
}

func TestA4FolderSymlinkOut(t *testing.T) {
	f := newFixture(t)
	runAttacks(t, []attack{
		{"read", readErr(f, "linkdir_out/secret.txt"), ErrOutside},
		{"list", func() error { _, err := f.list("linkdir_out"); return err }, ErrOutside},
		{"create", func() error { return f.create("linkdir_out/new", "x") }, ErrOutside},
		{"mkdir -p", func() error { return f.write("linkdir_out/a/b/c.txt", "x") }, ErrOutside},
		{"move into", func() error { return f.move("a.txt", "linkdir_out/a.txt") }, ErrOutside},
		{"root read", func() error { _, _, err := f.r.ReadFile("linkdir_out/secret.txt", 0); return err }, ErrOutside},
		{"root create", func() error { return f.r.CreateFile("linkdir_out/new", nil, WriteOptions{}) }, ErrOutside},
		{"root mkdir -p", func() error { return f.r.WriteFile("linkdir_out/a/b/c.txt", nil, WriteOptions{}) }, ErrOutside},
		{"root move", func() error { return f.r.Move("a.txt", "linkdir_out/a.txt") }, ErrOutside},
		{"root list", func() error { _, err := f.r.List("linkdir_out", false); return err }, ErrOutside},
	})
	// A recursive listing of the root shows the link but does not enter it.
	entries, err := f.list(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Rel, "linkdir_out/") {
			t.Errorf("listing entered the symlinked folder: %s", e.Rel)
		}
		if e.Rel == "linkdir_out" && (!e.IsSymlink || e.IsDir) {
			t.Errorf("linkdir_out listed as %+v, want a symlink entry", e)
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, "a.txt")); err != nil {
		t.Fatalf("a.txt moved away: %v", err)
	}
}

func TestA5DanglingSymlink(t *testing.T) {
	f := newFixture(t)
	symlink(t, "missing.txt", filepath.Join(f.root, "dangling_in"))
	runAttacks(t, []attack{
		{"write out", func() error { return f.write("dangling", "x") }, ErrOutside},
		{"create out", func() error { return f.create("dangling", "x") }, ErrOutside},
		{"write in", func() error { return f.write("dangling_in", "x") }, ErrDanglingSymlink},
		{"create in", func() error { return f.create("dangling_in", "x") }, ErrDanglingSymlink},
		{"root write", func() error { return f.r.WriteFile("dangling", []byte("x"), WriteOptions{}) }, ErrNotRegular},
		{"root create", func() error { return f.r.CreateFile("dangling", []byte("x"), WriteOptions{}) }, fs.ErrExist},
		{"root create in", func() error { return f.r.CreateFile("dangling_in", []byte("x"), WriteOptions{}) }, fs.ErrExist},
		// As a folder on the way, a dangling link is never replaced by a folder, nor followed.
		{"root write under", func() error { return f.r.WriteFile("dangling_in/x.txt", []byte("x"), WriteOptions{}) }, fs.ErrNotExist},
		{"root write under out", func() error { return f.r.WriteFile("dangling/x.txt", []byte("x"), WriteOptions{}) }, ErrOutside},
	})
	assertNotExist(t, filepath.Join(f.outside, "created.txt"))
	assertNotExist(t, filepath.Join(f.root, "missing.txt"))
	if len(tempFilesIn(t, f.root)) > 0 {
		t.Fatalf("temp files left: %v", tempFilesIn(t, f.root))
	}
}

func TestA6ChainsClimbingLinksAndLoops(t *testing.T) {
	f := newFixture(t)
	symlink(t, "chain2", filepath.Join(f.root, "chain1"))
	symlink(t, "sub/chain3", filepath.Join(f.root, "chain2"))
	symlink(t, "../../outside/secret.txt", filepath.Join(f.root, "sub", "chain3"))
	symlink(t, "../outside/secret.txt", filepath.Join(f.root, "rel_out"))
	symlink(t, "../../outside", filepath.Join(f.root, "sub", "climb_dir"))
	symlink(t, "loop2", filepath.Join(f.root, "loop1"))
	symlink(t, "loop1", filepath.Join(f.root, "loop2"))
	symlink(t, "self", filepath.Join(f.root, "self"))
	symlink(t, "loopdir/x", filepath.Join(f.root, "loopdir"))
	runAttacks(t, []attack{
		{"chain", readErr(f, "chain1"), ErrOutside},
		{"chain write", func() error { return f.write("chain1", "x") }, ErrOutside},
		{"relative climbing", readErr(f, "rel_out"), ErrOutside},
		{"relative climbing folder", func() error { return f.create("sub/climb_dir/new.txt", "x") }, ErrOutside},
		{"loop", readErr(f, "loop1"), ErrSymlinkLoop},
		{"loop write", func() error { return f.write("loop2", "x") }, ErrSymlinkLoop},
		{"self", func() error { return f.create("self", "x") }, ErrSymlinkLoop},
		{"growing loop", func() error { return f.write("loopdir/a.txt", "x") }, ErrSymlinkLoop},
		{"root read loop", func() error { _, _, err := f.r.ReadFile("loop1", 0); return err }, ErrSymlinkLoop},
	})

	// A chain that stays inside resolves to its final target.
	symlink(t, "in2", filepath.Join(f.root, "in1"))
	symlink(t, "sub/../link_in", filepath.Join(f.root, "in2"))
	file, err := f.p.Resolve("in1")
	if err != nil || file.Rel != "a.txt" {
		t.Fatalf("Resolve(in1) = %+v, %v; want a.txt", file, err)
	}
}

func TestA7InternalSymlinkMoveDelete(t *testing.T) {
	f := newFixture(t)
	content, err := f.read("link_in")
	if err != nil || content != "hello\n" {
		t.Fatalf("read link_in = %q, %v", content, err)
	}
	file, err := f.p.Resolve("link_in")
	if err != nil || file.Rel != "a.txt" || file.Abs != filepath.Join(f.root, "a.txt") {
		t.Fatalf("Resolve(link_in) = %+v, %v; want the target a.txt", file, err)
	}
	if file, err = f.p.ResolveNoFollow("link_in"); err != nil || file.Rel != "link_in" {
		t.Fatalf("ResolveNoFollow(link_in) = %+v, %v; want the link itself", file, err)
	}
	runAttacks(t, []attack{
		{"delete", func() error { return f.remove("link_in") }, ErrNotRegular},
		{"move", func() error { return f.move("link_in", "moved") }, ErrNotRegular},
	})
	if target, err := os.Readlink(filepath.Join(f.root, "link_in")); err != nil || target != "a.txt" {
		t.Fatalf("link_in changed: %q, %v", target, err)
	}
	if got := readString(t, filepath.Join(f.root, "a.txt")); got != "hello\n" {
		t.Fatalf("a.txt = %q", got)
	}
	assertNotExist(t, filepath.Join(f.root, "moved"))
}

func TestA9NULByte(t *testing.T) {
	f := newFixture(t)
	runAttacks(t, []attack{
		{"read", readErr(f, "a\x00.txt"), ErrInvalidPath},
		{"write", func() error { return f.write("new\x00.txt", "x") }, ErrInvalidPath},
		{"absolute", func() error { return f.create(f.root+"/x\x00/../../outside/y", "x") }, ErrInvalidPath},
		{"set base", func() error { _, err := f.p.SetBase("sub\x00"); return err }, ErrInvalidPath},
		{"open root", func() error { _, err := OpenRoot(f.root + "\x00"); return err }, ErrInvalidPath},
	})
	// Root methods reject it through the OS, without creating anything.
	if err := f.r.WriteFile("new\x00.txt", []byte("x"), WriteOptions{}); err == nil {
		t.Fatal("Root.WriteFile accepted a NUL byte")
	}
	if entries, _ := os.ReadDir(f.root); len(entries) != 6 {
		t.Fatalf("root has %d entries, want the 6 of the fixture", len(entries))
	}
}

func TestA10SymlinkedRootAlias(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "private", "proj")
	writeFiles(t, real, map[string]string{"a.txt": "a\n"})
	writeFiles(t, base, map[string]string{"private/other/secret.txt": "secret\n"})
	alias := filepath.Join(base, "alias")
	symlink(t, filepath.Join(base, "private", "proj"), alias)
	symlink(t, filepath.Join(alias, "a.txt"), filepath.Join(real, "via_alias"))

	r := openRoot(t, alias)
	if r.Path() != real {
		t.Fatalf("Path() = %q, want the real path %q", r.Path(), real)
	}
	p, err := NewPolicy([]*Root{r})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(alias, "a.txt"), filepath.Join(real, "a.txt"), "a.txt", "via_alias"} {
		file, err := p.Resolve(path)
		if err != nil || file.Abs != filepath.Join(real, "a.txt") || file.Rel != "a.txt" {
			t.Errorf("Resolve(%q) = %+v, %v; want %s", path, file, err, filepath.Join(real, "a.txt"))
		}
	}
	for _, path := range []string{
		filepath.Join(alias, "..", "private", "other", "secret.txt"),
		filepath.Join(base, "private", "other", "secret.txt"),
		alias + "_evil/x",
	} {
		if _, err := p.Resolve(path); !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve(%q) = %v, want ErrOutside", path, err)
		}
	}
}

func TestA11BadRoots(t *testing.T) {
	f := newFixture(t)
	if _, err := OpenRoot(filepath.Join(f.root, "a.txt")); !errors.Is(err, ErrNotDir) {
		t.Errorf("OpenRoot(file) = %v, want ErrNotDir", err)
	}
	if _, err := OpenRoot(filepath.Join(f.root, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenRoot(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := OpenRoot(filepath.Join(f.root, "dangling")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenRoot(dangling) = %v, want fs.ErrNotExist", err)
	}
	if _, err := NewPolicy(nil); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("NewPolicy(nil) = %v, want an error", err)
	}
}

func TestA12DestroyTheRoot(t *testing.T) {
	f := newFixture(t)
	runAttacks(t, []attack{
		{"delete root", func() error { return f.remove(f.root) }, ErrIsRoot},
		{"delete root by dot", func() error { return f.remove(".") }, ErrIsRoot},
		{"move root", func() error { return f.move(f.root, "sub/root") }, ErrIsRoot},
		{"delete folder", func() error { return f.remove("sub") }, ErrNotRegular},
		{"move folder", func() error { return f.move("sub", "sub2") }, ErrNotRegular},
		{"root delete", func() error { return f.r.Remove("") }, ErrIsRoot},
	})
	if got := readString(t, filepath.Join(f.root, "sub", "b.txt")); got != "bee\n" {
		t.Fatalf("sub/b.txt = %q", got)
	}
}

func TestA13MoveOntoExisting(t *testing.T) {
	f := newFixture(t)
	runAttacks(t, []attack{
		{"move onto file", func() error { return f.move("a.txt", "sub/b.txt") }, fs.ErrExist},
		{"move onto itself", func() error { return f.move("a.txt", "a.txt") }, fs.ErrExist},
		{"move onto folder", func() error { return f.move("a.txt", "sub") }, fs.ErrExist},
		{"move onto dangling link", func() error { return f.r.Move("a.txt", "dangling") }, fs.ErrExist},
		{"create over file", func() error { return f.create("a.txt", "x") }, fs.ErrExist},
	})
	if a, b := readString(t, filepath.Join(f.root, "a.txt")), readString(t, filepath.Join(f.root, "sub", "b.txt")); a != "hello\n" || b != "bee\n" {
		t.Fatalf("contents changed: a.txt %q, sub/b.txt %q", a, b)
	}
}

func TestA14HardLinkToOutside(t *testing.T) {
	f := newFixture(t)
	outsideFile := filepath.Join(f.outside, "secret.txt")
	if err := os.Link(outsideFile, filepath.Join(f.root, "hard.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	f.before = snapshotOutside(t, f.base, f.root) // the link count is not in the snapshot; content is
	if err := f.write("hard.txt", "new content\n"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(f.root, "hard.txt")); got != "new content\n" {
		t.Fatalf("hard.txt = %q", got)
	}
	if got := readString(t, outsideFile); got != "secret\n" {
		t.Fatalf("the outside file changed through its hard link: %q", got)
	}
}

func TestA16NonRegularFiles(t *testing.T) {
	f := newFixture(t)
	fifo := filepath.Join(f.root, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}

	// A FIFO with no writer would block a plain open forever: it must fail at once.
	done := make(chan error, 1)
	go func() { _, err := f.read("fifo"); done <- err }()
	select {
	case err := <-done:
		assertKind(t, err, ErrNotRegular)
		if !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("message %q does not say it is a named pipe", err)
		}
	case <-deadline(t):
		t.Fatal("reading a FIFO blocked")
	}
	runAttacks(t, []attack{
		{"write fifo", func() error { return f.write("fifo", "x") }, ErrNotRegular},
		{"create over fifo", func() error { return f.create("fifo", "x") }, fs.ErrExist},
		{"delete fifo", func() error { return f.remove("fifo") }, ErrNotRegular},
		{"read folder", readErr(f, "sub"), ErrNotRegular},
		{"write folder", func() error { return f.write("sub", "x") }, ErrNotRegular},
	})

	if err := mkCharDevice(filepath.Join(f.root, "null")); err == nil {
		runAttacks(t, []attack{{"read device", readErr(f, "null"), ErrNotRegular}})
	}
}

func TestA16SizeLimit(t *testing.T) {
	f := newFixture(t)
	writeFiles(t, f.root, map[string]string{"big.txt": strings.Repeat("x", 1000)})
	if _, _, err := f.r.ReadFile("big.txt", 1000); err != nil {
		t.Fatalf("a file of exactly the limit: %v", err)
	}
	_, _, err := f.r.ReadFile("big.txt", 999)
	assertKind(t, err, ErrTooLarge)
	want := `cannot read "big.txt": it is 1000 bytes, over the size limit of 999 bytes; read part of it or raise the limit`
	if err.Error() != want {
		t.Fatalf("message:\n got %q\nwant %q", err, want)
	}
}

func TestA17CaseTricks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, base, map[string]string{"Proj/a.txt": "a\n"})
	if _, err := os.Stat(filepath.Join(base, "proj")); err == nil {
		t.Skip("case-insensitive file system")
	}
	writeFiles(t, base, map[string]string{"proj/secret.txt": "secret\n"})
	r := openRoot(t, filepath.Join(base, "Proj"))
	p, _ := NewPolicy([]*Root{r})
	for _, path := range []string{filepath.Join(base, "proj", "secret.txt"), filepath.Join(base, "proj", "new.txt")} {
		if _, err := p.Resolve(path); !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve(%q) = %v, want ErrOutside", path, err)
		}
	}
	// Inside the root, a different case is simply a different (new) name.
	file, err := p.Resolve("A.TXT")
	if err != nil || file.Rel != "A.TXT" {
		t.Fatalf("Resolve(A.TXT) = %+v, %v", file, err)
	}
}

func TestA20TempFiles(t *testing.T) {
	f := newFixture(t)
	writeFiles(t, f.root, map[string]string{"keep.txt": "old\n"})

	// Names are random, in the target's folder; the final rename fails here.
	var temps []string
	renameInRoot = func(r *os.Root, tmp, dst string) error {
		temps = append(temps, tmp)
		return errors.New("injected rename failure")
	}
	t.Cleanup(func() { renameInRoot = (*os.Root).Rename })
	for range 2 {
		if err := f.r.WriteFile("keep.txt", []byte("new\n"), WriteOptions{}); err == nil {
			t.Fatal("WriteFile succeeded despite the failing rename")
		}
	}
	if err := f.r.WriteFile("fresh/dir/new.txt", []byte("new\n"), WriteOptions{}); err == nil {
		t.Fatal("WriteFile succeeded despite the failing rename")
	}
	if len(temps) != 3 || temps[0] == temps[1] || filepath.Dir(temps[0]) != "." || filepath.Dir(temps[2]) != filepath.Join("fresh", "dir") {
		t.Fatalf("temp names %q: want 3 distinct names next to their targets", temps)
	}
	if got := readString(t, filepath.Join(f.root, "keep.txt")); got != "old\n" {
		t.Fatalf("keep.txt = %q after a failed write", got)
	}
	if left := tempFilesIn(t, f.base); len(left) > 0 {
		t.Fatalf("temp files left behind: %v", left)
	}
	assertNotExist(t, filepath.Join(f.root, "fresh")) // the folders it made are gone too
}

// A21: the edit history rebuilds files through Root methods; a folder of the file
// swapped for a symlink to outside must stop the rebuild like any fresh write.
func TestA21RevertThroughSwappedFolder(t *testing.T) {
	for _, target := range []string{"absolute", "relative"} {
		t.Run(target, func(t *testing.T) {
			f := newFixture(t)
			sub := filepath.Join(f.root, "sub")
			if err := os.RemoveAll(sub); err != nil {
				t.Fatal(err)
			}
			link := f.outside
			if target == "relative" {
				link = "../outside"
			}
			symlink(t, link, sub)
			f.before = snapshotOutside(t, f.base, f.root)

			r := openRoot(t, f.root) // as the history store does
			assertKind(t, r.WriteFile("sub/secret.txt", []byte("reverted"), WriteOptions{}), ErrOutside)
			assertKind(t, r.WriteFile("sub/b.txt", []byte("reverted"), WriteOptions{}), ErrOutside)
			assertKind(t, r.CreateFile("sub/b.txt", []byte("reverted"), WriteOptions{}), ErrOutside)
			assertKind(t, r.Remove("sub/secret.txt"), ErrOutside)
			assertKind(t, r.Move("a.txt", "sub/a.txt"), ErrOutside)
			assertKind(t, r.Move("sub/secret.txt", "stolen.txt"), ErrOutside)
			assertNotExist(t, filepath.Join(f.root, "stolen.txt"))
		})
	}
}
