package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzResolve checks the policy's one promise for any path: either a clear *Error,
// or a File inside the root, outside the history store, whose existing part has no
// symlink left on the way.
func FuzzResolve(f *testing.F) {
	fx := newFixture(f)
	writeFiles(f, fx.root, map[string]string{".mcp/edit_history/logs/c.log": "{}\n", "caf\u00e9/x.txt": "x\n"})
	symlink(f, "loop2", filepath.Join(fx.root, "loop1"))
	symlink(f, "loop1", filepath.Join(fx.root, "loop2"))
	symlink(f, "../outside", filepath.Join(fx.root, "sub", "up"))
	symlink(f, "sub/../.mcp/edit_history", filepath.Join(fx.root, "hist"))
	fx.before = snapshotOutside(f, fx.base, fx.root)
	for _, seed := range []string{
		"a.txt", "../outside/secret.txt", "link_out", "linkdir_out/x", "dangling", "link_in",
		"%2e%2e/x", "a\x00b", ".mcp/edit_history/x", "hist/logs", "loop1/x", "sub/up/secret.txt",
		"cafe\u0301/x.txt", fx.root + "_evil/x", fx.root + "/sub/../../root/a.txt", "/", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		for name, resolve := range map[string]func(string) (File, error){
			"Resolve": fx.p.Resolve, "ResolveNoFollow": fx.p.ResolveNoFollow,
		} {
			file, err := resolve(path)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("%s(%q): %v is not a *workspace.Error", name, path, err)
				}
				continue
			}
			rel, ok := relWithin(fx.root, file.Abs)
			if !ok || rel != file.Rel || file.Root != fx.r {
				t.Fatalf("%s(%q) = %+v: not inside the root", name, path, file)
			}
			if inHistoryStore(rel) {
				t.Fatalf("%s(%q) = %+v: inside the history store", name, path, file)
			}
			if _, err := os.Lstat(file.Abs); err == nil && name == "Resolve" {
				if real, err := filepath.EvalSymlinks(file.Abs); err != nil || real != file.Abs {
					t.Fatalf("%s(%q) = %+v, but its real path is %q (%v)", name, path, file, real, err)
				}
			}
		}
	})
}
