package neovims

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/idelock"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Find asks the Neovims whose workspace holds a file by their own folders: one that
// told Claude Code only the file it has open (another Neovim holds the folder, see
// idelock.Hold) is asked about every file of its workspace too, and a lock file of an
// earlier bridge (no nvimWorkspace) by its workspaceFolders.
func TestFindByTheNeovimsOwnWorkspace(t *testing.T) {
	dir, ws, elsewhere := t.TempDir(), testenv.TempDir(t), testenv.TempDir(t)
	pid := os.Getpid()
	for port, c := range map[string]idelock.Content{
		"1001": {PID: pid, WorkspaceFolders: []string{filepath.Join(ws, "other.txt")}, NvimServer: "/run/yielded", NvimWorkspace: []string{ws}},
		"1002": {PID: pid, WorkspaceFolders: []string{ws}, NvimServer: "/run/holder", NvimWorkspace: []string{ws}},
		"1003": {PID: pid, WorkspaceFolders: []string{ws}, NvimServer: "/run/earlier"},
		"1004": {PID: pid, WorkspaceFolders: []string{ws}, NvimServer: "/run/elsewhere", NvimWorkspace: []string{elsewhere}},
	} {
		if err := idelock.Write(filepath.Join(dir, port+".lock"), c); err != nil {
			t.Fatal(err)
		}
	}
	got := Find([]string{filepath.Join(ws, "a.txt")}, "", []string{dir})
	if want := []string{"/run/yielded", "/run/holder", "/run/earlier"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Find asks %v, want %v", got, want)
	}
}
