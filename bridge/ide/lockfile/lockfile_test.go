package lockfile

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
)

// The server writes its lock file where the CLI reads: the folder it picks is the
// first that Dirs (what checkhealth and the tests list) names.
func TestLockDirIsTheFirstTheCLIReads(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, config := range []string{"", filepath.Join(home, "cfg")} {
		t.Setenv("CLAUDE_CONFIG_DIR", config)
		want := filepath.Join(home, ".claude", "ide")
		if config != "" {
			want = filepath.Join(config, "ide")
		}
		got, err := Dir("")
		if err != nil || got != want || Dirs()[0] != want {
			t.Errorf("CLAUDE_CONFIG_DIR=%q: Dir = %q, %v; Dirs = %v; want %s first", config, got, err, Dirs(), want)
		}
		if got, _ := Dir("/given"); got != "/given" {
			t.Errorf("a given folder is used as it is, got %q", got)
		}
	}
}

// The lock file reads, with encoding/json as with Claude Code's JSON.parse, as what
// json.Marshal would have written, whatever its folders, names and token hold.
func FuzzLockFileJSON(f *testing.F) {
	f.Add(1, "/home/u/src", "/x \"y\"\n", "Neovim", "0123abcd", "/run/nvim.1.0")
	f.Add(-5, "", "caf\xe9 <&> \u2028\t\x01", "", "", "")
	f.Fuzz(func(t *testing.T, pid int, folder, other, name, token, server string) {
		c := Content{PID: pid, WorkspaceFolders: []string{folder, other}, IDEName: name,
			Transport: "ws", AuthToken: token, NvimServer: server}
		var got, want Content
		if err := json.Unmarshal(c.json(), &got); err != nil {
			t.Fatalf("%s: %v", c.json(), err)
		}
		marshalled, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(marshalled, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s reads as %+v; json.Marshal's %s as %+v", c.json(), got, marshalled, want)
		}
	})
}
