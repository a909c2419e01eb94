package filetools

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// A read whose stat cannot tell a later write in place (taken within the clock's
// tick of the file's last change: not settled) is not kept, so the next read reads
// the file; a settled one answers while the file keeps its identity.
func TestOnlySettledReadsAreKept(t *testing.T) {
	path := filepath.Join(testenv.TempDir(t), "a.txt")
	writeFile(t, path, "one\n", 0o644)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := edit.NewReading([]byte("one\n"))
	if err != nil {
		t.Fatal(err)
	}
	var rs readings
	if rs.put(path, info, false, r, 4) != nil {
		t.Fatal("a read that is not settled was kept")
	}
	if got, _ := rs.get(path, info); got != nil {
		t.Fatal("a read that is not settled answers")
	}
	if rs.put(path, info, true, r, 4) == nil {
		t.Fatal("a settled read was not kept")
	}
	if got, _ := rs.get(path, info); got == nil {
		t.Fatal("a settled read of an unchanged file does not answer")
	}
}

// An agent's reads come seconds after the file's last change: from the moment a
// read's stat is settled, the reads after it are answered without reading the file.
func TestReadsOfASettledFileAreAnsweredFromMemory(t *testing.T) {
	root := testenv.TempDir(t)
	path := filepath.Join(root, "a.txt")
	writeFile(t, path, "one\ntwo\n", 0o644)
	var reads atomic.Int64
	c := serve(t, Config{Roots: []string{root}, FileRead: func(int64) { reads.Add(1) }})
	read := func() int64 {
		before := reads.Load()
		if got := c.ok("read_text_file", map[string]any{"path": path}); !strings.Contains(got, "|two\n") {
			t.Fatalf("read:\n%s", got)
		}
		return reads.Load() - before
	}
	// The file was just written: until a tick has passed, its reads read it again.
	testenv.Eventually(t, "a read answered from the one before", func() bool { return read() == 0 })
	for range 3 {
		if read() != 0 {
			t.Fatal("a read of an unchanged, settled file read the file again")
		}
	}
}
