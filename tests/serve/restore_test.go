//go:build unix

package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// restore without --yes shows what it would discard and changes nothing; with --yes
// it puts the recorded bytes back and leaves every status as it was.
func TestRestoreShowsThenDiscards(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	recorded := s.Read("a.txt")
	history := s.entries()
	s.Write("a.txt", recorded+"by another program\n")

	out, errOut, code := cliSplit(t, s.dir, "restore", "--file", "a.txt")
	if code != 0 || !strings.Contains(out, "restoring a.txt would discard these changes") || !strings.Contains(out, "+by another program") ||
		!strings.Contains(out, "nothing was changed; to discard them, run `mcpdiff restore --file a.txt --yes`") {
		t.Fatalf("restore without --yes: exit %d\n%s%s", code, out, errOut)
	}
	s.expect("a.txt", recorded+"by another program\n")

	out, errOut, code = cliSplit(t, s.dir, "restore", "--file", "a.txt", "--yes")
	if code != 0 || !strings.Contains(out, "+by another program") || !strings.Contains(out, "restored a.txt to its recorded state") {
		t.Fatalf("restore --yes: exit %d\n%s%s", code, out, errOut)
	}
	s.expect("a.txt", recorded)
	for i, e := range s.entries() {
		if e["status"] != history[i]["status"] || e["edit_id"] != ids[i] {
			t.Fatalf("restore changed the history: %v", e)
		}
	}
	if _, errOut, _ := cliSplit(t, s.dir, "status"); errOut != "" {
		t.Fatalf("status after restore: %q", errOut)
	}
	if out, _, code := cliSplit(t, s.dir, "restore", "--file", "a.txt", "--yes"); code != 0 || !strings.Contains(out, "a.txt holds its recorded state: nothing to restore") {
		t.Fatalf("restore of a file in its recorded state: %d %q", code, out)
	}

	// A deleted file comes back; a file the history says was deleted goes again.
	os.Remove(s.Path("a.txt"))
	if _, errOut, code := cliSplit(t, s.dir, "restore", "--file", "a.txt", "--yes"); code != 0 {
		t.Fatalf("restore of a deleted file: %d %s", code, errOut)
	}
	s.expect("a.txt", recorded)
	s.ok("delete_file", map[string]any{"path": "a.txt"})
	s.Write("a.txt", "made again\n")
	if _, errOut, code := cliSplit(t, s.dir, "restore", "--file", "a.txt", "--yes"); code != 0 {
		t.Fatalf("restore of a file the history deleted: %d %s", code, errOut)
	}
	s.missing("a.txt")
}

func TestRestoreBadInput(t *testing.T) {
	t.Parallel()
	s, _ := threeEdits(t)
	s.Write("new.txt", "no history\n")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"restore"}, 2, "say which file: --file PATH"},
		{[]string{"restore", "a.txt"}, 2, "say which file"},
		{[]string{"restore", "--file"}, 2, "needs a value"},
		{[]string{"restore", "--file", "a.txt", "--force"}, 2, "unknown flag --force"},
		{[]string{"restore", "--file", "new.txt"}, 1, "no recorded edits of " + s.Path("new.txt")},
		{[]string{"restore", "--file", "missing.txt", "--yes"}, 1, "no recorded edits"},
	} {
		_, errOut, code := cliSplit(t, s.dir, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if _, errOut, code := cliSplit(t, t.TempDir(), "restore", "--file", "a.txt"); code != 1 || !strings.Contains(errOut, "no edit history found") {
		t.Errorf("restore without a store: %d %q", code, errOut)
	}
	s.expect("new.txt", "no history\n")
}

// A file of the history that is now a symlink (to a file of the workspace or
// outside it): the restore status suggests names the link, and says that it cannot
// rebuild it while it is one, not that the file the link leads to has no history.
// Nothing is written, through the link or in its place.
func TestRestoreOfAFileThatBecameASymlink(t *testing.T) {
	t.Parallel()
	s, _ := threeEdits(t)
	recorded := s.Read("a.txt")
	outside := filepath.Join(t.TempDir(), "outside.txt")
	for _, target := range []string{s.Path("other.txt"), outside} {
		os.WriteFile(target, []byte("target\n"), 0o644)
		os.Remove(s.Path("a.txt"))
		if err := os.Symlink(target, s.Path("a.txt")); err != nil {
			t.Fatal(err)
		}
		// status says what the link is in the way of, and the way out restore needs.
		_, errOut, _ := cliSplit(t, s.dir, "status")
		if !strings.Contains(errOut, "and is now a symlink. To keep it, do nothing. To put the recorded file back, move it away, then run `mcpdiff restore --file a.txt`") {
			t.Fatalf("status of a file that became a symlink: %q", errOut)
		}
		for _, args := range [][]string{{"restore", "--file", "a.txt"}, {"restore", "--file", "a.txt", "--yes"}} {
			_, errOut, code := cliSplit(t, s.dir, args...)
			if code != 1 || !strings.Contains(errOut, s.Path("a.txt")+" is now a symlink") || strings.Contains(errOut, "no recorded edits") {
				t.Fatalf("%v of a file that became a symlink to %s: exit %d, %q", args, target, code, errOut)
			}
		}
		if got := testenv.ReadFile(t, target); got != "target\n" {
			t.Fatalf("restore wrote %q through the link", got)
		}
		if fi, err := os.Lstat(s.Path("a.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("restore replaced the link: %v %v", fi, err)
		}
	}
	// The way out status names: the link moved away, restore puts the file back.
	if err := os.Rename(s.Path("a.txt"), s.Path("a.link")); err != nil {
		t.Fatal(err)
	}
	if out, code := cli(t, s.dir, "restore", "--file", "a.txt", "--yes"); code != 0 || s.Read("a.txt") != recorded {
		t.Fatalf("restore after the link moved away: exit %d, %q; a.txt holds %q", code, out, s.Read("a.txt"))
	}
}

// A file grown past the size limit the history rebuilds (64 MiB) since its last
// recorded state: restore, and a decision on it, are refused saying so and how to
// get the recorded state back (move the file away), not with the MCP tools' advice
// to read part of it; once it is moved away, restore brings the recorded bytes back.
func TestRestoreOfAFileOverTheSizeLimit(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	recorded := s.Read("a.txt")
	if err := os.Truncate(s.Path("a.txt"), 65<<20); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	for _, args := range [][]string{{"restore", "--file", "a.txt"}, {"restore", "--file", "a.txt", "--yes"}, {"reject", ids[2]}} {
		_, errOut, code := cliSplit(t, s.dir, args...)
		if code != 1 || !strings.Contains(errOut, s.Path("a.txt")+" is now 68157440 bytes, over the size limit of 67108864 bytes") ||
			!strings.Contains(errOut, "move it away") || strings.Contains(errOut, "read part of it") {
			t.Fatalf("%v of a file over the size limit: exit %d, %q", args, code, errOut)
		}
	}
	if err := os.Rename(s.Path("a.txt"), s.Path("a.txt.big")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cliSplit(t, s.dir, "restore", "--file", "a.txt", "--yes"); code != 0 {
		t.Fatalf("restore once the big file is moved away: exit %d, %q", code, errOut)
	}
	s.expect("a.txt", recorded)
}

// A file of the history grown far past the size limit (here 2 GB, sparse) is
// reported as changed outside mcpdiff by status and status --health as any other,
// hashed as it is read: not held in memory and diffed, which took minutes and as
// many gigabytes of memory as the file.
func TestStatusOfAFileGrownHuge(t *testing.T) {
	t.Parallel()
	s, _ := threeEdits(t)
	if err := os.Truncate(s.Path("a.txt"), 2<<30); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"status", "--health"}} {
		// Hashing 2 GB takes seconds of CPU, and the tests run in parallel: the limit
		// is there to tell seconds from the minutes it once took.
		out, errOut, code := runLimited(t, s.dir, nil, "", 60*time.Second, args...)
		if code != 0 || !strings.Contains(out+errOut, "a.txt was changed outside mcpdiff since its last recorded state") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// A file changed outside mcpdiff whose folder is now a symlink to another folder of
// the workspace: status says it can be neither restored nor recorded until the folder
// is one again, and a decision refused over it says the same, instead of suggesting a
// restore that then finds no recorded state.
func TestDecisionOverAFileWhoseFolderBecameASymlink(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("sub/g.txt", "1\n2\n")
	s.ok("edit_file", map[string]any{"path": "sub/g.txt", "old_string": "2", "new_string": "two"})
	id := s.entries()[0]["edit_id"].(string)
	if err := os.Rename(s.Path("sub"), s.Path("real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", s.Path("sub")); err != nil {
		t.Fatal(err)
	}
	s.Write("real/g.txt", "1\ntwo\nby another program\n")
	const note = "it can be neither restored nor recorded while sub is not a folder (it is a file or a symlink now): make sub a folder again, or leave the file"
	if _, errOut, _ := cliSplit(t, s.dir, "status"); !strings.Contains(errOut, note) {
		t.Fatalf("status: %q", errOut)
	}
	_, errOut, code := cliSplit(t, s.dir, "reject", id)
	if code != 1 || !strings.Contains(errOut, note) || strings.Contains(errOut, "mcpdiff restore") {
		t.Fatalf("reject over the change: exit %d, %q", code, errOut)
	}
	s.expect("real/g.txt", "1\ntwo\nby another program\n")
}

// The command status suggests for a file changed outside mcpdiff is safe to paste,
// whatever the file's name: pasted into a shell it does what it says (shows the
// changes) and nothing else.
func TestSuggestedRestoreCommandIsSafeToPaste(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"notes $(touch PWNED).txt", "it's `id` & more.txt", "tab\tand\nnewline.txt"} {
		s := start(t)
		s.Write(name, "one\n")
		s.ok("edit_file", map[string]any{"path": name, "old_string": "one", "new_string": "two"})
		s.Write(name, "two\nthree\n")
		_, errOut, code := cliSplit(t, s.dir, "status")
		m := regexp.MustCompile("run `(mcpdiff restore --file .*)` \\(it shows").FindStringSubmatch(errOut)
		if code != 0 || m == nil {
			t.Fatalf("%q: status: exit %d, %q", name, code, errOut)
		}
		if strings.ContainsAny(errOut, "\t\x1b") || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("%q: the suggestion writes the name raw: %q", name, errOut)
		}
		bin := t.TempDir()
		if err := os.Symlink(testenv.Binary, filepath.Join(bin, "mcpdiff")); err != nil {
			t.Fatal(err)
		}
		paste := exec.Command("bash", "-c", m[1])
		paste.Dir, paste.Env = s.dir, testenv.Env("PATH="+bin+":"+os.Getenv("PATH"))
		out, err := paste.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "+three") {
			t.Fatalf("%q: pasting %s: %v\n%s", name, m[1], err, out)
		}
		if _, err := os.Stat(filepath.Join(s.dir, "PWNED")); err == nil {
			t.Fatalf("pasting %s ran what the file name holds", m[1])
		}
		s.expect(name, "two\nthree\n")
	}
}

// Run from outside the workspace (status --workspace DIR), the suggested command
// still finds the history when pasted where status ran.
func TestSuggestedRestoreCommandWorksFromOutsideTheWorkspace(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.Write("a.txt", "one\n")
	s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"})
	id := s.entries()[0]["edit_id"].(string)
	s.Write("a.txt", "two\nthree\n")
	elsewhere := t.TempDir()
	_, errOut, code := cliSplit(t, elsewhere, "status", "--workspace", s.dir)
	m := regexp.MustCompile("run `(mcpdiff restore --file .*)` \\(it shows").FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("status --workspace: exit %d, %q", code, errOut)
	}
	bin := t.TempDir()
	if err := os.Symlink(testenv.Binary, filepath.Join(bin, "mcpdiff")); err != nil {
		t.Fatal(err)
	}
	paste := exec.Command("bash", "-c", m[1])
	paste.Dir, paste.Env = elsewhere, testenv.Env("PATH="+bin+":"+os.Getenv("PATH"))
	out, err := paste.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "+three") {
		t.Fatalf("pasting %s in %s: %v\n%s", m[1], elsewhere, err, out)
	}
	s.expect("a.txt", "two\nthree\n")
	// The same from a refused decision.
	_, errOut, code = cliSplit(t, elsewhere, "reject", id, "--workspace", s.dir)
	m = regexp.MustCompile("run `(mcpdiff restore --file [^`]*)`").FindStringSubmatch(errOut)
	if code != 1 || m == nil {
		t.Fatalf("reject over a change made outside mcpdiff: exit %d, %q", code, errOut)
	}
	paste = exec.Command("bash", "-c", m[1])
	paste.Dir, paste.Env = elsewhere, testenv.Env("PATH="+bin+":"+os.Getenv("PATH"))
	if out, err := paste.CombinedOutput(); err != nil || !strings.Contains(string(out), "+three") {
		t.Fatalf("pasting %s in %s: %v\n%s", m[1], elsewhere, err, out)
	}
}

// Plain cleanup lists what it would drop and drops nothing; --yes drops it.
func TestCleanupAsksForYes(t *testing.T) {
	t.Parallel()
	s, ids := threeEdits(t)
	cliSplit(t, s.dir, "accept", ids[0], ids[1], ids[2])
	before := s.entries()
	out, _, code := cliSplit(t, s.dir, "cleanup")
	if code != 0 || !strings.Contains(out, "would drop 1 conversation(s)") || !strings.Contains(out, before[0]["conversation_id"].(string)) ||
		!strings.Contains(out, "a.txt") || !strings.Contains(out, "nothing was dropped") || !strings.Contains(out, "`mcpdiff cleanup --yes`") {
		t.Fatalf("cleanup without --yes: %d\n%s", code, out)
	}
	if got := s.entries(); len(got) != len(before) {
		t.Fatalf("cleanup without --yes dropped %d entries", len(before)-len(got))
	}
	out, _, code = cliSplit(t, t.TempDir(), "cleanup", "--workspace", s.dir)
	if code != 0 || !strings.Contains(out, "`mcpdiff cleanup --yes --workspace "+s.dir+"`") {
		t.Fatalf("cleanup --workspace without --yes: %d\n%s", code, out)
	}
	out, _, code = cliSplit(t, s.dir, "cleanup", "--yes")
	if code != 0 || !strings.Contains(out, "dropped 1 conversation(s)") {
		t.Fatalf("cleanup --yes: %d\n%s", code, out)
	}
	if out, _, _ := cliSplit(t, s.dir, "cleanup"); !strings.Contains(out, "nothing to drop") {
		t.Fatalf("cleanup with nothing left: %q", out)
	}
}
