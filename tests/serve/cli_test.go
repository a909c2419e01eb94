package serve

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// cliSplit runs the CLI and returns stdout, stderr and the exit code.
func cliSplit(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testenv.Binary, args...)
	cmd.Dir = dir
	return testenv.Run(t, cmd)
}

// threeEdits makes a workspace with three recorded edits of a.txt and returns the
// session and the edit ids in order.
func threeEdits(t *testing.T) (*session, []string) {
	s := start(t)
	s.Write("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n")
	conv := convOf(t, s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "2\n", "new_string": "two\n"}))
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "5\n", "new_string": "five\n", "mcp_conversation_id": conv})
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "8\n", "new_string": "eight\n", "mcp_conversation_id": conv})
	var ids []string
	for _, e := range s.entries() {
		ids = append(ids, e["edit_id"].(string))
	}
	return s, ids
}

func TestStatusAndShow(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	out, _, code := cliSplit(t, s.dir, "status")
	if code != 0 {
		t.Fatalf("status: %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "EDIT") {
		t.Fatalf("status table:\n%s", out)
	}
	for i, l := range lines[1:] {
		for _, want := range []string{ids[i][:8], "pending", "edit", "conv_", "a.txt"} {
			if !strings.Contains(l, want) {
				t.Fatalf("row %q lacks %q", l, want)
			}
		}
		if strings.Contains(l, s.dir) {
			t.Fatalf("row %q shows an absolute path, want one relative to the workspace", l)
		}
	}
	// From a subfolder, the store is found by walking up.
	sub := s.Path("deep/er")
	os.MkdirAll(sub, 0o755)
	if out2, _, _ := cliSplit(t, sub, "status"); out2 != out {
		t.Fatalf("status from a subfolder differs:\n%s", out2)
	}
	show, _, code := cliSplit(t, s.dir, "show", ids[1][:8])
	if code != 0 || !strings.Contains(show, "-5\n+five\n") || strings.Contains(show, "\x1b[") {
		t.Fatalf("show (not a terminal, so no colour):\n%s", show)
	}
	conv, _, _ := cliSplit(t, s.dir, "show", s.entries()[0]["conversation_id"].(string))
	if strings.Count(conv, "@@") != 6 {
		t.Fatalf("show of a conversation should hold three diffs:\n%s", conv)
	}
	out, _, _ = cliSplit(t, s.dir, "status", "--status", "rejected")
	if !strings.Contains(out, "no rejected edits") {
		t.Fatalf("filtered status: %q", out)
	}
	out, _, _ = cliSplit(t, t.TempDir(), "status", "--workspace", s.dir, "--json", "--file", s.Path("a.txt"))
	var list []history.Entry
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 3 {
		t.Fatalf("status --json --file: %v %s", err, out)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"reject", "ffffffff"}, 1, "unknown"},
		{[]string{"show", "nope"}, 1, "unknown"},
		{[]string{"reject"}, 2, "usage"},
		{[]string{"status", "--bogus"}, 2, "unknown flag"},
		{[]string{"cleanup", "--older-than", "soon"}, 2, "older-than"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"accept", ids[0][:8]}, 0, ""},
		{[]string{ids[1][:8], "--json"}, 2, ""}, // an id is not a command
		// A file the history holds no edit of is named, not "already decided".
		{[]string{"accept", "--file", "never-edited.txt"}, 1, "no edit of this history touches"},
		{[]string{"reject", "--file", "never-edited.txt"}, 1, "never-edited.txt"},
		{[]string{"version", "--bogus"}, 2, "usage"},
		{[]string{"version", "extra"}, 2, "usage"},
	}
	for _, tc := range cases {
		out, errOut, code := cliSplit(t, s.dir, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s%s)", tc.args, code, tc.code, out, errOut)
		}
		if tc.code == 1 && strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: the reason should be one line on stderr, got %q", tc.args, errOut)
		}
		if !strings.Contains(strings.ToLower(errOut), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, errOut, tc.want)
		}
	}
	out, _, code := cliSplit(t, t.TempDir(), "status")
	if code != 1 {
		t.Fatalf("status outside any workspace: exit %d %q", code, out)
	}
	if out, _, code := cliSplit(t, s.dir, "version"); code != 0 || !strings.HasPrefix(out, "mcpdiff ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestRejectAcceptFlagsAnywhere(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	if _, errOut, code := cliSplit(t, s.dir, "reject", "--workspace", s.dir, ids[1][:8]); code != 0 {
		t.Fatalf("reject: %d %s", code, errOut)
	}
	s.expect("a.txt", "1\ntwo\n3\n4\n5\n6\n7\neight\n9\n")
	if _, errOut, code := cliSplit(t, s.dir, "accept", ids[1][:8], "--workspace", s.dir); code != 0 {
		t.Fatalf("accept: %d %s", code, errOut)
	}
	s.expect("a.txt", "1\ntwo\n3\n4\nfive\n6\n7\neight\n9\n")
	conv := s.entries()[0]["conversation_id"].(string)
	if out, errOut, code := cliSplit(t, s.dir, "reject", "--conv", conv, "--json"); code != 0 || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("reject --conv: %d %s %s", code, out, errOut)
	}
	s.expect("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n")
	for _, e := range s.entries() {
		if e["status"] != "rejected" {
			t.Fatalf("after reject --conv: %v", e["status"])
		}
	}
}

func TestConflictIsRefusedNamingTheLaterEdit(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "x\ny\nz\n")
	conv := convOf(t, s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "y", "new_string": "Y1"}))
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "Y1", "new_string": "Y2", "mcp_conversation_id": conv})
	ids := []string{s.entries()[0]["edit_id"].(string), s.entries()[1]["edit_id"].(string)}
	out, errOut, code := cliSplit(t, s.dir, "reject", ids[0])
	if code != 1 || !strings.Contains(errOut, "conflict") || !strings.Contains(errOut, ids[1][:8]) {
		t.Fatalf("exit %d, stderr %q (stdout %q)", code, errOut, out)
	}
	s.expect("a.txt", "x\nY2\nz\n")
	out, _, code = cliSplit(t, s.dir, "reject", ids[0], "--json")
	var res map[string]any
	if code != 1 || json.Unmarshal([]byte(out), &res) != nil || res["kind"] != "conflict" {
		t.Fatalf("--json conflict: %d %s", code, out)
	}
}

func TestExternalChangeIsShownAndForceDiscardsIt(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	s.Write("a.txt", s.Read("a.txt")+"added by hand\n")
	out, errOut, code := cliSplit(t, s.dir, "reject", ids[0])
	if code != 1 || !strings.Contains(out, "+added by hand") || !strings.Contains(errOut, "mcpdiff restore --file "+s.Path("a.txt")) || strings.Contains(errOut, "--force") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	s.expect("a.txt", "1\ntwo\n3\n4\nfive\n6\n7\neight\n9\nadded by hand\n")
	out, _, code = cliSplit(t, s.dir, "reject", ids[0], "--json")
	var res map[string]any
	if code != 1 || json.Unmarshal([]byte(out), &res) != nil || res["kind"] != "external_change" || !strings.Contains(res["diff"].(string), "+added by hand") {
		t.Fatalf("--json: %d %s", code, out)
	}
	if _, errOut, code := cliSplit(t, s.dir, "reject", "--force", ids[0]); code != 0 {
		t.Fatalf("--force: %d %s", code, errOut)
	}
	s.expect("a.txt", "1\n2\n3\n4\nfive\n6\n7\neight\n9\n")
}

func TestTwoCLIsRejectingAtOnce(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", numberedLines(40, nil))
	conv := convOf(t, s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "line 5\n", "new_string": "FIVE\n"}))
	for _, n := range []int{15, 25, 35} {
		s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": fmt.Sprintf("line %d\n", n), "new_string": fmt.Sprintf("EDIT %d\n", n), "mcp_conversation_id": conv})
	}
	entries := s.entries()
	var wg sync.WaitGroup
	for _, i := range []int{0, 2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, errOut, code := cliSplit(t, s.dir, "reject", entries[i]["edit_id"].(string)); code != 0 {
				t.Errorf("reject %d: %d %s", i, code, errOut)
			}
		}()
	}
	wg.Wait()
	got := s.Read("a.txt")
	if strings.Contains(got, "FIVE") || strings.Contains(got, "EDIT 25") || !strings.Contains(got, "EDIT 15") || !strings.Contains(got, "EDIT 35") {
		t.Fatalf("after two concurrent rejects:\n%s", got)
	}
	assertConsistent(t, s.dir)
}

// The CLI accepts and rejects in a loop while the server keeps editing the same
// files: no entry is lost and every file matches its recorded state.
func TestCLIWhileServerEdits(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", numberedLines(200, nil))
	s.Write("b.txt", numberedLines(200, nil))
	conv := convOf(t, s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "line 1\n", "new_string": "first\n"}))
	done := make(chan struct{})
	calls := 1
	go func() {
		defer close(done)
		for i := 1; i < 60; i++ {
			f := []string{"a.txt", "b.txt"}[i%2]
			s.ok("edit_file", map[string]any{"path": f, "old_string": fmt.Sprintf("line %d\n", 3*i), "new_string": fmt.Sprintf("edited %d\n", 3*i), "mcp_conversation_id": conv})
			calls++
		}
	}()
	rejects := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		entries := s.entries()
		e := entries[len(entries)/2]["edit_id"].(string)
		if _, errOut, code := cliSplit(t, s.dir, "reject", e); code != 0 && !strings.Contains(errOut, "conflict") {
			t.Fatalf("reject during edits: %d %s", code, errOut)
		}
		cliSplit(t, s.dir, "accept", e)
		rejects++
	}
	if n := len(s.entries()); n != calls {
		t.Fatalf("%d entries for %d successful calls", n, calls)
	}
	t.Logf("%d reject/accept rounds during %d edits", rejects, calls)
	assertConsistent(t, s.dir)
}

// assertConsistent checks every file equals its last recorded state.
func assertConsistent(t *testing.T, dir string) {
	t.Helper()
	drifts, err := testenv.OpenStore(t, dir).Check()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drifts {
		t.Errorf("%s differs from its recorded state:\n%s", d.Path, d.Diff)
	}
}

func TestCleanupCommand(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	out, _, code := cliSplit(t, s.dir, "cleanup", "--yes")
	if code != 0 || !strings.Contains(out, "dropped 0") {
		t.Fatalf("cleanup with pending edits: %d %q", code, out)
	}
	cliSplit(t, s.dir, "accept", ids[0], ids[1])
	cliSplit(t, s.dir, "reject", ids[2])
	out, _, code = cliSplit(t, s.dir, "cleanup", "--older-than", "1h")
	if code != 0 || !strings.Contains(out, "dropped 0") {
		t.Fatalf("cleanup of recent conversations: %d %q", code, out)
	}
	out, _, code = cliSplit(t, s.dir, "cleanup", "--yes")
	if code != 0 || !strings.Contains(out, "dropped 1") {
		t.Fatalf("cleanup: %d %q", code, out)
	}
	if out, _, _ := cliSplit(t, s.dir, "status"); !strings.Contains(out, "no recorded edits") {
		t.Fatalf("status after cleanup: %q", out)
	}
	s.expect("a.txt", "1\ntwo\n3\n4\nfive\n6\n7\n8\n9\n")
	if names, _ := os.ReadDir(filepath.Join(s.dir, ".mcp", "edit_history", "checkpoints")); len(names) != 0 {
		t.Fatalf("checkpoints left: %v", names)
	}
}

func TestReadOnlyWorkspace(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	store := filepath.Join(s.dir, ".mcp", "edit_history")
	if err := exec.Command("chattr", "+i", filepath.Join(store, "logs"), s.dir).Run(); err != nil {
		t.Skip("cannot make the workspace read-only here (chattr):", err)
	}
	defer exec.Command("chattr", "-i", filepath.Join(store, "logs"), s.dir).Run()
	if out, _, code := cliSplit(t, s.dir, "status"); code != 0 || !strings.Contains(out, ids[0][:8]) {
		t.Fatalf("status on a read-only workspace: %d %q", code, out)
	}
	before := s.Read("a.txt")
	_, errOut, code := cliSplit(t, s.dir, "reject", ids[0])
	if code != 1 || errOut == "" {
		t.Fatalf("reject on a read-only workspace: %d %q", code, errOut)
	}
	s.expect("a.txt", before)
	for _, e := range s.entries() {
		if e["status"] != "pending" {
			t.Fatalf("a refused reject changed a status: %v", e)
		}
	}
}

// status names a file that differs from its history and the ways out, on stderr,
// as information (--json stays one array of entries); a decision then refuses to
// act on it, even one with nothing to do, until `restore --yes` puts the recorded
// state back.
func TestStatusReportsAFileThatDiffersFromItsHistory(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	recorded := s.Read("a.txt")
	s.Write("a.txt", "by hand\n")
	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"status", "--file", "a.txt"}} {
		out, errOut, code := cliSplit(t, s.dir, args...)
		if code != 0 || !strings.Contains(errOut, "mcpdiff: info: a.txt was changed outside mcpdiff since its last recorded state") ||
			!strings.Contains(errOut, "`mcpdiff restore --file a.txt`") || strings.Contains(errOut, "warning") || strings.Contains(errOut, "--force") {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if args[len(args)-1] == "--json" {
			var list []map[string]any
			if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 3 {
				t.Fatalf("status --json: %v %s", err, out)
			}
		}
	}
	if _, errOut, _ := cliSplit(t, s.dir, "status", "--conv", "conv_none"); strings.Contains(errOut, "differs") {
		t.Fatalf("a filter that lists nothing of a.txt warns about it: %q", errOut)
	}
	for _, args := range [][]string{{"accept", ids[1]}, {"reject", "--file", "a.txt"}} {
		out, errOut, code := cliSplit(t, s.dir, args...)
		if code != 1 || !strings.Contains(errOut, "changed outside mcpdiff") || !strings.Contains(out, "+by hand") {
			t.Fatalf("%v on a file in the wrong state: exit %d %q %q", args, code, out, errOut)
		}
		s.expect("a.txt", "by hand\n")
	}
	if _, errOut, code := cliSplit(t, s.dir, "restore", "--file", "a.txt", "--yes"); code != 0 {
		t.Fatalf("restore --file --yes: %d %s", code, errOut)
	}
	s.expect("a.txt", recorded)
	if _, errOut, _ := cliSplit(t, s.dir, "status"); errOut != "" {
		t.Fatalf("status still warns: %q", errOut)
	}
}

// A folder on the way to a recorded file that became a file, a symlink out of the
// workspace or a symlink loop is that file changed outside mcpdiff: status still
// lists the whole history and the other files stay decidable.
func TestStatusReportsAFolderThatIsNoLongerOne(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("sub/x.txt", "a\n")
	s.Write("b.txt", "b\n")
	s.ok("edit_file", map[string]any{"path": "sub/x.txt", "old_string": "a", "new_string": "A"})
	s.ok("edit_file", map[string]any{"path": "b.txt", "old_string": "b", "new_string": "B"})
	b := s.entries()[1]["edit_id"].(string)
	outside := t.TempDir()
	testenv.WriteFile(t, filepath.Join(outside, "x.txt"), "A\n")
	for _, c := range []struct {
		what string
		make func(sub string) error
	}{
		{"a file", func(sub string) error { return os.WriteFile(sub, []byte("now a file\n"), 0o644) }},
		{"a symlink out of the workspace", func(sub string) error { return os.Symlink(outside, sub) }},
		{"a symlink loop", func(sub string) error { return os.Symlink("sub", sub) }},
	} {
		sub := s.Path("sub")
		if err := os.RemoveAll(sub); err != nil {
			t.Fatal(err)
		}
		if err := c.make(sub); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"status"}, {"status", "--health"}} {
			out, errOut, code := cliSplit(t, s.dir, args...)
			if code != 0 || !strings.Contains(out+errOut, "sub/x.txt was changed outside mcpdiff") || strings.Contains(out+errOut, "cannot stat") {
				t.Fatalf("sub is %s: %v: exit %d\n%s%s", c.what, args, code, out, errOut)
			}
			if len(args) == 1 && strings.Count(out, "\n") != 3 {
				t.Fatalf("sub is %s: status does not list both edits:\n%s", c.what, out)
			}
			// No advice that cannot work: restore cannot write through sub.
			if strings.Contains(out+errOut, "mcpdiff restore") || !strings.Contains(out+errOut, "while sub is not a folder") {
				t.Fatalf("sub is %s: %v does not say why sub/x.txt cannot be restored:\n%s%s", c.what, args, out, errOut)
			}
		}
		if _, errOut, code := cliSplit(t, s.dir, "restore", "--file", "sub/x.txt"); code != 1 ||
			(c.what == "a symlink out of the workspace" && !strings.Contains(errOut, "sub/x.txt leads there through a symlink")) {
			t.Fatalf("sub is %s: restore --file sub/x.txt: exit %d %s", c.what, code, errOut)
		}
		if _, errOut, code := cliSplit(t, s.dir, "reject", b); code != 0 {
			t.Fatalf("sub is %s: reject of the other file: exit %d %s", c.what, code, errOut)
		}
		if _, errOut, code := cliSplit(t, s.dir, "accept", b); code != 0 {
			t.Fatalf("sub is %s: accept of the other file: exit %d %s", c.what, code, errOut)
		}
	}
	if got := testenv.ReadFile(t, filepath.Join(outside, "x.txt")); got != "A\n" {
		t.Fatalf("the file outside the workspace changed: %q", got)
	}
}

// A refused reject names every later edit in the way and the exact command that
// rejects them together; that command works.
func TestConflictOffersWithLater(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "a\nb\nc\nd\ne\n")
	conv := convOf(t, s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "b\n", "new_string": "B1\n"}))
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "B1\n", "new_string": "B2\n", "mcp_conversation_id": conv})
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "B2\n", "new_string": "B3\n", "mcp_conversation_id": conv})
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "c\n", "new_string": "C\n", "mcp_conversation_id": conv}) // a neighbour
	var ids []string
	for _, e := range s.entries() {
		ids = append(ids, e["edit_id"].(string))
	}
	_, errOut, code := cliSplit(t, s.dir, "reject", ids[0][:8])
	want := "mcpdiff reject " + ids[0][:8] + " --with-later"
	if code != 1 || !strings.Contains(errOut, ids[1][:8]) || !strings.Contains(errOut, ids[2][:8]) || strings.Contains(errOut, ids[3][:8]) ||
		!strings.Contains(errOut, want) || strings.Count(errOut, "--with-later") != 1 {
		t.Fatalf("exit %d, stderr %q: want both later edits and %q, once", code, errOut, want)
	}
	out, _, _ := cliSplit(t, s.dir, "reject", ids[0][:8], "--json")
	var res struct {
		Kind    string   `json:"kind"`
		Later   []string `json:"later"`
		Command string   `json:"command"`
	}
	if json.Unmarshal([]byte(out), &res) != nil || res.Kind != "conflict" || len(res.Later) != 2 || res.Command != want {
		t.Fatalf("--json: %s", out)
	}
	s.expect("a.txt", "a\nB3\nC\nd\ne\n")
	out, errOut, code = cliSplit(t, s.dir, strings.Fields(want)[1:]...)
	if code != 0 || !strings.Contains(out, "with the later 2 edits in the way") {
		t.Fatalf("%s: %d %s %s", want, code, out, errOut)
	}
	s.expect("a.txt", "a\nb\nC\nd\ne\n")
	if _, errOut, code := cliSplit(t, s.dir, "accept", "--with-later", ids[0]); code != 2 || !strings.Contains(errOut, "unknown flag") {
		t.Fatalf("accept --with-later: %d %s", code, errOut)
	}
}

// Rejecting by lines takes part of an edit out; status and show say so, and
// accepting the edit puts it back.
func TestRejectLinesOfAnEdit(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "1\n2\n3\n4\n5\n6\n7\n")
	s.ok("write_file", map[string]any{"path": "a.txt", "content": "1\nTWO\n3\n4\n5\nSIX\n7\n"})
	id := s.entries()[0]["edit_id"].(string)
	out, errOut, code := cliSplit(t, s.dir, "reject", "--file", "a.txt", "--lines", "5-6")
	if code != 0 || !strings.Contains(out, "rejected 1 change of edit "+id) {
		t.Fatalf("reject --lines: %d %s %s", code, out, errOut)
	}
	s.expect("a.txt", "1\nTWO\n3\n4\n5\n6\n7\n")
	status, _, _ := cliSplit(t, s.dir, "status")
	if !strings.Contains(status, "partly rejected") {
		t.Fatalf("status:\n%s", status)
	}
	show, _, _ := cliSplit(t, s.dir, "show", id)
	if !strings.Contains(show, "partly rejected") || !strings.Contains(show, "changes: [1] pending, [2] rejected") {
		t.Fatalf("show:\n%s", show)
	}
	// No pending change there any more: said, nothing done.
	_, errOut, code = cliSplit(t, s.dir, "reject", "--file", "a.txt", "--lines", "6")
	if code != 1 || !strings.Contains(errOut, "no pending change on line(s) 6") || !strings.Contains(errOut, "`mcpdiff status --file "+s.Path("a.txt")+"`") {
		t.Fatalf("reject an empty range: %d %q", code, errOut)
	}
	if _, errOut, code := cliSplit(t, s.dir, "accept", id); code != 0 {
		t.Fatalf("accept: %s", errOut)
	}
	s.expect("a.txt", "1\nTWO\n3\n4\n5\nSIX\n7\n")
	if status, _, _ := cliSplit(t, s.dir, "status"); strings.Contains(status, "partly") || !strings.Contains(status, "accepted") {
		t.Fatalf("status after accept:\n%s", status)
	}
	for _, bad := range [][]string{{"reject", "--lines", "1-2", id}, {"reject", "--file", "a.txt", "--lines", "3-1"}, {"reject", "--file", "a.txt", "--lines", "x"}} {
		if _, errOut, code := cliSplit(t, s.dir, bad...); code != 2 || !strings.Contains(errOut, "usage") {
			t.Fatalf("%v: %d %s", bad, code, errOut)
		}
	}
}

// ID:N names one change of an edit; status --review gives the rows of
// Neovim's review list.
func TestChangeOperandsAndReviewRows(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "1\n2\n3\n4\n5\n6\n7\n")
	s.ok("write_file", map[string]any{"path": "a.txt", "content": "1\nTWO\n3\n4\n5\nSIX\n7\n"})
	id := s.entries()[0]["edit_id"].(string)
	if out, errOut, code := cliSplit(t, s.dir, "reject", id[:8]+":2"); code != 0 {
		t.Fatalf("reject ID:2: %d %s %s", code, out, errOut)
	}
	s.expect("a.txt", "1\nTWO\n3\n4\n5\n6\n7\n")
	for _, bad := range []string{id + ":0", id + ":x", ":1"} {
		if _, errOut, code := cliSplit(t, s.dir, "reject", bad); code != 2 || !strings.Contains(errOut, "ID:N") {
			t.Fatalf("reject %s: %d %s", bad, code, errOut)
		}
	}
	if _, errOut, code := cliSplit(t, s.dir, "reject", id+":3"); code != 1 || !strings.Contains(errOut, "has no change 3") {
		t.Fatalf("reject ID:3: %d %s", code, errOut)
	}
	out, _, code := cliSplit(t, s.dir, "status", "--review")
	var rows struct {
		Lines  []string `json:"lines"`
		Edit   []string `json:"edit"`
		Status []string `json:"status"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows.Lines) != 2 || rows.Edit[1] != id || rows.Status[1] != "partly rejected" || !strings.Contains(rows.Lines[1], "+2 −2") {
		t.Fatalf("status --review: %d %s", code, out)
	}
}
