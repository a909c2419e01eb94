package nvim

import (
	"encoding/json"
	"slices"
	"testing"
)

// The plugin's description of its Neovim reads as encoding/json reads it.
func FuzzParseNeovimInfo(f *testing.F) {
	for _, s := range []string{
		`{"pid":42,"cwd":"/home/u/src","lsp":["/home/u/src","/x y"],"server":"/run/nvim.42.0"}`,
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
		if gotErr == nil && (got.PID != want.PID || got.Cwd != want.Cwd || got.Server != want.Server || !slices.Equal(got.LSP, want.LSP)) {
			t.Fatalf("%q: %+v, encoding/json reads %+v", s, got, want)
		}
	})
}
