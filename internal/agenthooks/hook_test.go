package agenthooks

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// The fixtures in testdata/session are the hook inputs the real Claude Code 2.1.330
// sent in one session (tests/claude records them again), with the workspace, Claude's
// config folder and home replaced by placeholders, and after each write the file's
// bytes (NN-PostToolUse.after). The session, in auto mode: prompt 1 edits a.txt twice,
// creates c.txt, rewrites the CRLF file crlf.txt with Write (which loses the CRLF),
// edits a notebook, creates sub/dir/new.txt, and tries to edit the symlink link.txt
// (Claude Code refuses after PreToolUse); prompt 2 edits b.txt.

const fixtureDir = "testdata/session"

// workspaceDir makes a workspace with the session's first files.
func workspaceDir(t *testing.T) string {
	t.Helper()
	ws := testenv.TempDir(t)
	names, _ := os.ReadDir(filepath.Join(fixtureDir, "initial"))
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(fixtureDir, "initial", n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(ws, n.Name()), string(data))
	}
	if err := os.Symlink("a.txt", filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	return ws
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture is one recorded hook call.
type fixture struct {
	name  string
	input string // with the workspace's path in
	after *string
}

func fixtures(t *testing.T, ws string) []fixture {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	sort.Strings(names)
	var out []fixture
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		f := fixture{name: filepath.Base(n), input: strings.ReplaceAll(string(data), "/WORKSPACE", ws)}
		if after, err := os.ReadFile(strings.TrimSuffix(n, ".json") + ".after"); err == nil {
			s := string(after)
			f.after = &s
		}
		out = append(out, f)
	}
	return out
}

func readFixture(name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	return string(data), err
}

func handle(t *testing.T, input string, o Options) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	return Handle(ctx, strings.NewReader(input), o)
}

func hashOrNone(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

// replay plays the recorded session: each PreToolUse, then the write Claude Code
// made (the recorded bytes), then each PostToolUse. It returns the results by fixture.
func replay(t *testing.T, ws string, o Options) map[string]Result {
	results := map[string]Result{}
	for _, f := range fixtures(t, ws) {
		if f.after != nil {
			ev, err := ParseEvent([]byte(f.input))
			if err != nil {
				t.Fatal(err)
			}
			write(t, ev.target(), *f.after)
		}
		results[f.name] = handle(t, f.input, o)
	}
	return results
}

func TestRecordedSession(t *testing.T) {
	ws := workspaceDir(t)
	initial := map[string]string{}
	for _, n := range []string{"a.txt", "b.txt", "crlf.txt", "n.ipynb"} {
		data, _ := os.ReadFile(filepath.Join(ws, n))
		initial[n] = string(data)
	}
	results := replay(t, ws, Options{})
	for name, r := range results {
		if r.Code != 0 || len(r.Stdout) != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, r.Code, r.Stdout, r.Message)
		}
		if name == "14-PreToolUse.json" && !strings.Contains(r.Message, "symlink") {
			t.Errorf("the symlink's PreToolUse says %q; want a note that it is not recorded", r.Message)
		}
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	type want struct {
		file, op, tool, before, after string
		index                         int
	}
	wants := []want{
		{"a.txt", "edit", "Edit", initial["a.txt"], "one\nTWO\nthree\n", 0},
		{"a.txt", "edit", "Edit", "one\nTWO\nthree\n", read("a.txt"), 1},
		{"c.txt", "create", "Write", "", "new file\n", 2},
		// Claude Code's originalFile for this one is "x\ny\n"; the history has the bytes.
		{"crlf.txt", "replace", "Write", "x\r\ny\r\n", "x\ny\nz\n", 3},
		{"n.ipynb", "edit", "NotebookEdit", initial["n.ipynb"], read("n.ipynb"), 4},
		{"sub/dir/new.txt", "create", "Write", "", "deep\n", 5},
		{"b.txt", "edit", "Edit", initial["b.txt"], "alpha\nBETA\n", 0},
	}
	got := testenv.Entries(t, ws)
	if len(got) != len(wants) {
		for _, e := range got {
			t.Logf("entry: %s %s %s", e.Operation, e.FilePath, e.ToolName)
		}
		t.Fatalf("%d entries, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		e := got[i]
		beforeHash := "none"
		if w.op != "create" {
			beforeHash = testenv.SHA256(w.before)
		}
		if e.FilePath != filepath.Join(ws, w.file) || string(e.Operation) != w.op || e.ToolName != w.tool ||
			e.Source != "claude-code" || e.Status != history.Pending || e.ToolCallIndex != w.index ||
			hashOrNone(e.HashBefore) != beforeHash || hashOrNone(e.HashAfter) != testenv.SHA256(w.after) {
			t.Errorf("entry %d = %s %s %s %s %s index %d; want %+v", i, e.Operation, e.FilePath, e.ToolName, e.Source, e.Status, e.ToolCallIndex, w)
		}
	}
	first, second := got[0].ConversationID, got[6].ConversationID
	for _, e := range got[:6] {
		if e.ConversationID != first {
			t.Errorf("the writes of one prompt are in conversations %s and %s", first, e.ConversationID)
		}
	}
	if second == first || !strings.HasPrefix(first, "claude_") {
		t.Errorf("conversations %q and %q: want one per prompt", first, second)
	}
	// What is left in hooks/: only the symlink's snapshot, which Claude Code never
	// wrote (it is swept a day later).
	left, _ := os.ReadDir(filepath.Join(ws, ".mcp", "edit_history", "hooks"))
	if len(left) != 1 || left[0].Name() != "toolu_fake_p0_10" {
		t.Errorf("snapshots left: %v", left)
	}
}

func TestConversationID(t *testing.T) {
	a := ConversationID("s1", "p1")
	if a != ConversationID("s1", "p1") || a == ConversationID("s1", "p2") || a == ConversationID("s2", "p1") {
		t.Fatal("ConversationID must be the same for one prompt and differ between prompts and sessions")
	}
	if !history.ValidConversationID(a) {
		t.Fatalf("%q is not a valid conversation id", a)
	}
	if x, y := ConversationID("s1", "p1"), ConversationID("s1", "p9"); x[:16] != y[:16] {
		t.Fatalf("one session's conversations should share their prefix: %s %s", x, y)
	}
}

// event builds a hook input like Claude Code's.
func event(name, tool, path, toolUseID, extra string) string {
	in := `{"session_id":"s1","prompt_id":"p1","cwd":"` + filepath.Dir(path) + `","hook_event_name":"` + name +
		`","tool_name":"` + tool + `","tool_input":{"file_path":"` + path + `","content":"x"},"tool_use_id":"` + toolUseID + `"`
	return in + extra + "}"
}

func TestStagedWriteIsNotRecorded(t *testing.T) {
	ws := workspaceDir(t)
	path := filepath.Join(ws, "a.txt")
	if r := handle(t, event(PreToolUse, "Edit", path, "t1", ""), Options{}); r.Code != 0 {
		t.Fatal(r.Message)
	}
	r := handle(t, event(PostToolUse, "Edit", path, "t1", `,"tool_response":{"staged":true}`), Options{})
	if r.Code != 0 || r.Message != "" {
		t.Fatalf("staged: exit %d %q", r.Code, r.Message)
	}
	if got := testenv.Entries(t, ws); len(got) != 0 {
		t.Fatalf("a staged write (the file was not written) was recorded: %v", got)
	}
	if left, _ := os.ReadDir(filepath.Join(ws, ".mcp", "edit_history", "hooks")); len(left) != 0 {
		t.Fatalf("the snapshot of a staged write stays: %v", left)
	}
}

func TestPostWithoutPre(t *testing.T) {
	ws := workspaceDir(t)
	created := filepath.Join(ws, "new.txt")
	write(t, created, "made\n")
	r := handle(t, event(PostToolUse, "Write", created, "t1", `,"tool_response":{"type":"create","originalFile":null}`), Options{})
	if r.Code != 0 {
		t.Fatalf("a create without PreToolUse: exit %d %q", r.Code, r.Message)
	}
	edited := filepath.Join(ws, "a.txt")
	write(t, edited, "changed\n")
	r = handle(t, event(PostToolUse, "Edit", edited, "t2", `,"tool_response":{"originalFile":"one\ntwo\nthree\n"}`), Options{})
	if r.Code != 1 || !strings.Contains(r.Message, "a.txt was written but not recorded") || !strings.Contains(r.Message, "PreToolUse") {
		t.Fatalf("an edit without PreToolUse: exit %d %q; want 1 and why", r.Code, r.Message)
	}
	got := testenv.Entries(t, ws)
	if len(got) != 1 || got[0].FilePath != created || got[0].Operation != history.Create {
		t.Fatalf("entries %v; want only the create", got)
	}
}

func TestBadInput(t *testing.T) {
	ws := workspaceDir(t)
	path := filepath.Join(ws, "a.txt")
	cases := []struct {
		name, input string
		code        int
		message     string
	}{
		{"garbage", "hello, hook", 1, "not the JSON object"},
		{"empty", "", 1, "not the JSON object"},
		{"truncated", event(PreToolUse, "Edit", path, "t1", "")[:60], 1, "not the JSON object"},
		{"not an object", `["PreToolUse"]`, 1, "not the JSON object"},
		{"no event name", `{"tool_name":"Edit"}`, 1, "no hook_event_name"},
		{"unknown event", `{"hook_event_name":"Stop","session_id":"s"}`, 0, "Stop events are not used"},
		{"unknown tool", event(PreToolUse, "Bash", path, "t1", ""), 0, "Bash does not write files"},
		{"no path", `{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{}}`, 1, "without a file_path"},
		{"bad tool_use_id", event(PreToolUse, "Edit", path, "../../x", ""), 1, "tool_use_id"},
		{"tool_response not an object", event(PostToolUse, "Edit", path, "t9", `,"tool_response":"oops"`), 1, "not recorded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := handle(t, c.input, Options{})
			if r.Code != c.code || !strings.Contains(r.Message, c.message) || len(r.Stdout) != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", r.Code, r.Stdout, r.Message, c.code, c.message)
			}
		})
	}
	if data, _ := os.ReadFile(path); string(data) != "one\ntwo\nthree\n" {
		t.Fatalf("bad input changed the file: %q", data)
	}
	if root, err := workspace.OpenRoot(ws); err == nil {
		if s, err := history.OpenExisting(root); err == nil {
			if l, _ := s.List(history.Filter{}); len(l.Entries) != 0 {
				t.Fatalf("bad input recorded %d entries", len(l.Entries))
			}
		}
	}
}

func TestOutsideEveryWorkspace(t *testing.T) {
	ws := workspaceDir(t)
	other := t.TempDir()
	path := filepath.Join(other, "x.txt")
	write(t, path, "before\n")
	in := strings.Replace(event(PreToolUse, "Edit", path, "t1", ""), `"cwd":"`+other+`"`, `"cwd":"`+ws+`"`, 1)
	if r := handle(t, in, Options{}); r.Code != 0 || r.Message != "" {
		t.Fatalf("PreToolUse outside: exit %d %q", r.Code, r.Message)
	}
	write(t, path, "after\n")
	r := handle(t, strings.Replace(in, PreToolUse, PostToolUse, 1), Options{})
	if r.Code != 0 || !strings.Contains(r.Message, "outside every workspace") {
		t.Fatalf("PostToolUse outside: exit %d %q", r.Code, r.Message)
	}
	for _, dir := range []string{ws, other} {
		if _, err := os.Stat(filepath.Join(dir, ".mcp")); err == nil {
			t.Fatalf("a write outside every workspace made a store in %s", dir)
		}
	}
}

// TestNotRecordable: a symlink, a binary file and one over the size limit are not
// recorded, and say so; nothing half-recorded stays.
func TestNotRecordable(t *testing.T) {
	ws := workspaceDir(t)
	cases := []struct {
		name, file, before, after string
		why                       string
	}{
		{"symlink", "link.txt", "", "one\ntwo\nTHREE\n", "symlink"},
		{"binary", "bin.dat", "a\x00b", "a\x00c", "binary"},
		{"binary now", "a.txt", "", "one\x00two\n", "binary"},
		{"over-size", "big.txt", strings.Repeat("x\n", 600), strings.Repeat("y\n", 600), "larger than"},
	}
	o := Options{MaxFileSize: 1000}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(ws, c.file)
			if c.before != "" {
				write(t, path, c.before)
			}
			id := "t" + strconv.Itoa(i)
			if r := handle(t, event(PreToolUse, "Write", path, id, ""), o); r.Code != 0 || len(r.Stdout) != 0 {
				t.Fatalf("PreToolUse: exit %d %q", r.Code, r.Message)
			}
			if c.file == "link.txt" {
				write(t, filepath.Join(ws, "a.txt"), c.after) // a CLI that writes through links
			} else {
				write(t, path, c.after)
			}
			r := handle(t, event(PostToolUse, "Write", path, id, `,"tool_response":{"type":"update"}`), o)
			if r.Code != 1 || !strings.Contains(r.Message, "not recorded") || !strings.Contains(r.Message, c.why) {
				t.Fatalf("PostToolUse: exit %d %q; want 1 and %q", r.Code, r.Message, c.why)
			}
		})
	}
	if got := testenv.Entries(t, ws); len(got) != 0 {
		t.Fatalf("%d entries recorded, want none", len(got))
	}
	if left, _ := os.ReadDir(filepath.Join(ws, ".mcp", "edit_history", "hooks")); len(left) != 0 {
		t.Fatalf("snapshots left: %v", left)
	}
}

// TestExternalChangeBetweenWrites: a change made outside between two Claude Code
// writes is recorded as an outside change, so each write keeps its own diff.
func TestExternalChangeBetweenWrites(t *testing.T) {
	ws := workspaceDir(t)
	path := filepath.Join(ws, "a.txt")
	edit := func(id, after string) {
		t.Helper()
		if r := handle(t, event(PreToolUse, "Edit", path, id, ""), Options{}); r.Code != 0 {
			t.Fatal(r.Message)
		}
		write(t, path, after)
		if r := handle(t, event(PostToolUse, "Edit", path, id, `,"tool_response":{}`), Options{}); r.Code != 0 {
			t.Fatal(r.Message)
		}
	}
	edit("t1", "one\nTWO\nthree\n")
	write(t, path, "one\nTWO\nthree\nmine\n") // the user, in another editor
	edit("t2", "ONE\nTWO\nthree\nmine\n")
	got := testenv.Entries(t, ws)
	if len(got) != 3 || got[1].Source != history.SourceExternal || got[1].Status != history.Accepted ||
		hashOrNone(got[2].HashBefore) != testenv.SHA256("one\nTWO\nthree\nmine\n") {
		for _, e := range got {
			t.Logf("%s %s %s", e.Source, e.Operation, e.Status)
		}
		t.Fatal("want the Claude write, the outside change (accepted, external), then the next Claude write")
	}
}

// TestLockedStore: with the store locked by another process, PostToolUse gives up
// within its deadline, says what was missed, and the file keeps the write.
func TestLockedStore(t *testing.T) {
	ws := workspaceDir(t)
	path := filepath.Join(ws, "a.txt")
	if r := handle(t, event(PreToolUse, "Edit", path, "t1", ""), Options{}); r.Code != 0 {
		t.Fatal(r.Message)
	}
	write(t, path, "changed\n")
	release := holdLock(t, ws)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := Handle(ctx, strings.NewReader(event(PostToolUse, "Edit", path, "t1", `,"tool_response":{}`)), Options{})
	if took := time.Since(start); took > testenv.Scaled(2*time.Second) {
		t.Fatalf("a locked store held the hook for %v", took)
	}
	if r.Code != 1 || !strings.Contains(r.Message, "a.txt was written but not recorded") || !strings.Contains(r.Message, "locked") {
		t.Fatalf("exit %d %q; want 1 saying the write is not recorded because the store is locked", r.Code, r.Message)
	}
	if data, _ := os.ReadFile(path); string(data) != "changed\n" {
		t.Fatalf("the write was undone: %q", data)
	}
}

// holdLock takes the store's lock as another mcpdiff process would.
func holdLock(t *testing.T, ws string) func() {
	t.Helper()
	fl := flock.New(filepath.Join(ws, ".mcp", "edit_history", "history.lock"))
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatalf("lock the store: %v", err)
	}
	return func() { fl.Unlock() }
}
