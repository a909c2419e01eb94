package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A stat is trusted only when the file's times are older than it by more than the
// clock's tick: then no write in place can keep them.
func TestSettled(t *testing.T) {
	now := time.Now()
	old := now.Add(-time.Hour).Add(123)
	for _, tc := range []struct {
		name         string
		mtime, ctime time.Time
		want         bool
	}{
		{"written long before the stat", old, old, true},
		{"written within a tick of the stat", now.Add(-fineTick / 2), now.Add(-fineTick / 2), false},
		{"written after the stat", now.Add(time.Second), now.Add(time.Second), false},
		{"modification time set back, changed within a tick", old, now.Add(-fineTick / 2), false},
		{"whole seconds, a second before the stat", now.Add(-time.Second).Truncate(time.Second), old, false},
		{"whole seconds, long before the stat", old.Truncate(time.Second), old, true},
	} {
		if got := settled(tc.mtime, tc.ctime, now); got != tc.want {
			t.Errorf("%s: settled = %v, want %v", tc.name, got, tc.want)
		}
	}

	// On a file: its change time is when it was last touched.
	path := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(path, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, old); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if Settled(info, time.Now()) {
		t.Error("a file whose change time is now is settled")
	}
	if !Settled(info, time.Now().Add(time.Hour)) {
		t.Error("a file untouched for an hour is not settled")
	}
}

// Same compares what a program cannot set back: a write in place whose modification
// time is restored keeps Unchanged, not Same.
func TestSameSeesARestoredModificationTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	was, _ := os.Stat(path)
	if again, _ := os.Stat(path); !Same(was, again) {
		t.Fatal("two stats of an unchanged file differ")
	}
	time.Sleep(2 * fineTick) // the change time must be able to move on (a coarse clock)
	if err := os.WriteFile(path, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, was.ModTime()); err != nil {
		t.Fatal(err)
	}
	now, _ := os.Stat(path)
	if !Unchanged(was, now) {
		t.Fatal("the rewrite did not keep inode, size and modification time")
	}
	if Same(was, now) {
		t.Fatal("Same trusts a file whose modification time was set back after a write")
	}
}

// Verify compares the bytes of a file whose stat is not settled: a write in place
// within the clock's tick keeps the stat (here: the stat is taken after the write,
// as the two would look alike).
func TestVerifyComparesAFileWrittenWithinTheTick(t *testing.T) {
	f := newFixture(t)
	read := []byte("hello\n")
	if err := os.WriteFile(filepath.Join(f.root, "a.txt"), []byte("HELLO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := f.r.Stat("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	file := File{Root: f.r, Rel: "a.txt", Abs: filepath.Join(f.root, "a.txt")}
	verify := func(content []byte, settled bool) error {
		tx := NewTx(false)
		tx.Write(file, Was{Content: content, Exists: true, Info: info, Settled: settled}, []byte("x\n"))
		return tx.Verify()
	}
	if err := verify(read, false); !errors.Is(err, ErrChanged) {
		t.Fatalf("Verify of a file written since it was read, stat not settled: %v, want ErrChanged", err)
	}
	if err := verify([]byte("HELLO\n"), false); err != nil {
		t.Fatalf("Verify of a file that holds what was read: %v", err)
	}
	if err := verify(read, true); err != nil {
		t.Fatalf("a settled stat is trusted without reading the file: %v", err)
	}
}

// What the file tools write gets a modification time of the fine clock, which the
// file keeps through the rename: its stat is settled at once, so the server may
// keep the bytes it wrote.
func TestWrittenFilesAreSettled(t *testing.T) {
	f := newFixture(t)
	file := File{Root: f.r, Rel: "a.txt", Abs: filepath.Join(f.root, "a.txt")}
	was, err := f.r.Stat("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	tx := NewTx(false)
	tx.Write(file, Was{Content: []byte("hello\n"), Exists: true, Info: was, Settled: true}, []byte("new\n"))
	if err := tx.Verify(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Stage(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Apply(); err != nil {
		t.Fatal(err)
	}
	info, settled := tx.Written(file)
	now, err := f.r.Stat("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !Same(info, now) {
		t.Fatal("the stat Written gives is not the file's")
	}
	if info.ModTime().Nanosecond()%1000 == 0 {
		t.Skip("this file system keeps no nanoseconds")
	}
	if !settled {
		t.Fatalf("a file the Tx wrote is not settled (modification time %v)", info.ModTime())
	}
}

// A Stamp answers both questions: a write in place keeps the object and shows the
// write; a rename puts another object at the path.
func TestStampTellsObjectsAndWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if StatStamp(path).Exists || !StatStamp(path).UnchangedSince(Stamp{}) {
		t.Fatal("a missing file has the zero stamp")
	}
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	was := StatStamp(path)
	if !StatStamp(path).UnchangedSince(was) || was.UnchangedSince(Stamp{}) {
		t.Fatal("two stamps of an unchanged file differ, or a file equals a missing one")
	}
	if err := os.WriteFile(path, []byte("longer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inPlace := StatStamp(path)
	if !inPlace.SameObject(was) || inPlace.UnchangedSince(was) {
		t.Fatal("a write in place must keep the object and show as a change")
	}
	other := filepath.Join(dir, "b.txt")
	if err := os.WriteFile(other, []byte("longer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if StatStamp(path).SameObject(inPlace) {
		t.Fatal("a file replaced by rename is the same object")
	}
}
