package hooksettings

import (
	"bytes"
	"testing"
)

// FuzzSettingsTree: any JSON the tree reads, it writes back as the same value, and
// writing is stable (what uninstall restores depends on it).
func FuzzSettingsTree(f *testing.F) {
	f.Add([]byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": []}]}, "n": 1.50, "s": "<&>\u2028"}`))
	f.Add([]byte(`[1, {"a": null, "b": [true, false, {}]}, "x\"y"]`))
	f.Add([]byte(`{"z": 1, "a": {"y": [], "b": 2e10}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseTree(data, maxSettingsDepth)
		if err != nil {
			return
		}
		out := n.encode()
		again, err := parseTree(out, maxSettingsDepth+1)
		if err != nil {
			t.Fatalf("cannot read back %q: %v", out, err)
		}
		if !n.equal(again) {
			t.Fatalf("%q came back as %q", data, out)
		}
		if !bytes.Equal(again.encode(), out) {
			t.Fatalf("writing is not stable: %q then %q", out, again.encode())
		}
	})
}
