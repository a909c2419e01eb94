package agenthooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The other agents' events, as each CLI sends them (the shapes recorded from the real
// CLIs driven by tests/clients, and Cursor's from its documentation), through the same
// core as Claude Code's.

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func agentOptions(t *testing.T, a *Agent, event string) Options {
	return Options{Agent: a, Event: event, StateDir: filepath.Join(testenv.TempDir(t), "state")}
}

// TestCodexPatchEveryFile: one apply_patch that updates, adds, deletes, moves (and
// changes) and updates by absolute path gives one entry per file, in one conversation
// named after Codex, with the prompt's title.
func TestCodexPatchEveryFile(t *testing.T) {
	ws := testenv.TempDir(t)
	d := testenv.Dir{TB: t, Root: ws}
	d.Write("a.txt", "a1\na2\n")
	d.Write("b.txt", "b1\n")
	d.Write("gone.txt", "bye\n")
	d.Write("old.txt", "o1\no2\n")
	o := agentOptions(t, Codex, "")
	if r := handle(t, js(map[string]any{"session_id": "s1", "turn_id": "t1", "cwd": ws, "hook_event_name": "UserPromptSubmit",
		"model": "gpt-5.5", "permission_mode": "bypassPermissions", "prompt": "Tidy the files\nand more", "transcript_path": nil}), o); r.Code != 0 || r.Message != "" {
		t.Fatalf("UserPromptSubmit: %+v", r)
	}
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n a1\n-a2\n+A2\n*** Add File: sub/c.txt\n+new\n*** Delete File: gone.txt\n" +
		"*** Update File: old.txt\n*** Move to: moved.txt\n@@\n-o1\n+O1\n*** Update File: " + filepath.Join(ws, "b.txt") + "\n@@\n-b1\n+B1\n*** End Patch\n"
	ev := func(name string) string {
		return js(map[string]any{"session_id": "s1", "turn_id": "t1", "cwd": ws, "hook_event_name": name, "model": "gpt-5.5",
			"tool_name": "apply_patch", "tool_use_id": "call_1", "tool_input": map[string]any{"command": patch}})
	}
	if r := handle(t, ev(PreToolUse), o); r.Code != 0 || len(r.Stdout) != 0 {
		t.Fatalf("PreToolUse: %+v", r)
	}
	d.Write("a.txt", "a1\nA2\n")
	d.Write("sub/c.txt", "new\n")
	os.Remove(d.Path("gone.txt"))
	os.Remove(d.Path("old.txt"))
	d.Write("moved.txt", "O1\no2\n")
	d.Write("b.txt", "B1\n")
	if r := handle(t, ev(PostToolUse), o); r.Code != 0 || r.Message != "" {
		t.Fatalf("PostToolUse: %+v", r)
	}
	got := testenv.Entries(t, ws)
	type want struct{ op, file, from string }
	wants := []want{{"edit", "a.txt", ""}, {"create", "sub/c.txt", ""}, {"delete", "gone.txt", ""}, {"move", "moved.txt", "old.txt"},
		{"edit", "b.txt", ""}, {"edit", "moved.txt", ""}}
	if len(got) != len(wants) {
		for _, e := range got {
			t.Logf("%s %s", e.Operation, e.FilePath)
		}
		t.Fatalf("%d entries, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		e := got[i]
		from := ""
		if e.SourcePath != nil {
			from, _ = filepath.Rel(ws, *e.SourcePath)
		}
		if string(e.Operation) != w.op || e.FilePath != d.Path(w.file) || from != w.from || e.Source != "codex" || e.ToolName != "apply_patch" ||
			!strings.HasPrefix(e.ConversationID, "codex_") || e.ConversationID != got[0].ConversationID || e.ConversationTitle != "Tidy the files" {
			t.Errorf("entry %d: %s %s from %q, %s %s %s %q; want %+v", i, e.Operation, e.FilePath, from, e.Source, e.ToolName, e.ConversationID, e.ConversationTitle, w)
		}
	}
	// Rejecting the whole conversation puts every file back.
	s := testenv.OpenStore(t, ws)
	if _, err := s.Decide(t.Context(), history.Selection{Conversation: got[0].ConversationID}, history.Rejected, false); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"a.txt": "a1\na2\n", "b.txt": "b1\n", "gone.txt": "bye\n", "old.txt": "o1\no2\n"} {
		if d.Read(name) != content {
			t.Errorf("%s after rejecting the conversation: %q, want %q", name, d.Read(name), content)
		}
	}
	for _, name := range []string{"moved.txt", "sub/c.txt"} {
		if _, err := os.Stat(d.Path(name)); err == nil {
			t.Errorf("%s is still there after rejecting the conversation", name)
		}
	}
}

func TestPatchForms(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n"
	for name, input := range map[string]string{
		"freeform":   js(map[string]any{"command": patch}),
		"json":       js(map[string]any{"command": js(map[string]any{"input": patch})}),
		"argv":       js(map[string]any{"command": []string{"apply_patch", patch}}),
		"input":      js(map[string]any{"input": patch}),
		"opencode":   js(map[string]any{"patchText": patch}),
		"crlf":       js(map[string]any{"command": strings.ReplaceAll(patch, "\n", "\r\n")}),
		"heredocked": js(map[string]any{"command": "apply_patch <<'EOF'\n" + patch + "EOF\n"}),
	} {
		targets, err := patchTargets(json.RawMessage(input), "/w")
		if err != nil || len(targets) != 1 || targets[0].Path != "/w/x.txt" || !targets[0].Whole {
			t.Errorf("%s: %+v %v", name, targets, err)
		}
	}
	for name, bad := range map[string]string{
		"no begin":      "*** Add File: x\n+x\n*** End Patch\n",
		"no end":        "*** Begin Patch\n*** Add File: x\n+x\n",
		"unknown":       "*** Begin Patch\n*** Copy File: x\n*** End Patch\n",
		"stray move":    "*** Begin Patch\n*** Move to: y\n*** End Patch\n",
		"empty":         "*** Begin Patch\n*** End Patch\n",
		"text first":    "*** Begin Patch\nhello\n*** Add File: x\n*** End Patch\n",
		"nameless file": "*** Begin Patch\n*** Add File:\n+x\n*** End Patch\n",
	} {
		if _, err := patchTargets(json.RawMessage(js(map[string]any{"command": bad})), "/w"); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// TestIdenticalCallsAtOnce: without call ids (Gemini CLI), two identical calls that
// overlap pair with their own befores, oldest first: two right entries.
func TestIdenticalCallsAtOnce(t *testing.T) {
	ws := testenv.TempDir(t)
	d := testenv.Dir{TB: t, Root: ws}
	d.Write("x.txt", "x\n")
	o := agentOptions(t, Gemini, "")
	ev := func(name string) string {
		return js(map[string]any{"session_id": "g1", "cwd": ws, "hook_event_name": name, "timestamp": "2026-11-27T10:00:00Z",
			"tool_name": "replace", "tool_input": map[string]any{"file_path": d.Path("x.txt"), "old_string": "x", "new_string": "xx"}})
	}
	step := func(name string) {
		t.Helper()
		if r := handle(t, ev(name), o); r.Code != 0 || len(r.Stdout) != 0 || r.Message != "" {
			t.Fatalf("%s: %+v", name, r)
		}
	}
	step("BeforeTool")
	d.Write("x.txt", "xx\n")
	step("BeforeTool")
	step("AfterTool")
	d.Write("x.txt", "xxx\n")
	step("AfterTool")
	got := testenv.Entries(t, ws)
	if len(got) != 2 || *got[0].HashBefore != testenv.SHA256("x\n") || *got[0].HashAfter != testenv.SHA256("xx\n") ||
		*got[1].HashBefore != testenv.SHA256("xx\n") || *got[1].HashAfter != testenv.SHA256("xxx\n") {
		for _, e := range got {
			t.Logf("%s %v -> %v", e.Operation, *e.HashBefore, *e.HashAfter)
		}
		t.Fatalf("%d entries; want x->xx then xx->xxx", len(got))
	}
}

// TestPromptsMakeConversations: agents without turn ids (Gemini CLI, Copilot CLI)
// start a conversation at each prompt event, titled by its first line; Claude Code's
// prompts are titled too.
func TestPromptsMakeConversations(t *testing.T) {
	long := strings.Repeat("word ", 30)
	cases := []struct {
		agent                 *Agent
		event                 string
		prompt, before, after func(ws, p string) string
	}{
		{Gemini, "",
			func(ws, p string) string {
				return js(map[string]any{"session_id": "S", "cwd": ws, "hook_event_name": "BeforeAgent", "prompt": p})
			},
			func(ws, f string) string {
				return js(map[string]any{"session_id": "S", "cwd": ws, "hook_event_name": "BeforeTool", "tool_name": "write_file", "tool_input": map[string]any{"file_path": f, "content": f}})
			},
			func(ws, f string) string {
				return js(map[string]any{"session_id": "S", "cwd": ws, "hook_event_name": "AfterTool", "tool_name": "write_file", "tool_input": map[string]any{"file_path": f, "content": f}, "tool_response": map[string]any{}})
			}},
		{Copilot, "",
			func(ws, p string) string {
				return js(map[string]any{"sessionId": "S", "timestamp": 1, "cwd": ws, "prompt": p})
			},
			func(ws, f string) string {
				return js(map[string]any{"sessionId": "S", "timestamp": 2, "cwd": ws, "toolName": "create", "toolArgs": map[string]any{"path": f, "file_text": f}})
			},
			func(ws, f string) string {
				return js(map[string]any{"sessionId": "S", "timestamp": 3, "cwd": ws, "toolName": "create", "toolArgs": map[string]any{"path": f, "file_text": f},
					"toolResult": map[string]any{"resultType": "success"}})
			}},
		{Claude, "",
			func(ws, p string) string {
				return js(map[string]any{"session_id": "S", "prompt_id": "P" + strings.TrimSpace(p)[:3], "cwd": ws, "hook_event_name": "UserPromptSubmit", "prompt": p})
			},
			nil, nil},
	}
	for _, c := range cases {
		t.Run(c.agent.Name, func(t *testing.T) {
			ws := testenv.TempDir(t)
			o := agentOptions(t, c.agent, "")
			for i, p := range []string{"one: first\nsecond line", "\n  two: " + long} {
				if r := handle(t, c.prompt(ws, p), o); r.Code != 0 || r.Message != "" {
					t.Fatalf("prompt: %+v", r)
				}
				f := filepath.Join(ws, []string{"a.txt", "b.txt"}[i])
				if c.agent == Claude {
					id := strings.TrimSpace(p)[:3]
					in := js(map[string]any{"session_id": "S", "prompt_id": "P" + id, "cwd": ws, "hook_event_name": PreToolUse, "tool_name": "Write", "tool_use_id": "t" + id, "tool_input": map[string]any{"file_path": f}})
					handle(t, in, o)
					testenv.WriteFile(t, f, f)
					handle(t, strings.Replace(in, PreToolUse, PostToolUse, 1), o)
					continue
				}
				handle(t, c.before(ws, f), o)
				testenv.WriteFile(t, f, f)
				if r := handle(t, c.after(ws, f), o); r.Code != 0 || r.Message != "" {
					t.Fatalf("after: %+v", r)
				}
			}
			got := testenv.Entries(t, ws)
			if len(got) != 2 || got[0].ConversationID == got[1].ConversationID || !strings.HasPrefix(got[1].ConversationID, c.agent.Name+"_") {
				t.Fatalf("entries %+v; want two conversations named after %s", got, c.agent.Name)
			}
			wantLong := strings.TrimSpace(("two: " + long)[:79]) + "…"
			if got[0].ConversationTitle != "one: first" || got[1].ConversationTitle != wantLong || len([]rune(got[1].ConversationTitle)) > 80 {
				t.Fatalf("titles %q, %q; want %q, %q", got[0].ConversationTitle, got[1].ConversationTitle, "one: first", wantLong)
			}
		})
	}
}

// TestCursorDocumentedPayloads: Cursor cannot run here; its documented events go
// through the same core (preToolUse keeps the bytes, postToolUse records, and
// afterFileEdit, which Cursor sends too, does not record the edit twice; an
// afterFileEdit alone recovers the bytes before from its edits).
func TestCursorDocumentedPayloads(t *testing.T) {
	ws := testenv.TempDir(t)
	d := testenv.Dir{TB: t, Root: ws}
	d.Write("main.ts", "const foo = 1\n")
	o := agentOptions(t, Cursor, "")
	common := func(name string) map[string]any {
		return map[string]any{"hook_event_name": name, "conversation_id": "conv-123", "generation_id": "gen-456",
			"workspace_roots": []string{ws}, "model": "gpt-4", "cursor_version": "2.0.77"}
	}
	with := func(m map[string]any, kv ...any) string {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return js(m)
	}
	must := func(in string) {
		t.Helper()
		if r := handle(t, in, o); r.Code != 0 || len(r.Stdout) != 0 || r.Message != "" {
			t.Fatalf("%s: %+v", in, r)
		}
	}
	must(with(common("beforeSubmitPrompt"), "prompt", "Fix the bug in main.ts", "attachments", []any{}))
	input := map[string]any{"file_path": d.Path("main.ts"), "old_string": "const foo = 1", "new_string": "const foo = 2"}
	must(with(common("preToolUse"), "tool_name", "StrReplace", "tool_input", input, "tool_use_id", "tu1", "cwd", ws))
	d.Write("main.ts", "const foo = 2\n")
	must(with(common("postToolUse"), "tool_name", "StrReplace", "tool_input", input, "tool_use_id", "tu1", "cwd", ws, "tool_output", "ok", "duration", 5))
	edits := []any{map[string]any{"old_string": "const foo = 1", "new_string": "const foo = 2"}}
	must(with(common("afterFileEdit"), "file_path", d.Path("main.ts"), "edits", edits))
	// An edit only afterFileEdit saw (the editor's agent, without preToolUse).
	d.Write("main.ts", "const foo = 3\n")
	must(with(common("afterFileEdit"), "file_path", d.Path("main.ts"), "edits", []any{map[string]any{"old_string": "const foo = 2", "new_string": "const foo = 3"}}))
	got := testenv.Entries(t, ws)
	if len(got) != 2 || got[0].Source != "cursor" || got[0].ToolName != "StrReplace" || got[0].ConversationTitle != "Fix the bug in main.ts" ||
		!strings.HasPrefix(got[0].ConversationID, "cursor_") || *got[1].HashBefore != testenv.SHA256("const foo = 2\n") {
		t.Fatalf("entries %+v", got)
	}
	// Writes and deletes.
	must(with(common("preToolUse"), "tool_name", "Delete", "tool_input", map[string]any{"path": d.Path("main.ts")}, "tool_use_id", "tu2"))
	os.Remove(d.Path("main.ts"))
	must(with(common("postToolUse"), "tool_name", "Delete", "tool_input", map[string]any{"path": d.Path("main.ts")}, "tool_use_id", "tu2"))
	if got := testenv.Entries(t, ws); len(got) != 3 || got[2].Operation != history.Delete {
		t.Fatalf("after the delete: %+v", got)
	}
}

// Copilot CLI's documentation gives toolArgs as a JSON string (1.0.102 sends an
// object): both are recorded alike.
func TestCopilotToolArgsAsAString(t *testing.T) {
	ws := testenv.TempDir(t)
	d := testenv.Dir{TB: t, Root: ws}
	d.Write("a.txt", "one\n")
	o := agentOptions(t, Copilot, "preToolUse")
	args := js(map[string]any{"path": d.Path("a.txt"), "old_str": "one", "new_str": "two"})
	if r := handle(t, js(map[string]any{"sessionId": "s", "timestamp": 1, "cwd": ws, "toolName": "edit", "toolArgs": args}), o); r.Code != 0 || r.Message != "" {
		t.Fatalf("pre: %+v", r)
	}
	d.Write("a.txt", "two\n")
	o.Event = "postToolUse"
	post := js(map[string]any{"sessionId": "s", "timestamp": 2, "cwd": ws, "toolName": "edit", "toolArgs": args,
		"toolResult": map[string]any{"resultType": "success", "textResultForLlm": "ok"}})
	if r := handle(t, post, o); r.Code != 0 || r.Message != "" {
		t.Fatalf("post: %+v", r)
	}
	if got := testenv.Entries(t, ws); len(got) != 1 || got[0].Source != "copilot-cli" || *got[0].HashBefore != testenv.SHA256("one\n") {
		t.Fatalf("entries %+v", got)
	}
}

// TestDenyForms: each agent's own refusal, naming the file.
func TestDenyForms(t *testing.T) {
	for _, c := range []struct {
		agent *Agent
		want  string
	}{
		{Claude, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"/w/a.txt has`},
		{Codex, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"/w/a.txt has`},
		{Gemini, `{"decision":"deny","reason":"/w/a.txt has`},
		{OpenCode, `{"decision":"deny","reason":"/w/a.txt has`},
		{Copilot, `{"permissionDecision":"deny","permissionDecisionReason":"/w/a.txt has`},
		{Cursor, `"permission":"deny"`},
	} {
		r := c.agent.finish(deny("/w/a.txt has unsaved changes in Neovim"))
		if r.Code != 0 || !strings.Contains(string(r.Stdout), c.want) {
			t.Errorf("%s: exit %d %s; want %s", c.agent.Name, r.Code, r.Stdout, c.want)
		}
	}
}

// TestPanicNeverExitsTwo: a panic inside the hook is recovered into a message with
// the agent's non-blocking exit code.
func TestPanicNeverExitsTwo(t *testing.T) {
	for _, a := range Agents {
		broken := *a
		broken.parse = func([]byte, string) (*Call, error) { panic("boom") }
		r := handle(t, "{}", Options{Agent: &broken})
		if r.Code == 2 || r.Code != a.failCode || len(r.Stdout) != 0 || !strings.Contains(r.Message, "boom") {
			t.Errorf("%s: %+v", a.Name, r)
		}
	}
}

// TestAgentsBadInput: invalid JSON, an unknown tool, a path outside every
// workspace, a patch that does not parse: a message on stderr, exit 0, nothing
// recorded, nothing refused.
func TestAgentsBadInput(t *testing.T) {
	ws := testenv.TempDir(t)
	other := testenv.TempDir(t)
	d := testenv.Dir{TB: t, Root: ws}
	d.Write("a.txt", "a\n")
	cases := []struct {
		agent   *Agent
		event   string
		input   string
		message string
	}{
		{Codex, "", "{", "not the JSON object Codex sends"},
		{Codex, "", js(map[string]any{"hook_event_name": "PreToolUse", "cwd": ws, "tool_name": "exec_command", "tool_input": map[string]any{}}), "does not write files"},
		{Codex, "", js(map[string]any{"hook_event_name": "PreToolUse", "cwd": ws, "tool_name": "apply_patch", "tool_use_id": "c", "tool_input": map[string]any{"command": "*** Begin Patch\nnonsense"}}), "the patch does not parse"},
		{Codex, "", js(map[string]any{"hook_event_name": "PostToolUse", "cwd": ws, "tool_name": "apply_patch", "tool_use_id": "c",
			"tool_input": map[string]any{"command": "*** Begin Patch\n*** Add File: " + filepath.Join(other, "x") + "\n+x\n*** End Patch\n"}}), "outside every workspace"},
		{Gemini, "", "[]", "not the JSON object Gemini CLI sends"},
		{Gemini, "", js(map[string]any{"hook_event_name": "BeforeTool", "cwd": ws, "tool_name": "run_shell_command", "tool_input": map[string]any{}}), "does not write files"},
		{Gemini, "", js(map[string]any{"hook_event_name": "AfterTool", "cwd": ws, "session_id": "s", "tool_name": "write_file", "tool_input": map[string]any{"file_path": filepath.Join(other, "x")}}), "outside every workspace"},
		{OpenCode, "", "nope", "not the JSON object mcpdiff's OpenCode plugin sends"},
		{OpenCode, "", js(map[string]any{"hook_event_name": "tool.execute.before", "directory": ws, "tool": "apply_patch", "callID": "c", "args": map[string]any{"patchText": "garbage"}}), "the patch does not parse"},
		{Copilot, "preToolUse", "{", "not the JSON object Copilot CLI sends"},
		{Copilot, "preToolUse", js(map[string]any{"cwd": ws, "toolName": "bash", "toolArgs": map[string]any{"command": "ls"}}), "does not write files"},
		{Copilot, "postToolUse", js(map[string]any{"cwd": ws, "sessionId": "s", "toolName": "create", "toolArgs": map[string]any{"path": filepath.Join(other, "x")}, "toolResult": map[string]any{}}), "outside every workspace"},
		{Cursor, "", "{", "not the JSON object Cursor sends"},
		{Cursor, "", js(map[string]any{"hook_event_name": "preToolUse", "workspace_roots": []string{ws}, "tool_name": "Shell", "tool_input": map[string]any{}}), "does not write files"},
	}
	for _, c := range cases {
		r := handle(t, c.input, Options{Agent: c.agent, Event: c.event})
		if r.Code != 0 || len(r.Stdout) != 0 || !strings.Contains(r.Message, c.message) {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want exit 0 and %q", c.agent.Name, c.input, r.Code, r.Stdout, r.Message, c.message)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".mcp")); err == nil {
		t.Fatal("bad input made a store")
	}
}
