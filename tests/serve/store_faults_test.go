//go:build unix

package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// freeze makes folders unwritable, even for root (chattr +i), until the test ends.
func freeze(t *testing.T, dirs ...string) {
	t.Helper()
	if out, err := exec.Command("chattr", append([]string{"+i"}, dirs...)...).CombinedOutput(); err != nil {
		t.Skipf("cannot make folders unwritable here (chattr): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", append([]string{"-i"}, dirs...)...).Run() })
}

// unchanged checks a failed decision left the file and every status as they were.
func unchanged(t *testing.T, s *session, rel, content string) {
	t.Helper()
	s.expect(rel, content)
	for _, e := range s.entries() {
		if e["status"] != "pending" {
			t.Fatalf("a failed decision changed a status: %v", e)
		}
	}
}

// When a folder of the store cannot be written, the error names that folder, not
// the user's file, and guesses nothing.
func TestStoreFolderAtFaultIsNamed(t *testing.T) {
	t.Parallel()
	t.Run("tmp, during an edit", func(t *testing.T) {
		s := start(t)
		s.Write("big.txt", "a\n")
		s.ok("edit_file", map[string]any{"path": "big.txt", "old_string": "a", "new_string": "b"})
		freeze(t, s.Path(".mcp/edit_history/tmp"))
		msg := s.fails("edit_file", map[string]any{"path": "big.txt", "old_string": "b", "new_string": "c"}, s.Path(".mcp/edit_history/tmp"))
		if strings.Contains(msg, "read-only") {
			t.Fatalf("a guess in %q", msg)
		}
		s.expect("big.txt", "b\n")
	})
	t.Run("the store, during a reject", func(t *testing.T) {
		s, ids := threeEdits(t)
		before := s.Read("a.txt")
		freeze(t, s.Path(".mcp/edit_history"))
		_, errOut, code := cliSplit(t, s.dir, "reject", ids[1])
		if code != 1 || !strings.Contains(errOut, s.Path(".mcp/edit_history/journal")) || !strings.Contains(errOut, "nothing was changed") {
			t.Fatalf("exit %d: %q", code, errOut)
		}
		unchanged(t, s, "a.txt", before)
	})
	t.Run("logs, after the files were rebuilt", func(t *testing.T) {
		s, ids := threeEdits(t)
		before := s.Read("a.txt")
		freeze(t, s.Path(".mcp/edit_history/logs"))
		_, errOut, code := cliSplit(t, s.dir, "reject", ids[1])
		conv := s.entries()[0]["conversation_id"].(string)
		if code != 1 || !strings.Contains(errOut, s.Path(".mcp/edit_history/logs/"+conv+".log")) || !strings.Contains(errOut, "was undone, nothing was changed") {
			t.Fatalf("exit %d: %q", code, errOut)
		}
		unchanged(t, s, "a.txt", before)
		assertConsistent(t, s.dir)
	})
	t.Run("the user's folder", func(t *testing.T) {
		s := start(t)
		s.Write("sub/x.txt", "1\n2\n")
		s.Write("y.txt", "y\n")
		conv := convOf(t, s.ok("edit_file", map[string]any{"path": "y.txt", "old_string": "y", "new_string": "Y"}))
		s.ok("edit_file", map[string]any{"path": "sub/x.txt", "old_string": "2", "new_string": "two", "mcp_conversation_id": conv})
		freeze(t, s.Path("sub"))
		_, errOut, code := cliSplit(t, s.dir, "reject", "--conv", conv)
		if code != 1 || !strings.Contains(errOut, `"sub/x.txt"`) || !strings.Contains(errOut, "was undone, nothing was changed") {
			t.Fatalf("exit %d: %q", code, errOut)
		}
		unchanged(t, s, "sub/x.txt", "1\ntwo\n")
		s.expect("y.txt", "Y\n")
	})
}

// A logs folder swapped for a symlink that leaves the store is named as such.
func TestLogsFolderSymlinkIsNamed(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	outside := t.TempDir()
	logs := s.Path(".mcp/edit_history/logs")
	if err := os.Rename(logs, filepath.Join(outside, "logs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "logs"), logs); err != nil {
		t.Fatal(err)
	}
	s2 := startIn(t, s.dir)
	msg := s2.fails("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"}, logs, "symlink")
	if strings.Contains(msg, "read-only") {
		t.Fatalf("a wrong guess in %q", msg)
	}
	_, errOut, code := cliSplit(t, s.dir, "reject", ids[0])
	if code != 1 || !strings.Contains(errOut, logs) || !strings.Contains(errOut, "symlink") {
		t.Fatalf("reject: exit %d %q", code, errOut)
	}
}
