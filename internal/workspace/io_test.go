package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode()
}

func TestWriteFileBytesAndModes(t *testing.T) {
	f := newFixture(t)
	umask := currentUmask()
	script := filepath.Join(f.root, "run.sh")
	writeFiles(t, f.root, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(f.root, "private.txt")
	writeFiles(t, f.root, map[string]string{"private.txt": "p\n"})
	if err := os.Chmod(private, 0o600); err != nil {
		t.Fatal(err)
	}

	content := []byte("line1\r\nline2\x00\xff\xfe no final newline")
	tests := []struct {
		name string
		rel  string
		opts WriteOptions
		want fs.FileMode
	}{
		{"existing executable keeps 0755", "run.sh", WriteOptions{Perm: 0o600}, 0o755},
		{"existing private keeps 0600", "private.txt", WriteOptions{}, 0o600},
		{"new file gets 0644 minus umask", "new.txt", WriteOptions{}, 0o644 &^ umask},
		{"new file gets Perm minus umask", "new_exec.sh", WriteOptions{Perm: 0o775}, 0o775 &^ umask},
		{"synced write", "synced.txt", WriteOptions{Sync: true}, 0o644 &^ umask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := f.r.WriteFile(tt.rel, content, tt.opts); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(f.root, tt.rel)
			if got := readString(t, path); got != string(content) {
				t.Fatalf("content = %q", got)
			}
			if got := modeOf(t, path); got != tt.want {
				t.Fatalf("mode = %v, want %v", got, tt.want)
			}
		})
	}
	if left := tempFilesIn(t, f.root); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestCreateFileModes(t *testing.T) {
	f := newFixture(t)
	umask := currentUmask()
	if err := f.r.CreateFile("made/by/create.sh", []byte("x"), WriteOptions{Perm: 0o755, Sync: true}); err != nil {
		t.Fatal(err)
	}
	if got := modeOf(t, filepath.Join(f.root, "made", "by", "create.sh")); got != 0o755&^umask {
		t.Fatalf("mode = %v, want %v", got, 0o755&^umask)
	}
	for _, dir := range []string{"made", filepath.Join("made", "by")} {
		if got := modeOf(t, filepath.Join(f.root, dir)); got != fs.ModeDir|0o755&^umask {
			t.Fatalf("%s: mode = %v, want a 0755 folder", dir, got)
		}
	}
	if left := tempFilesIn(t, f.root); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestWriteFileBadTargets(t *testing.T) {
	f := newFixture(t)
	runAttacks(t, []attack{
		{"parent is a file", func() error { return f.r.WriteFile("a.txt/x", nil, WriteOptions{}) }, ErrNotDir},
		{"grandparent is a file", func() error { return f.r.WriteFile("a.txt/x/y", nil, WriteOptions{}) }, ErrNotDir},
		{"folder", func() error { return f.r.WriteFile("sub", nil, WriteOptions{}) }, ErrNotRegular},
		{"root", func() error { return f.r.WriteFile(".", nil, WriteOptions{}) }, ErrNotRegular},
		{"create folder", func() error { return f.r.CreateFile("sub", nil, WriteOptions{}) }, fs.ErrExist},
	})
	err := f.r.WriteFile("sub", nil, WriteOptions{})
	if want := `cannot write "sub": it is a folder; mcpdiff writes single files (list the folder to see its files)`; err.Error() != want {
		t.Fatalf("message:\n got %q\nwant %q", err, want)
	}
}

// makeReadOnly makes dir refuse new entries: chmod for a normal user, the immutable
// attribute for root (who ignores permission bits).
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("running as root and cannot make a folder immutable: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}

func TestWriteToReadOnlyFolder(t *testing.T) {
	f := newFixture(t)
	writeFiles(t, f.root, map[string]string{"ro/existing.txt": "old\n"})
	makeReadOnly(t, filepath.Join(f.root, "ro"))
	for _, write := range []func() error{
		func() error { return f.r.WriteFile("ro/existing.txt", []byte("new\n"), WriteOptions{}) },
		func() error { return f.r.WriteFile("ro/new.txt", []byte("new\n"), WriteOptions{}) },
		func() error { return f.r.CreateFile("ro/new.txt", []byte("new\n"), WriteOptions{}) },
		func() error { return f.r.WriteFile("ro/a/b.txt", []byte("new\n"), WriteOptions{}) },
	} {
		err := write()
		assertKind(t, err, fs.ErrPermission)
		if !strings.Contains(err.Error(), `"ro/`) || !strings.Contains(err.Error(), "permission denied") ||
			!strings.Contains(err.Error(), "check the permissions") {
			t.Errorf("message %q does not name the path, the cause and the next step", err)
		}
	}
	if got := readString(t, filepath.Join(f.root, "ro", "existing.txt")); got != "old\n" {
		t.Fatalf("existing.txt = %q", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.root, "ro")); len(entries) != 1 {
		t.Fatalf("ro has %d entries, want only existing.txt", len(entries))
	}
}

func TestCreateFileConcurrentCreators(t *testing.T) {
	f := newFixture(t)
	const creators = 8
	var wg sync.WaitGroup
	errs := make([]error, creators)
	for i := range creators {
		wg.Go(func() {
			errs[i] = f.r.CreateFile("race/new.txt", []byte(fmt.Sprint("creator ", i)), WriteOptions{})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("creators %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, fs.ErrExist):
			t.Fatalf("creator %d: %v, want fs.ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no creator succeeded")
	}
	if got := readString(t, filepath.Join(f.root, "race", "new.txt")); got != fmt.Sprint("creator ", winner) {
		t.Fatalf("content %q, but creator %d won", got, winner)
	}
	if left := tempFilesIn(t, f.root); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

// On a file system without hard links, create and move fall back to check-then-rename.
func TestWithoutHardLinks(t *testing.T) {
	f := newFixture(t)
	linkInRoot = func(*os.Root, string, string) error {
		return &fs.PathError{Op: "linkat", Path: "x", Err: syscall.EPERM}
	}
	t.Cleanup(func() { linkInRoot = (*os.Root).Link })

	if err := f.r.CreateFile("new.txt", []byte("new\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	assertKind(t, f.r.CreateFile("new.txt", []byte("again\n"), WriteOptions{}), fs.ErrExist)
	if err := f.r.Move("new.txt", "moved/new.txt"); err != nil {
		t.Fatal(err)
	}
	assertKind(t, f.r.Move("a.txt", "moved/new.txt"), fs.ErrExist)
	if got := readString(t, filepath.Join(f.root, "moved", "new.txt")); got != "new\n" {
		t.Fatalf("moved/new.txt = %q", got)
	}
	assertNotExist(t, filepath.Join(f.root, "new.txt"))
	if left := tempFilesIn(t, f.root); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestReadFile(t *testing.T) {
	f := newFixture(t)
	data, info, err := f.r.ReadFile("sub/b.txt", 0)
	if err != nil || string(data) != "bee\n" || info.Size() != 4 || !info.Mode().IsRegular() {
		t.Fatalf("ReadFile = %q, %v, %v", data, info, err)
	}
	_, _, err = f.r.ReadFile("nope.txt", 0)
	assertKind(t, err, fs.ErrNotExist)
	if !strings.Contains(err.Error(), `"nope.txt"`) {
		t.Fatalf("message %q does not name the file", err)
	}
}

func TestLstat(t *testing.T) {
	f := newFixture(t)
	info, err := f.r.Lstat("link_in")
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("Lstat(link_in) = %v, %v; want the link itself", info, err)
	}
	_, err = f.r.Lstat("nope")
	assertKind(t, err, fs.ErrNotExist)
	_, err = f.r.Lstat("linkdir_out/secret.txt")
	assertKind(t, err, ErrOutside)
}

func TestRemove(t *testing.T) {
	f := newFixture(t)
	if err := f.remove("sub/b.txt"); err != nil {
		t.Fatal(err)
	}
	assertNotExist(t, filepath.Join(f.root, "sub", "b.txt"))
	assertKind(t, f.remove("sub/b.txt"), fs.ErrNotExist)
	err := f.remove("link_in")
	assertKind(t, err, ErrNotRegular)
	if !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), "edit history") {
		t.Fatalf("message %q does not explain the symlink refusal", err)
	}
}

func TestMove(t *testing.T) {
	f := newFixture(t)
	script := filepath.Join(f.root, "run.sh")
	writeFiles(t, f.root, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.move("run.sh", "bin/tools/run.sh"); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(f.root, "bin", "tools", "run.sh")
	if readString(t, moved) != "#!/bin/sh\n" || modeOf(t, moved) != 0o755 {
		t.Fatalf("moved file: %q %v", readString(t, moved), modeOf(t, moved))
	}
	assertNotExist(t, script)

	writeFiles(t, f.root, map[string]string{".mcp/edit_history/logs/c.log": "{}\n"})
	runAttacks(t, []attack{
		{"into the history store", func() error { return f.r.Move("a.txt", ".mcp/edit_history/a.txt") }, ErrHistoryStore},
		{"out of the history store", func() error { return f.r.Move(".mcp/edit_history/logs/c.log", "c.log") }, ErrHistoryStore},
		{"missing source", func() error { return f.r.Move("nope.txt", "x.txt") }, fs.ErrNotExist},
	})

	// A failed move leaves no folder it made behind.
	linkInRoot = func(*os.Root, string, string) error {
		return &fs.PathError{Op: "linkat", Path: "x", Err: syscall.EIO}
	}
	t.Cleanup(func() { linkInRoot = (*os.Root).Link })
	if err := f.r.Move("a.txt", "new/dir/a.txt"); err == nil {
		t.Fatal("Move succeeded despite the failing link")
	}
	assertNotExist(t, filepath.Join(f.root, "new"))
	if readString(t, filepath.Join(f.root, "a.txt")) != "hello\n" {
		t.Fatal("a.txt changed")
	}
}

func TestList(t *testing.T) {
	f := newFixture(t)
	writeFiles(t, f.root, map[string]string{
		"sub/c/d.txt":                  "d\n",
		"sub-x.txt":                    "x\n",
		".mcp/settings.json":           "{}\n",
		".mcp/edit_history/logs/c.log": "{}\n",
		"sub/.mcp/edit_history/x":      "x\n", // only the root's own store is private
	})
	entries, err := f.r.List(".", true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		desc := e.Rel
		if e.IsDir {
			desc += "/"
		}
		if e.IsSymlink {
			desc += "@"
		}
		got = append(got, desc)
	}
	want := []string{
		".mcp/", ".mcp/settings.json",
		"a.txt", "dangling@", "link_in@", "link_out@", "linkdir_out@",
		"sub/", "sub/.mcp/", "sub/.mcp/edit_history/", "sub/.mcp/edit_history/x",
		"sub/b.txt", "sub/c/", "sub/c/d.txt",
		"sub-x.txt",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("List:\n got %v\nwant %v", got, want)
	}

	entries, err = f.r.List("sub", false)
	if err != nil || len(entries) != 3 || entries[1].Rel != "b.txt" || !entries[2].IsDir {
		t.Fatalf("List(sub) = %+v, %v", entries, err)
	}

	entries, more, err := f.r.ListLimit(".", true, 4)
	if err != nil || len(entries) != 4 || more != len(want)-4 || entries[3].Rel != "dangling" {
		t.Fatalf("ListLimit(4) = %+v, more %d, %v", entries, more, err)
	}

	_, err = f.r.List("a.txt", false)
	assertKind(t, err, ErrNotDir)
	_, err = f.r.List(".mcp/edit_history", false)
	assertKind(t, err, ErrHistoryStore)
	_, err = f.r.List("nope", false)
	assertKind(t, err, fs.ErrNotExist)
}

func TestLock(t *testing.T) {
	f := newFixture(t)
	key := filepath.Join(f.root, "a.txt")
	const workers, rounds = 8, 50
	counter := 0 // not atomic: the race detector checks the lock's exclusion
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				unlock := f.p.Lock(key)
				counter++
				unlock()
			}
		})
	}
	wg.Wait()
	if counter != workers*rounds {
		t.Fatalf("counter = %d, want %d", counter, workers*rounds)
	}

	// Another key is independent of a held one.
	unlockA := f.p.Lock(key)
	done := make(chan struct{})
	go func() {
		f.p.Lock(filepath.Join(f.root, "b.txt"))()
		close(done)
	}()
	select {
	case <-done:
	case <-deadline(t):
		t.Fatal("locking another file waited for a held lock")
	}
	unlockA()
	unlockA() // a second call is harmless

	f.p.locks.mu.Lock()
	left := len(f.p.locks.entries)
	f.p.locks.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d lock entries left after every unlock", left)
	}
}

func TestWriteFileStagesInTempDir(t *testing.T) {
	dir := t.TempDir()
	root := openRoot(t, dir)
	stage := filepath.Join(".mcp", "edit_history", "tmp")
	o := WriteOptions{TempDir: stage}
	if err := root.WriteFile("sub/a.txt", []byte("one\n"), o); err != nil {
		t.Fatal(err)
	}
	if err := root.WriteFile("sub/a.txt", []byte("two\n"), o); err != nil {
		t.Fatal(err)
	}
	if err := root.CreateFile("b.txt", []byte("b\n"), o); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"sub/a.txt": "two\n", "b.txt": "b\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, path)); string(b) != want {
			t.Fatalf("%s = %q, want %q", path, b, want)
		}
	}
	if left := tempFilesIn(t, dir); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
	if names, _ := os.ReadDir(filepath.Join(dir, stage)); len(names) != 0 {
		t.Fatalf("staging folder not empty: %v", names)
	}
}

// Install moves a staged file into place whole, with the mode it was staged with,
// making the missing folders; it refuses to replace a symlink or a folder.
func TestInstall(t *testing.T) {
	dir := t.TempDir()
	root := openRoot(t, dir)
	stage := func(name, content string, mode fs.FileMode) string {
		rel := filepath.Join(".mcp", "edit_history", "journal", name)
		os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o700)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(dir, rel), mode)
		return rel
	}
	if err := root.Install(stage("0", "new\n", 0o751), "sub/deep/a.txt"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub/deep/a.txt")); string(b) != "new\n" || modeOf(t, filepath.Join(dir, "sub/deep/a.txt")).Perm() != 0o751 {
		t.Fatalf("installed %q %v", b, modeOf(t, filepath.Join(dir, "sub/deep/a.txt")))
	}
	if _, err := os.Stat(filepath.Join(dir, ".mcp/edit_history/journal/0")); err == nil {
		t.Fatal("the staged name is still there")
	}
	os.Symlink("sub/deep/a.txt", filepath.Join(dir, "link"))
	os.Mkdir(filepath.Join(dir, "folder"), 0o755)
	for _, target := range []string{"link", "folder"} {
		if err := root.Install(stage("1", "x\n", 0o644), target); !errors.Is(err, ErrNotRegular) {
			t.Fatalf("install over %s: %v", target, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub/deep/a.txt")); string(b) != "new\n" {
		t.Fatalf("the link's target changed: %q", b)
	}
}

// Across file systems (a folder of the root that is a mount point), Install copies.
func TestInstallAcrossFileSystems(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", "-l", mnt).Run()
	root := openRoot(t, dir)
	os.WriteFile(filepath.Join(dir, "staged"), []byte("across\n"), 0o640)
	os.Chmod(filepath.Join(dir, "staged"), 0o640)
	os.WriteFile(filepath.Join(mnt, "a.txt"), []byte("old\n"), 0o644)
	if err := root.Install("staged", "mnt/a.txt"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(mnt, "a.txt")); string(b) != "across\n" || modeOf(t, filepath.Join(mnt, "a.txt")).Perm() != 0o640 {
		t.Fatalf("copied %q %v", b, modeOf(t, filepath.Join(mnt, "a.txt")))
	}
	if left := tempFilesIn(t, mnt); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "staged")); err == nil {
		t.Fatal("the staged file is still there")
	}
}

// A write staged in a folder of its own that cannot be written names that folder,
// not the file.
func TestTempDirAtFaultIsNamed(t *testing.T) {
	dir := t.TempDir()
	root := openRoot(t, dir)
	os.MkdirAll(filepath.Join(dir, ".mcp", "edit_history"), 0o700)
	os.WriteFile(filepath.Join(dir, ".mcp", "edit_history", "tmp"), nil, 0o600) // a file where the folder should be
	err := root.WriteFile("a.txt", []byte("a\n"), WriteOptions{TempDir: filepath.Join(".mcp", "edit_history", "tmp")})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root.Path(), ".mcp", "edit_history", "tmp")+":") || !strings.Contains(err.Error(), "check that folder") {
		t.Fatalf("err = %v", err)
	}
}

func TestLinkFile(t *testing.T) {
	dir := t.TempDir()
	root := openRoot(t, dir)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	if err := root.LinkFile("a.txt", "b.txt"); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(statOf(t, filepath.Join(dir, "a.txt")), statOf(t, filepath.Join(dir, "b.txt"))) {
		t.Fatal("not the same file")
	}
	if err := root.LinkFile("link", "c.txt"); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("linking a symlink: %v", err)
	}
}

func statOf(t *testing.T, path string) fs.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
