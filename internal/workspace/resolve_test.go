package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestResolveInsideRoot(t *testing.T) {
	f := newFixture(t)
	symlink(t, "sub", filepath.Join(f.root, "linkdir_in"))
	symlink(t, filepath.Join(f.root, "sub", "b.txt"), filepath.Join(f.root, "abs_in"))
	tests := []struct {
		path, rel string
	}{
		{"a.txt", "a.txt"},
		{"./a.txt", "a.txt"},
		{"sub//b.txt", filepath.Join("sub", "b.txt")},
		{"sub/../a.txt", "a.txt"},
		{filepath.Join(f.root, "a.txt"), "a.txt"},
		{f.root, "."},
		{f.root + "/", "."},
		{".", "."},
		{"new/deeper/file.txt", filepath.Join("new", "deeper", "file.txt")},
		{"link_in", "a.txt"},
		{"linkdir_in/b.txt", filepath.Join("sub", "b.txt")},
		{"linkdir_in/new.txt", filepath.Join("sub", "new.txt")}, // a new file in a linked folder is fine
		{"abs_in", filepath.Join("sub", "b.txt")},               // absolute target inside the root
		{"linkdir_in", "sub"},
		{".mcp/config.json", filepath.Join(".mcp", "config.json")}, // only edit_history is private
		{"~/x", filepath.Join("~", "x")},                           // no home expansion: a literal name
	}
	for _, tt := range tests {
		file, err := f.p.Resolve(tt.path)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.path, err)
			continue
		}
		if file.Rel != tt.rel || file.Abs != filepath.Join(f.root, tt.rel) || file.Root != f.r {
			t.Errorf("Resolve(%q) = {Rel %q, Abs %q}, want Rel %q", tt.path, file.Rel, file.Abs, tt.rel)
		}
	}
}

func TestResolveErrorMessages(t *testing.T) {
	f := newFixture(t)
	p, _ := f.twoRoots(t)
	outsidePath := filepath.Join(f.outside, "x")
	tests := []struct {
		path string
		want string
	}{
		{outsidePath, `path "` + outsidePath + `" is outside the allowed roots (` + f.root + ", " + f.rootEvil + `); use a path inside one of them`},
		{"", `path is empty; give a path, absolute or relative to ` + f.root},
		{"a\x00b", `path "a\x00b" contains a NUL byte; send the path without it`},
		{".mcp/edit_history/logs/c.log", `path ".mcp/edit_history/logs/c.log" is inside mcpdiff's private edit history (` + filepath.Join(f.root, ".mcp", "edit_history") + `); use the mcpdiff CLI (mcpdiff status, show, accept, reject) instead`},
		{"link_out", `path "link_out" goes through the symlink "` + filepath.Join(f.root, "link_out") + `" to "` + filepath.Join(f.outside, "secret.txt") + `", which is outside the allowed roots (` + f.root + ", " + f.rootEvil + `); mcpdiff does not follow symlinks out of the roots; use a path inside them`},
		{"a.txt/x", `path "a.txt/x" goes through "` + filepath.Join(f.root, "a.txt") + `", which is a file, not a folder; check the path`},
	}
	for _, tt := range tests {
		_, err := p.Resolve(tt.path)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Resolve(%q):\n got %v\nwant %s", tt.path, err, tt.want)
		}
	}
}

func TestResolveHistoryStore(t *testing.T) {
	f := newFixture(t)
	writeFiles(t, f.root, map[string]string{".mcp/edit_history/logs/c.log": "{}\n"})
	symlink(t, ".mcp/edit_history", filepath.Join(f.root, "hist"))
	symlink(t, ".mcp/edit_history/logs/c.log", filepath.Join(f.root, "histfile"))
	for _, path := range []string{
		".mcp/edit_history",
		".mcp/edit_history/",
		".mcp/edit_history/logs/c.log",
		".mcp/edit_history/new.txt",
		"sub/../.mcp/edit_history/logs/c.log",
		".MCP/Edit_History/logs/c.log", // a case-insensitive file system would reach the store
		"hist/logs/c.log",
		"histfile",
		filepath.Join(f.root, ".mcp", "edit_history"),
	} {
		_, err := f.p.Resolve(path)
		if !errors.Is(err, ErrHistoryStore) {
			t.Errorf("Resolve(%q) = %v, want ErrHistoryStore", path, err)
		}
	}
	for _, path := range []string{".mcp", ".mcp/edit_history2", ".mcp/edit_historyx/a"} {
		if _, err := f.p.Resolve(path); err != nil {
			t.Errorf("Resolve(%q) = %v, want it allowed", path, err)
		}
	}
}

func TestSetBase(t *testing.T) {
	f := newFixture(t)
	symlink(t, "sub", filepath.Join(f.root, "linkdir_in"))
	if f.p.Base() != f.root {
		t.Fatalf("initial base %q, want the first root %q", f.p.Base(), f.root)
	}
	got, err := f.p.SetBase("linkdir_in")
	if err != nil || got != filepath.Join(f.root, "sub") || f.p.Base() != got {
		t.Fatalf("SetBase(linkdir_in) = %q, %v; Base %q", got, err, f.p.Base())
	}
	// Relative paths now start at sub; the roots are not narrowed nor widened.
	file, err := f.p.Resolve("b.txt")
	if err != nil || file.Rel != filepath.Join("sub", "b.txt") {
		t.Fatalf("Resolve(b.txt) after SetBase = %+v, %v", file, err)
	}
	if file, err = f.p.Resolve("../a.txt"); err != nil || file.Rel != "a.txt" {
		t.Fatalf("Resolve(../a.txt) after SetBase = %+v, %v", file, err)
	}
	if _, err := f.p.Resolve("../../outside/secret.txt"); !errors.Is(err, ErrOutside) {
		t.Fatalf("Resolve(../../outside/secret.txt) = %v, want ErrOutside", err)
	}

	for _, tt := range []struct {
		dir  string
		want error
	}{
		{"..", nil}, // back to the root, relative to the current base
		{"..", ErrOutside},
		{f.outside, ErrOutside},
		{"linkdir_out", ErrOutside},
		{"a.txt", ErrNotDir},
		{"nope", fs.ErrNotExist},
		{".mcp/edit_history", ErrHistoryStore},
	} {
		_, err := f.p.SetBase(tt.dir)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("SetBase(%q) = %v, want %v", tt.dir, err, tt.want)
		}
		if f.p.Base() != f.root {
			t.Fatalf("base moved to %q after SetBase(%q)", f.p.Base(), tt.dir)
		}
	}
}

func TestNestedRoots(t *testing.T) {
	f := newFixture(t)
	inner := openRoot(t, filepath.Join(f.root, "sub"))
	writeFiles(t, f.root, map[string]string{"sub/.mcp/edit_history/logs/c.log": "{}\n"})
	symlink(t, "sub/b.txt", filepath.Join(f.root, "to_inner"))
	for _, roots := range [][]*Root{{f.r, inner}, {inner, f.r}} {
		p, err := NewPolicy(roots)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Roots(); len(got) != 2 || got[0] != roots[0] || p.Base() != roots[0].Path() {
			t.Fatalf("Roots() = %v, Base() = %q", got, p.Base())
		}
		for _, tt := range []struct {
			path string
			root *Root
			rel  string
		}{
			{filepath.Join(f.root, "sub", "b.txt"), inner, "b.txt"},
			{filepath.Join(f.root, "sub"), inner, "."},
			{filepath.Join(f.root, "a.txt"), f.r, "a.txt"},
			{filepath.Join(f.root, "to_inner"), inner, "b.txt"}, // the innermost root holding the target
		} {
			file, err := p.Resolve(tt.path)
			if err != nil || file.Root != tt.root || file.Rel != tt.rel {
				t.Errorf("Resolve(%q) = {%s %q}, %v; want {%s %q}", tt.path, file.Root.Path(), file.Rel, err, tt.root.Path(), tt.rel)
			}
		}
		if _, err := p.Resolve(filepath.Join(f.root, "sub", ".mcp", "edit_history", "logs", "c.log")); !errors.Is(err, ErrHistoryStore) {
			t.Errorf("the inner root's history store: %v, want ErrHistoryStore", err)
		}
		// A move between them is refused: each root has its own history.
		from, _ := p.Resolve(filepath.Join(f.root, "a.txt"))
		to, _ := p.Resolve(filepath.Join(f.root, "sub", "a.txt"))
		assertKind(t, MoveFile(from, to), ErrCrossRoot)
	}
}

func TestCrossRootSymlink(t *testing.T) {
	f := newFixture(t)
	p, other := f.twoRoots(t)
	symlink(t, filepath.Join(f.rootEvil, "secret.txt"), filepath.Join(f.root, "to_other"))
	// A link into another allowed root is followed; the File belongs to that root.
	file, err := p.Resolve("to_other")
	if err != nil || file.Root != other || file.Rel != "secret.txt" {
		t.Fatalf("Resolve(to_other) = %+v, %v", file, err)
	}
	// With only the first root allowed, the same link leads outside.
	if _, err := f.p.Resolve("to_other"); !errors.Is(err, ErrOutside) {
		t.Fatalf("Resolve(to_other) with one root = %v, want ErrOutside", err)
	}
}

func TestUnicodeNormalization(t *testing.T) {
	f := newFixture(t)
	const nfc, nfd = "caf\u00e9", "cafe\u0301"
	writeFiles(t, f.root, map[string]string{nfc + ".txt": "nfc\n", "dir_" + nfc + "/x.txt": "x\n"})
	if _, err := os.Stat(filepath.Join(f.root, nfd+".txt")); err == nil {
		t.Skip("the file system does not tell NFC from NFD names (it normalizes them)")
	}

	// The other spelling reaches the existing entry, for files and folders.
	for path, rel := range map[string]string{
		nfd + ".txt":            nfc + ".txt",
		"dir_" + nfd + "/x.txt": filepath.Join("dir_"+nfc, "x.txt"),
		"dir_" + nfd + "/new":   filepath.Join("dir_"+nfc, "new"),
	} {
		file, err := f.p.Resolve(path)
		if err != nil || file.Rel != rel {
			t.Errorf("Resolve(%q) = %q, %v; want %q", path, file.Rel, err, rel)
		}
	}
	// Writing through it changes the existing file instead of creating a look-alike.
	if err := f.write(nfd+".txt", "written\n"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(f.root, nfc+".txt")); got != "written\n" {
		t.Fatalf("%s = %q", nfc, got)
	}
	assertNotExist(t, filepath.Join(f.root, nfd+".txt"))
	assertKind(t, f.create(nfd+".txt", "x"), fs.ErrExist)

	// Two existing spellings: the exact one wins; a third spelling is ambiguous.
	const angstromNFC, angstromNFD, angstromSign = "\u00c5", "A\u030a", "\u212b"
	writeFiles(t, f.root, map[string]string{angstromNFC: "nfc\n", angstromNFD: "nfd\n"})
	for _, name := range []string{angstromNFC, angstromNFD} {
		if file, err := f.p.Resolve(name); err != nil || file.Rel != name {
			t.Errorf("Resolve(%q) = %q, %v; want the exact entry", name, file.Rel, err)
		}
	}
	_, err := f.p.Resolve(angstromSign)
	assertKind(t, err, ErrAmbiguous)
	assertNotExist(t, filepath.Join(f.root, angstromSign))
}

func TestResolveNoFollow(t *testing.T) {
	f := newFixture(t)
	symlink(t, "sub", filepath.Join(f.root, "linkdir_in"))
	for path, rel := range map[string]string{
		"link_in":          "link_in",
		"link_out":         "link_out", // the link itself is inside; only following it would leave
		"dangling":         "dangling",
		"linkdir_in/b.txt": filepath.Join("sub", "b.txt"), // links before the final name are followed
		"linkdir_in":       "linkdir_in",
		"a.txt":            "a.txt",
	} {
		file, err := f.p.ResolveNoFollow(path)
		if err != nil || file.Rel != rel {
			t.Errorf("ResolveNoFollow(%q) = %q, %v; want %q", path, file.Rel, err, rel)
		}
	}
	if _, err := f.p.ResolveNoFollow("linkdir_out/secret.txt"); !errors.Is(err, ErrOutside) {
		t.Errorf("ResolveNoFollow(linkdir_out/secret.txt) = %v, want ErrOutside", err)
	}
}
