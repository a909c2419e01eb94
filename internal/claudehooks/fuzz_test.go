package claudehooks

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
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

// FuzzHandle: whatever arrives on stdin, the hook never exits 2 (that would block
// Claude Code's tool) and never panics.
func FuzzHandle(f *testing.F) {
	dir := testenv.TempDir(f)
	for _, name := range []string{"02-PreToolUse.json", "03-PostToolUse.json", "15-UserPromptSubmit.json"} {
		data, err := readFixture(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.ReplaceAll(data, "/WORKSPACE", dir))
	}
	f.Add(`{"hook_event_name":"PostToolUse","cwd":"` + dir + `","tool_name":"Write","tool_use_id":"x","tool_input":{"file_path":"` + filepath.Join(dir, "n") + `"},"tool_response":{"type":"create"}}`)
	f.Fuzz(func(t *testing.T, input string) {
		// The hook writes where the event says (a store in its cwd): only events
		// about the fuzz folder run, or the fuzzer would make stores all over the disk.
		if ev, err := ParseEvent([]byte(input)); err == nil && (!inside(ev.Cwd, dir) || !inside(ev.target(), dir)) {
			return
		}
		r := Handle(context.Background(), strings.NewReader(input), Options{MaxFileSize: 1 << 20})
		if r.Code != 0 && r.Code != 1 {
			t.Fatalf("exit %d for %q", r.Code, input)
		}
	})
}

// inside reports whether path is dir or below it, once resolved.
func inside(path, dir string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	rel, err := filepath.Rel(dir, history.RealPath(path))
	return err == nil && filepath.IsLocal(rel)
}
