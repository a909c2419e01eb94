package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// A cloned repository can carry symlinks in .mcp/. None of them may make mcpdiff
// write outside the store.

func TestStoreBehindASymlinkOutsideIsRefused(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, ".mcp")); err != nil {
		t.Fatal(err)
	}
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("Open through .mcp -> outside: err = %v, want a refusal naming the symlink", err)
	}
	if _, err := OpenExisting(root); err == nil {
		t.Fatal("OpenExisting through .mcp -> outside succeeded")
	}
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Fatalf("the store wrote outside the workspace: %v", names)
	}
}

func TestPlantedSymlinksInTheStoreAreNotFollowedOutside(t *testing.T) {
	for _, name := range []string{"logs/conv_1_x.log", "heads.log", "rebuilds.log", "history.lock"} {
		t.Run(name, func(t *testing.T) {
			w := newWS(t)
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(w.store.dir, filepath.FromSlash(name))
			if err := os.Symlink(victim, link); err != nil {
				t.Fatal(err)
			}
			w.writeRaw("a.txt", "a\n")
			ch := Change{Op: Edit, Path: w.abs("a.txt"), Before: []byte("a\n"), BeforeExists: true, After: []byte("b\n")}
			entries, err := recordWritten(w.store, Commit{
				Conversation: "conv_1_x", Tool: "test", Source: SourceMCP, Changes: []Change{ch},
			}, w.files(ch))
			want := "a\n"
			if err == nil { // rebuilds.log is only written by a decision
				want = "b\n"
				_, err = w.decide(Rejected, false, entries[0].EditID)
			}
			if err == nil {
				t.Fatalf("recording and rejecting through a planted %s succeeded", name)
			}
			if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
				t.Fatalf("the file behind %s was changed: %q", name, got)
			}
			w.expect("a.txt", want)
		})
	}
}

func TestFindSkipsAStoreOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	parent := t.TempDir()
	store := filepath.Join(parent, ".mcp", "edit_history")
	if err := os.MkdirAll(store, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(store, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	child := filepath.Join(parent, "project")
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Fatal(err)
	}
	// Only the planted store is at stake: a store above the temp folder, which this
	// test does not control, may be found.
	if got, err := Find(child); err == nil && got == parent {
		t.Fatalf("Find used %s, a store another user owns", got)
	}
}
