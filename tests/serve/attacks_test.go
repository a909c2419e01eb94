//go:build unix

package serve

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Ways out of a root (links, swaps, special files), through the real server: each must fail with a
// clear error and leave everything outside the root as it was.

type attackWorld struct {
	*session
	outside string // a folder next to the root, holding secret.txt
	evil    string // the prefix sibling root_evil
}

func newAttackWorld(t *testing.T) *attackWorld {
	base := testenv.TempDir(t)
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	evil := filepath.Join(base, "root_evil")
	for _, d := range []string{root, outside, evil} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644)
	os.WriteFile(filepath.Join(evil, "secret.txt"), []byte("evil secret\n"), 0o644)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link_out"))
	os.Symlink(outside, filepath.Join(root, "linkdir_out"))
	os.Symlink(filepath.Join(outside, "created.txt"), filepath.Join(root, "dangling"))
	os.Symlink("a.txt", filepath.Join(root, "link_in"))
	s := startIn(t, root)
	return &attackWorld{session: s, outside: outside, evil: evil}
}

// untouched checks nothing outside the root changed.
func (w *attackWorld) untouched() {
	w.t.Helper()
	for path, want := range map[string]string{
		filepath.Join(w.outside, "secret.txt"): "secret\n",
		filepath.Join(w.evil, "secret.txt"):    "evil secret\n",
	} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			w.t.Fatalf("%s changed: %q %v", path, b, err)
		}
	}
	names, _ := os.ReadDir(w.outside)
	if len(names) != 1 {
		w.t.Fatalf("files appeared outside the root: %v", names)
	}
	if names, _ := os.ReadDir(w.evil); len(names) != 1 {
		w.t.Fatalf("files appeared in the prefix sibling: %v", names)
	}
}

func TestAttacksAreRefused(t *testing.T) {
	t.Parallel()
	w := newAttackWorld(t)
	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"A1 prefix sibling read", "read_text_file", map[string]any{"path": w.evil + "/secret.txt"}, "outside"},
		{"A1 prefix sibling write", "write_file", map[string]any{"path": w.evil + "/pwn", "content": "x"}, "outside"},
		{"A2 dot-dot relative", "read_files", map[string]any{"path": "../outside/secret.txt"}, "outside"},
		{"A2 dot-dot absolute", "write_file", map[string]any{"path": w.dir + "/../outside/x", "content": "x"}, "outside"},
		{"A3 file symlink read", "read_text_file", map[string]any{"path": "link_out"}, "outside"},
		{"A3 file symlink edit", "edit_file", map[string]any{"path": "link_out", "old_string": "secret", "new_string": "pwned"}, "outside"},
		{"A3 file symlink delete", "delete_file", map[string]any{"path": "link_out"}, "symlink"},
		{"A4 folder symlink write", "create_file", map[string]any{"path": "linkdir_out/new.txt", "content": "x"}, "outside"},
		{"A4 folder symlink list", "list_files", map[string]any{"path": "linkdir_out"}, "outside"},
		{"A4 move into folder symlink", "move_file", map[string]any{"source": "a.txt", "destination": "linkdir_out/a.txt"}, "outside"},
		{"A5 dangling symlink", "write_file", map[string]any{"path": "dangling", "content": "x"}, "dangling"},
		{"A9 NUL byte", "write_file", map[string]any{"path": "a\x00b", "content": "x"}, "NUL"},
		{"A12 delete the root", "delete_file", map[string]any{"path": "."}, "root"},
		{"A13 move onto existing", "move_file", map[string]any{"source": "link_in", "destination": "a.txt"}, ""},
		{"history store", "read_text_file", map[string]any{"path": ".mcp/edit_history/FORMAT"}, "history"},
		{"bad regex", "search_and_replace", map[string]any{"path": "a.txt", "search": "[", "replace": "x", "use_regex": true}, ""},
	}
	w.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": "A"}) // creates the store
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w.t = t
			w.fails(tc.tool, tc.args, tc.want)
			w.untouched()
		})
	}
	// A7: an internal symlink is read through; deleting it is refused, never the target.
	w.t = t
	if got := w.ok("read_files", map[string]any{"path": "link_in"}); got != "1 | A" {
		t.Fatalf("read through internal link: %q", got)
	}
	w.fails("delete_file", map[string]any{"path": "link_in"}, "symlink")
	w.expect("a.txt", "A\n")
}

func TestFIFOIsRefusedWithoutBlocking(t *testing.T) {
	t.Parallel()
	s := start(t)
	if err := syscall.Mkfifo(s.Path("pipe"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	s.fails("read_text_file", map[string]any{"path": "pipe"}, "not a regular file")
	s.fails("edit_file", map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"}, "not a regular file")
	// The server still answers.
	s.Write("a.txt", "a\n")
	s.ok("read_text_file", map[string]any{"path": "a.txt"})
}

func TestBinaryAndHugeFilesAreRefused(t *testing.T) {
	t.Parallel()
	s := start(t, "--max-file-size", "1000")
	s.Write("bin.dat", "abc\x00def\n")
	s.fails("read_text_file", map[string]any{"path": "bin.dat"}, "binary")
	s.fails("edit_file", map[string]any{"path": "bin.dat", "old_string": "abc", "new_string": "x"}, "binary")
	s.Write("big.txt", strings.Repeat("0123456789\n", 200))
	s.fails("read_files", map[string]any{"path": "big.txt"}, "1000")
	s.expect("big.txt", strings.Repeat("0123456789\n", 200))
}

func TestUnicodeNameForms(t *testing.T) {
	t.Parallel()
	s := start(t)
	nfd := "cafe\u0301.txt" // e + combining acute
	nfc := "caf\u00e9.txt"
	s.Write(nfd, "x\n")
	s.ok("edit_file", map[string]any{"path": nfc, "old_string": "x", "new_string": "y"})
	s.expect(nfd, "y\n")
	if _, err := os.Stat(s.Path(nfc)); err == nil && nfc != nfd {
		// On a normalising file system both spellings name one file; elsewhere no
		// look-alike may be created.
		if names, _ := os.ReadDir(s.dir); len(names) > 2 {
			t.Fatalf("a look-alike was created: %v", names)
		}
	}
}
