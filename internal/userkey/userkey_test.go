//go:build unix

package userkey

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// stateIn points the key's folder at a fresh one for the test.
func stateIn(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	return filepath.Join(dir, "mcpdiff", fileName)
}

func TestKeyIsMadeOnceAndPrivate(t *testing.T) {
	path := stateIn(t)
	if _, err := Load(false); !errors.Is(err, ErrNoKey) {
		t.Fatalf("without a key: %v", err)
	}
	// Several processes making it at once all end up with the same key.
	var wg sync.WaitGroup
	sigs := make([]string, 8)
	for i := range sigs {
		wg.Go(func() {
			keys.Delete(path)
			k, err := create(path)
			if err != nil {
				t.Error(err)
				return
			}
			sigs[i] = k.Sign("p", []byte("x"))
		})
	}
	wg.Wait()
	for _, s := range sigs {
		if s != sigs[0] {
			t.Fatalf("two keys were made: %v", sigs)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Fatalf("key folder mode %v", di.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".key-*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestSignaturesDependOnKeyPurposeAndParts(t *testing.T) {
	stateIn(t)
	k, err := Load(true)
	if err != nil {
		t.Fatal(err)
	}
	sig := k.Sign("store", []byte("ab"), []byte("c"))
	if !k.Verify(sig, "store", []byte("ab"), []byte("c")) {
		t.Fatal("a signature does not verify")
	}
	for _, other := range [][]string{{"plan", "ab", "c"}, {"store", "a", "bc"}, {"store", "abc"}} {
		var parts [][]byte
		for _, p := range other[1:] {
			parts = append(parts, []byte(p))
		}
		if k.Verify(sig, other[0], parts...) {
			t.Fatalf("the signature verifies for %q", other)
		}
	}
	stateIn(t)
	k2, _ := Load(true)
	if k2.Verify(sig, "store", []byte("ab"), []byte("c")) {
		t.Fatal("another user's key verifies the signature")
	}
}

// A key others can read, or that is not a regular file, is refused without
// blocking; a damaged one says so.
func TestBadKeyFilesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		plant      func(path string)
	}{
		{"readable by others", "chmod 600", func(path string) {
			os.WriteFile(path, []byte(strings.Repeat("ab", 32)), 0o644)
			os.Chmod(path, 0o644)
		}},
		{"a FIFO", "not a regular file", func(path string) { syscall.Mkfifo(path, 0o600) }},
		{"damaged", "damaged", func(path string) { os.WriteFile(path, []byte("zz"), 0o600) }},
		{"a symlink", "mcpdiff key", func(path string) {
			other := filepath.Join(filepath.Dir(path), "other")
			os.WriteFile(other, []byte(strings.Repeat("ab", 32)), 0o600)
			os.Symlink(other, path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := stateIn(t)
			os.MkdirAll(filepath.Dir(path), 0o700)
			tc.plant(path)
			if _, err := Load(true); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDirFollowsXDGStateHome(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if Dir() != "/x/state/mcpdiff" {
		t.Fatal(Dir())
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if Dir() != "/home/u/.local/state/mcpdiff" {
		t.Fatal(Dir())
	}
}
