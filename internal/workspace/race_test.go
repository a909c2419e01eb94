package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// raceRounds is how many times the writer goes through its operations while the
// tree changes under it.
const raceRounds = 500

// raceFixture is the fixture with victims outside that the racing operations would
// hit if they ever followed the swapped path out: outside/f.txt, outside/new.txt. Its
// root holds real/f.txt and nothing at sub, the path each test makes and swaps.
func raceFixture(t *testing.T) (f *fixture, sub string) {
	f = newFixture(t)
	writeFiles(t, f.outside, map[string]string{"f.txt": "secret victim\n", "new.txt": "secret new\n"})
	writeFiles(t, f.root, map[string]string{"real/f.txt": "inside\n"})
	sub = filepath.Join(f.root, "sub")
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	f.before = snapshotOutside(t, f.base, f.root) // the victims are not the operations' doing
	return f, sub
}

// race runs swap over and over while hammer works on sub/..., until hammer is done or
// swap fails.
func race(t *testing.T, f *fixture, swap func() error) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := swap(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	hammer(t, f, stop)
	wg.Wait()
}

// hammer runs the operations of the tool handlers and of a history revert on
// sub/... until it has done raceRounds rounds, then closes stop. It fails the test
// if a read ever returns content from outside.
func hammer(t *testing.T, f *fixture, stop chan<- struct{}) {
	defer close(stop)
	failures := 0
	for i := range raceRounds {
		errs := []error{
			f.r.WriteFile("sub/f.txt", []byte("written\n"), WriteOptions{}),
			f.write("sub/f.txt", "written via policy\n"),
			f.r.CreateFile("sub/new.txt", []byte("created\n"), WriteOptions{}),
			f.r.Remove("sub/new.txt"),
			f.r.Move("sub/f.txt", "sub/g.txt"),
			f.r.Move("sub/g.txt", "sub/f.txt"),
		}
		data, _, err := f.r.ReadFile("sub/f.txt", 0)
		if strings.Contains(string(data), "secret") {
			t.Errorf("round %d: read returned outside content %q", i, data)
		}
		errs = append(errs, err)
		if content, err := f.read("sub/f.txt"); strings.Contains(content, "secret") {
			t.Errorf("round %d: read via policy returned outside content %q (%v)", i, content, err)
		}
		for _, err := range errs {
			if err != nil {
				failures++
			}
		}
	}
	t.Logf("%d of %d operations were refused while the tree changed", failures, raceRounds*7)
}

// A8: a symlink on the path is retargeted from a folder inside to one outside and
// back, atomically, while the writer works through it.
func TestA8RaceRetargetedSymlink(t *testing.T) {
	f, sub := raceFixture(t)
	symlink(t, "real", sub)
	next := filepath.Join(f.root, "sub.next")
	outside := true
	race(t, f, func() error {
		target := "real"
		if outside {
			target = f.outside
		}
		outside = !outside
		os.Remove(next)
		if err := os.Symlink(target, next); err != nil {
			return err
		}
		return os.Rename(next, sub)
	})
}
