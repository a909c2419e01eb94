package ide

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/idelock"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Two servers sharing a workspace and a lock folder: each lock file names its
// Neovim, and exactly one of them lists the workspace itself (the one started or
// focused last), the other the file it has open there. When one stops, the other
// is alone again: "Neovim", with its workspace.
func TestServersShareTheirWorkspace(t *testing.T) {
	lockDir, ws := t.TempDir(), testenv.TempDir(t)
	file := filepath.Join(ws, "src", "main.go")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shared := func(o *Options) { o.LockDir, o.Workspace, o.Share = lockDir, []string{ws}, true }
	read := func(s *testServer) idelock.Content {
		for _, f := range idelock.Read([]string{lockDir}) {
			if f.Path == s.LockPath() {
				return f.Content
			}
		}
		return idelock.Content{}
	}
	expect := func(what string, s *testServer, name string, folders ...string) {
		t.Helper()
		testenv.Eventually(t, what, func() bool {
			c := read(s)
			return c.IDEName == name && reflect.DeepEqual(c.WorkspaceFolders, folders) && reflect.DeepEqual(c.NvimWorkspace, []string{ws})
		})
	}
	pid := os.Getpid()
	first := startServer(t, shared, nil)
	expect("the first server alone", first, "Neovim", ws)
	first.SetCurrentFile(file)
	expect("a current file changes nothing while alone", first, "Neovim", ws)

	second := startServer(t, shared, nil)
	expect("the first server to give the workspace up", first, fmt.Sprintf("Neovim (src/main.go, pid %d)", pid), file)
	expect("the second server to hold it", second, fmt.Sprintf("Neovim (pid %d)", pid), ws)
	if st := first.Status(); st.Others != 1 || st.Chosen || st.IDEName != fmt.Sprintf("Neovim (src/main.go, pid %d)", pid) {
		t.Fatalf("the first server's status: %+v", st)
	}

	first.Touch() // focused: it is the one used last
	expect("the focused server to take the workspace", first, fmt.Sprintf("Neovim (src/main.go, pid %d)", pid), ws)
	expect("the other to list a name inside it", second, fmt.Sprintf("Neovim (pid %d)", pid), filepath.Join(ws, noName))
	if st := second.Status(); st.Others != 1 || st.Chosen {
		t.Fatalf("the second server's status: %+v", st)
	}

	if err := second.Stop(); err != nil {
		t.Fatal(err)
	}
	expect("the first server alone again", first, "Neovim", ws)
	if st := first.Status(); st.Others != 0 || !st.Chosen || st.IDEName != "Neovim" {
		t.Fatalf("the first server's status once alone: %+v", st)
	}
}

// A server that does not share (an IDE server that is not a Neovim's) writes the
// lock file as the protocol has it, whatever lies beside it.
func TestServerWithoutShareIgnoresOthers(t *testing.T) {
	lockDir, ws := t.TempDir(), t.TempDir()
	other := startServer(t, func(o *Options) { o.LockDir, o.Workspace, o.Share = lockDir, []string{ws}, true }, nil)
	plain := startServer(t, func(o *Options) { o.LockDir, o.Workspace = lockDir, []string{ws} }, nil)
	for _, f := range idelock.Read([]string{lockDir}) {
		if f.Path == plain.LockPath() && (f.IDEName != "Neovim" || !reflect.DeepEqual(f.WorkspaceFolders, []string{ws}) || f.NvimWorkspace != nil || f.NvimActive != 0) {
			t.Fatalf("the lock file of a server without Share: %+v", f.Content)
		}
	}
	if other.Status().Others != 0 {
		t.Fatal("a server without Share counts as sharing the workspace")
	}
}
