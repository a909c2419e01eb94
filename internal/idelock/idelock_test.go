package idelock

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The lock file reads, with encoding/json as with Claude Code's JSON.parse, as what
// json.Marshal would have written, whatever its folders, names and token hold.
func FuzzLockFileJSON(f *testing.F) {
	f.Add(1, "/home/u/src", "/x \"y\"\n", "Neovim", "0123abcd", "/run/nvim.1.0", int64(1700000000123456789))
	f.Add(-5, "", "caf\xe9 <&> \u2028\t\x01", "", "", "", int64(-1))
	f.Fuzz(func(t *testing.T, pid int, folder, other, name, token, server string, active int64) {
		c := Content{PID: pid, WorkspaceFolders: []string{folder, other}, IDEName: name,
			Transport: "ws", AuthToken: token, NvimServer: server, NvimWorkspace: []string{other}, NvimActive: active}
		var got, want Content
		if err := json.Unmarshal(c.JSON(), &got); err != nil {
			t.Fatalf("%s: %v", c.JSON(), err)
		}
		marshalled, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(marshalled, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s reads as %+v; json.Marshal's %s as %+v", c.JSON(), got, marshalled, want)
		}
	})
}
