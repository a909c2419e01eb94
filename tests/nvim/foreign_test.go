//go:build unix

package nvimtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// A store the user did not make (here one of mcpdiff 0.2.0, without a signature) is
// listed in the review list under a warning that says so and how to adopt it; it
// gives no signs, and a decision on it is refused saying why. Once adopted, its
// pending edit shows.
func TestForeignStoreInNeovim(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		convs, err := testenv.WriteStore(s.ws, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(s.ws, ".mcp", "edit_history", "identity.json")); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(s.ws, "file009.go") // the tenth edit, pending, changed its line 10
		before, _ := os.ReadFile(path)
		s.cmd("edit " + path)
		s.cmd("McpDiffStatus")
		s.waitListLine("is not yours", "0.2.0", "mcpdiff adopt")
		s.waitListLine("Conversation " + convs[0] + " (10)")
		if hs := s.hunks(path); len(hs) != 0 {
			t.Fatalf("signs from a foreign store: %+v", hs)
		}
		s.cmd("wincmd p")
		s.cmd("McpDiffReject")
		s.waitMessage("is not yours")
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Fatal("a decision on a foreign store changed the file")
		}

		if out, code := s.cli("adopt", "--yes"); code != 0 || !strings.Contains(out, "adopted") {
			t.Fatalf("adopt: %s", out)
		}
		s.waitHunks(path, "change 10-10", "10:McpDiffChange")
	})
}
