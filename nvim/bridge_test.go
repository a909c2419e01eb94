package nvim

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// Every method the Lua plugin calls on the bridge (notify_go, request) is one the
// bridge handles, and every handler is called: a renamed method fails here, not as a
// call that Neovim drops.
func TestLuaCallsOnlyTheseHandlers(t *testing.T) {
	files, err := filepath.Glob("../lua/mcpdiff/*.lua")
	folders, err2 := filepath.Glob("../lua/mcpdiff/*/*.lua") // diff/
	if err != nil || err2 != nil || len(files) == 0 || len(folders) == 0 {
		t.Fatalf("the plugin's Lua files: %v %v %v %v", files, folders, err, err2)
	}
	files = append(files, folders...)
	call := regexp.MustCompile(`(?:notify_go|request)\("([^"]+)"`)
	called := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(data), -1) {
			called[m[1]] = true
		}
	}
	handled := (&bridge{}).handlers()
	for _, name := range slices.Sorted(maps.Keys(called)) {
		if handled[name] == nil {
			t.Errorf("lua/mcpdiff calls %q, which nvim/bridge.go does not handle", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(handled)) {
		if !called[name] {
			t.Errorf("nvim/bridge.go handles %q, which lua/mcpdiff never calls", name)
		}
	}
}

// The plugin's description of its Neovim reads as encoding/json reads it.
func FuzzParseNeovimInfo(f *testing.F) {
	for _, s := range []string{
		`{"pid":42,"cwd":"/home/u/src","lsp":["/home/u/src","/x y"],"server":"/run/nvim.42.0","file":"/home/u/src/main.go"}`,
		`{"pid":1,"cwd":"/","lsp":[],"server":""}`,
		`{"PID":7,"Cwd":"/a","lsp":null,"extra":{"k":[1,2.5,true]}}`,
		`{"pid":1.5}`, `{"lsp":["a"],"lsp":["b"]}`, `{"cwd":"caf\u00e9 \"q\""}`, `[1]`, `null`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotErr := parseNeovimInfo(s)
		var want neovimInfo
		wantErr := json.Unmarshal([]byte(s), &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", s, gotErr, wantErr)
		}
		if gotErr == nil && (got.PID != want.PID || got.Cwd != want.Cwd || got.Server != want.Server || got.File != want.File || !slices.Equal(got.LSP, want.LSP)) {
			t.Fatalf("%q: %+v, encoding/json reads %+v", s, got, want)
		}
	})
}
