//go:build unix

package serve

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A file rewritten in place with the same size, its modification time then set
// back (as a write within the clock's tick leaves it on Linux before 6.13), is
// read again: never answered from what the server kept of an earlier read or
// write.

// rewriteInPlace writes content over the file at path without replacing it (same
// inode) and gives it back the modification time it had.
func rewriteInPlace(t *testing.T, path, content string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != int64(len(content)) {
		t.Fatalf("the rewrite must keep the size: %d → %d", info.Size(), len(content))
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(content), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(info.ModTime()) || after.Size() != info.Size() {
		t.Fatal("the rewrite did not keep the size and modification time")
	}
}

func TestReadAfterAnInPlaceRewriteIsFresh(t *testing.T) {
	t.Parallel()
	for _, age := range []struct {
		name  string
		mtime time.Duration // relative to now, before the first read
	}{
		{"written long ago", -time.Hour},
		{"written as it is read", 0},
	} {
		t.Run(age.name, func(t *testing.T) {
			s := start(t)
			s.Write("a.txt", "old text\nsecond\n")
			if err := os.Chtimes(s.Path("a.txt"), time.Time{}, time.Now().Add(age.mtime)); err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second read may be answered from the first
				if got := s.ok("read_text_file", map[string]any{"path": "a.txt"}); !strings.Contains(got, "|old text\n") {
					t.Fatalf("first read:\n%s", got)
				}
			}
			rewriteInPlace(t, s.Path("a.txt"), "new text\nsecond\n")
			if got := s.ok("read_text_file", map[string]any{"path": "a.txt"}); !strings.Contains(got, "|new text\n") {
				t.Fatalf("the read after an in-place rewrite answers the old text:\n%s", got)
			}
			got := s.ok("read_files", map[string]any{"path": "a.txt"})
			if !strings.Contains(got, "new text") {
				t.Fatalf("read_files after an in-place rewrite:\n%s", got)
			}
		})
	}
}

// The bytes the server last wrote to a big file, which it edits from without
// reading the file, are not used once the file was rewritten in place: the edit
// applies to what the file holds.
func TestEditAfterAnInPlaceRewriteOfABigFileIsFresh(t *testing.T) {
	t.Parallel()
	s := start(t)
	line := strings.Repeat("x", 63) + "\n"
	big := strings.Repeat(line, (2<<20)/len(line)) // over the size from which written files are kept
	s.Write("big.txt", "first line\n"+big)
	s.ok("edit_file", map[string]any{"path": "big.txt", "old_string": "first line\n", "new_string": "FIRST line\n"})
	rewriteInPlace(t, s.Path("big.txt"), "FIRST LINE\n"+big)
	s.ok("edit_file", map[string]any{"path": "big.txt", "old_string": "FIRST LINE\n", "new_string": "the line\n"})
	if got := s.Read("big.txt"); got != "the line\n"+big {
		t.Fatalf("the edit did not apply to the rewritten file: starts %q", got[:20])
	}
}
