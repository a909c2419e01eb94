package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// leftovers fails the test when dir holds anything but names.
func leftovers(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(names) {
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		t.Fatalf("%s holds %q, want %q", dir, got, names)
	}
}

func TestWriteReplacesInOneStep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := Write(path, []byte("one"), Options{Mode: 0o600}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	// Mode 0 keeps the file's; Sync flushes.
	if err := Write(path, []byte("two"), Options{Sync: true}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	info, _ := os.Stat(path)
	if string(data) != "two" || info.Mode().Perm() != 0o640 {
		t.Fatalf("%q, mode %v; want \"two\", 0640", data, info.Mode().Perm())
	}
	leftovers(t, dir, "f")
}

func TestWriteLeavesTheFileWhenCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := errors.New("changed meanwhile")
	if err := Write(path, []byte("theirs"), Options{Check: func() error { return changed }}); !errors.Is(err, changed) {
		t.Fatalf("Write = %v, want the check's error", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "mine" {
		t.Fatalf("the file holds %q", data)
	}
	leftovers(t, dir, "f")
}

func TestKeepLetsTheFileThereWin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	if err := Write(path, []byte("first"), Options{Mode: 0o600, Keep: true}); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("second"), Options{Mode: 0o600, Keep: true}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Write over a kept file = %v, want fs.ErrExist", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "first" {
		t.Fatalf("the file holds %q", data)
	}
	leftovers(t, dir, "key")
}

func TestWriteIntoAMissingFolderFails(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "f"), []byte("x"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Write = %v, want fs.ErrNotExist", err)
	}
}
