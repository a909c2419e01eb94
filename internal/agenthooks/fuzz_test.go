package agenthooks

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

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

// FuzzPatch: any text the patch reader accepts names files, never panics.
func FuzzPatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+b\n*** Add File: c\n+c\n*** Delete File: d\n*** End Patch\n")
	f.Add(`{"input":"*** Begin Patch\n*** Add File: x\n+x\n*** End Patch\n"}`)
	f.Fuzz(func(t *testing.T, text string) {
		files, err := parsePatch(unwrapPatch(text))
		if err == nil && len(files) == 0 {
			t.Fatalf("%q: no error and no file", text)
		}
		for _, pf := range files {
			if pf.path == "" {
				t.Fatalf("%q: a file without a name", text)
			}
		}
	})
}

// FuzzAgentHandle: whatever an agent sends, the hook never panics and never exits 2.
func FuzzAgentHandle(f *testing.F) {
	dir := testenv.TempDir(f)
	f.Add(uint8(1), `{"session_id":"s","turn_id":"t","cwd":"`+dir+`","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_use_id":"c","tool_input":{"command":"*** Begin Patch\n*** Add File: x\n+x\n*** End Patch\n"}}`)
	f.Add(uint8(2), `{"session_id":"s","cwd":"`+dir+`","hook_event_name":"AfterTool","tool_name":"write_file","tool_input":{"file_path":"`+dir+`/y"}}`)
	f.Add(uint8(4), `{"sessionId":"s","cwd":"`+dir+`","toolName":"create","toolArgs":{"path":"`+dir+`/z"},"toolResult":{}}`)
	f.Add(uint8(5), `{"hook_event_name":"afterFileEdit","workspace_roots":["`+dir+`"],"file_path":"`+dir+`/w","edits":[{"old_string":"a","new_string":"b"}]}`)
	f.Fuzz(func(t *testing.T, which uint8, input string) {
		a := Agents[int(which)%len(Agents)]
		// Only events about the fuzz folder run: the hook makes stores where they say.
		c, err := a.parse([]byte(input), "")
		if err == nil && (c.Cwd != "" && !inside(c.Cwd, dir)) {
			return
		}
		if err == nil {
			for _, p := range c.Paths() {
				if !inside(p, dir) {
					return
				}
			}
		}
		r := Handle(context.Background(), strings.NewReader(input), Options{Agent: a, MaxFileSize: 1 << 20})
		if r.Code != 0 && r.Code != 1 {
			t.Fatalf("exit %d for %q", r.Code, input)
		}
	})
}
