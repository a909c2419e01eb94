//go:build linux

package serve

// Decisions (accept, reject, --conv, --file, cleanup) under faults: the CLI killed
// at every file system call it makes and at random instants, and disk-full errors
// at every write. After each, the next command must find the files and the history
// agreeing, with the decision fully done or fully undone, and both the same and the
// opposite decision must then give the exact expected bytes. After each kill at a
// step that leaves a committed decision to complete, the workspace is copied with
// `cp -a` (its journal folder then has another device and inode, and its path is
// another): the same must hold in the copy, while the original stays untouched and
// its own next command finds the decision done or undone. At every point no log line
// names a diff, rebuild or checkpoint that is missing.
//
// Kills and errors are injected with strace (`-e inject=SYSCALL:signal=SIGKILL:when=N`),
// which counts calls per thread; the history commands run on one thread, so the
// N-th call of the trace is the N-th step. MCPDIFF_KILL_TRIALS sets the number of
// random kills per decision (default 40).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// faultCase is a workspace with recorded edits (restored from a copy before every
// trial, at the same path, since the history records absolute paths), a decision,
// and what the workspace holds before it, after it, and after the opposite one.
type faultCase struct {
	name           string
	dir, tmpl      string
	decision, undo []string
	before, after  string
	opposite       string
	stepsOf        map[string]int // system call → how many the decision makes
	recovered      int            // times the next command completed an interrupted decision
}

// recorder makes edits the way the file tools do: logged through Store.Record,
// written in Apply.
type recorder struct {
	t     *testing.T
	dir   string
	root  *workspace.Root
	store *history.Store
}

func newRecorder(t *testing.T, dir string) *recorder {
	t.Helper()
	root, store := testenv.CreateStore(t, dir)
	return &recorder{t: t, dir: dir, root: root, store: store}
}

func (r *recorder) change(conv string, ch history.Change) string {
	r.t.Helper()
	return testenv.Record(r.t, r.store, r.root, conv, ch).EditID
}

func (r *recorder) edit(conv, rel, after string) string {
	before, err := os.ReadFile(filepath.Join(r.dir, rel))
	if err != nil {
		r.t.Fatal(err)
	}
	return r.change(conv, history.Change{Op: history.Edit, Path: filepath.Join(r.dir, rel), Before: before, BeforeExists: true, After: []byte(after)})
}

func (r *recorder) create(conv, rel, content string) string {
	return r.change(conv, history.Change{Op: history.Create, Path: filepath.Join(r.dir, rel), After: []byte(content)})
}

func (r *recorder) move(conv, from, to string) string {
	before, _ := os.ReadFile(filepath.Join(r.dir, from))
	return r.change(conv, history.Change{Op: history.Move, From: filepath.Join(r.dir, from), Path: filepath.Join(r.dir, to), Before: before, BeforeExists: true})
}

func (r *recorder) remove(conv, rel string) string {
	before, _ := os.ReadFile(filepath.Join(r.dir, rel))
	return r.change(conv, history.Change{Op: history.Delete, Path: filepath.Join(r.dir, rel), Before: before, BeforeExists: true})
}

// faultCases builds the decisions under test, each in its own folder under base;
// the files they change have about n lines.
func faultCases(t *testing.T, base string, n int) []*faultCase {
	t.Helper()
	var cases []*faultCase
	add := func(name string, build func(r *recorder) (decision, undo []string)) {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		decision, undo := build(newRecorder(t, dir))
		c := &faultCase{name: name, dir: dir, tmpl: dir + ".tmpl", decision: decision, undo: undo}
		copyTree(t, dir, c.tmpl)
		c.before = c.state(t)
		if out, code := cli(t, dir, decision...); code != 0 {
			t.Fatalf("%s: %s", name, out)
		}
		c.after = c.state(t)
		if out, code := cli(t, dir, undo...); code != 0 {
			t.Fatalf("%s: %s", name, out)
		}
		c.opposite = c.state(t)
		if c.before == c.after || c.after == c.opposite {
			t.Fatalf("%s: the decision changes nothing", name)
		}
		cases = append(cases, c)
	}
	// threeEdits writes a.txt with perm and records three edits of it in one
	// conversation, each changing lines of its own on top of the last; it returns the
	// middle one.
	threeEdits := func(r *recorder, perm os.FileMode, edits ...map[int]string) string {
		os.WriteFile(filepath.Join(r.dir, "a.txt"), []byte(numberedLines(n, nil)), perm)
		c := history.NewConversationID()
		lines := map[int]string{}
		var ids []string
		for _, e := range edits {
			maps.Copy(lines, e)
			ids = append(ids, r.edit(c, "a.txt", numberedLines(n, lines)))
		}
		return ids[1]
	}
	// Reject the middle one of three edits of a file, keeping the others.
	add("reject", func(r *recorder) ([]string, []string) {
		mid := threeEdits(r, 0o640, map[int]string{3: "three\n"}, map[int]string{15: "fifteen\n"}, map[int]string{27: "x\ny\n"})
		return []string{"reject", mid}, []string{"accept", mid}
	})
	// Accept a rejected edit: it is put back.
	add("accept", func(r *recorder) ([]string, []string) {
		mid := threeEdits(r, 0o644, map[int]string{3: "three\n"}, map[int]string{15: ""}, map[int]string{27: "x\n"})
		if out, code := cli(t, r.dir, "reject", mid); code != 0 {
			t.Fatal(out)
		}
		return []string{"accept", mid}, []string{"reject", mid}
	})
	// A conversation over three files: an edit, a create in a new folder, and a
	// delete of a file with its own mode; and a move. A later conversation edits
	// the first file.
	add("reject-conv", func(r *recorder) ([]string, []string) {
		os.WriteFile(filepath.Join(r.dir, "a.txt"), []byte(numberedLines(n, nil)), 0o644)
		os.WriteFile(filepath.Join(r.dir, "gone.sh"), []byte("#!/bin/sh\necho bye\n"), 0o750)
		os.WriteFile(filepath.Join(r.dir, "old.txt"), []byte("moved\n"), 0o600)
		c, later := history.NewConversationID(), history.NewConversationID()
		r.edit(c, "a.txt", numberedLines(n, map[int]string{2: "two\n"}))
		r.create(c, "sub/dir/new.txt", "brand new\n")
		r.remove(c, "gone.sh")
		r.move(c, "old.txt", "other/new-name.txt")
		r.edit(later, "a.txt", numberedLines(n, map[int]string{2: "two\n", 18: "eighteen\n"}))
		return []string{"reject", "--conv", c}, []string{"accept", "--conv", c}
	})
	// The pending edits of one file, from two conversations.
	add("reject-file", func(r *recorder) ([]string, []string) {
		os.WriteFile(filepath.Join(r.dir, "a.txt"), []byte(numberedLines(n, nil)), 0o644)
		os.WriteFile(filepath.Join(r.dir, "b.txt"), []byte("b\n"), 0o644)
		c1, c2 := history.NewConversationID(), history.NewConversationID()
		e1 := r.edit(c1, "a.txt", numberedLines(n, map[int]string{5: "five\n"}))
		r.edit(c1, "b.txt", "B\n")
		e2 := r.edit(c2, "a.txt", numberedLines(n, map[int]string{5: "five\n", 12: "twelve\n"}))
		return []string{"reject", "--file", "a.txt"}, []string{"accept", e1, e2}
	})
	// Cleanup drops a resolved conversation; the history still works afterwards.
	add("cleanup", func(r *recorder) ([]string, []string) {
		os.WriteFile(filepath.Join(r.dir, "a.txt"), []byte(numberedLines(n, nil)), 0o644)
		done, open := history.NewConversationID(), history.NewConversationID()
		e := r.edit(done, "a.txt", numberedLines(n, map[int]string{1: "one\n"}))
		x := r.edit(done, "a.txt", numberedLines(n, map[int]string{1: "one\n", 4: "four\n"}))
		if out, code := cli(t, r.dir, "accept", r.create(done, "c.txt", "c\n")); code != 0 {
			t.Fatal(out)
		}
		for _, args := range [][]string{{"accept", e}, {"reject", x}} {
			if out, code := cli(t, r.dir, args...); code != 0 {
				t.Fatal(out)
			}
		}
		p := r.edit(open, "a.txt", numberedLines(n, map[int]string{1: "one\n", 10: "ten\n"}))
		return []string{"cleanup", "--yes"}, []string{"reject", p}
	})
	return cases
}

// state is everything a user relies on: each file's mode and bytes (the store
// aside), and each edit's status. It runs `mcpdiff status`, which is also the
// next command after a fault: it must complete or undo what was cut off, and find
// no file that differs from its history.
func (c *faultCase) state(t *testing.T) string {
	t.Helper()
	return c.stateIn(t, c.dir)
}

// stateIn is state of the workspace dir (the case's, or a copy of it).
func (c *faultCase) stateIn(t *testing.T, dir string) string {
	t.Helper()
	out, errOut, code := cliSplit(t, dir, "status", "--json")
	if code != 0 || strings.Contains(errOut, "changed outside mcpdiff") || strings.Contains(errOut, "cannot be completed") {
		t.Fatalf("%s: status after the fault: exit %d\n%s", c.name, code, errOut)
	}
	if strings.Contains(errOut, "completed an interrupted") {
		c.recovered++
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("%s: status --json: %v\n%s", c.name, err, out)
	}
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%s %s\n", e["edit_id"], e["status"])
	}
	var files []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == ".mcp" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			info, _ := d.Info()
			data, _ := os.ReadFile(path)
			files = append(files, fmt.Sprintf("%s %v %q", rel, info.Mode(), data))
		}
		return nil
	})
	sort.Strings(files)
	b.WriteString(strings.Join(files, "\n"))
	if _, err := os.Stat(filepath.Join(dir, history.Dir, "journal")); err == nil {
		names, _ := os.ReadDir(filepath.Join(dir, history.Dir, "journal"))
		t.Fatalf("%s: the journal is left after the next command: %v", c.name, names)
	}
	noDanglingReferences(t, c.name+" after the next command", dir)
	return b.String()
}

// noDanglingReferences checks that every diff, rebuild and checkpoint a line of the
// store names is there. It reads the store's files as they are, whatever state a
// kill left them in (a torn last line is not an entry).
func noDanglingReferences(t *testing.T, label, dir string) {
	t.Helper()
	store := filepath.Join(dir, history.Dir)
	check := func(file string, line []byte) {
		var refs struct {
			Diff       *string `json:"diff_file"`
			Checkpoint *string `json:"checkpoint_file"`
		}
		if json.Unmarshal(line, &refs) != nil {
			return
		}
		for _, ref := range []*string{refs.Diff, refs.Checkpoint} {
			if ref == nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(store, filepath.FromSlash(*ref))); err != nil {
				t.Fatalf("%s: %s names %s, which is missing", label, file, *ref)
			}
		}
	}
	logs, _ := filepath.Glob(filepath.Join(store, "logs", "*.log"))
	for _, f := range append(logs, filepath.Join(store, "rebuilds.log")) {
		data, _ := os.ReadFile(f)
		lines := strings.Split(string(data), "\n")
		for _, line := range lines[:len(lines)-1] { // the part after the last newline is torn
			check(filepath.Base(f), []byte(line))
		}
	}
}

func (c *faultCase) restore(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(c.dir); err != nil {
		t.Fatal(err)
	}
	copyTree(t, c.tmpl, c.dir)
}

// verify checks the workspace after a decision was cut off (or failed): files and
// statuses are all before or all after it, and the same decision, then the
// opposite one, give exactly what they give without a fault.
func (c *faultCase) verify(t *testing.T, label string) (found string) {
	t.Helper()
	return c.verifyIn(t, c.dir, label)
}

// verifyIn is verify in the workspace dir (the case's, or a copy of it).
func (c *faultCase) verifyIn(t *testing.T, dir, label string) (found string) {
	t.Helper()
	recovered := c.recovered
	switch got := c.stateIn(t, dir); got {
	case c.before:
		found = "before"
	case c.after:
		found = "done"
		if c.recovered > recovered {
			found = "completed"
		}
	default:
		t.Fatalf("%s %s: the workspace is neither before nor after the decision:\n%s\n--- before:\n%s\n--- after:\n%s", c.name, label, got, c.before, c.after)
	}
	if out, code := cli(t, dir, c.decision...); code != 0 {
		t.Fatalf("%s %s: the decision again: exit %d %s", c.name, label, code, out)
	}
	if got := c.stateIn(t, dir); got != c.after {
		t.Fatalf("%s %s: after deciding again:\n%s\nwant:\n%s", c.name, label, got, c.after)
	}
	if out, code := cli(t, dir, c.undo...); code != 0 {
		t.Fatalf("%s %s: the opposite decision: exit %d %s", c.name, label, code, out)
	}
	if got := c.stateIn(t, dir); got != c.opposite {
		t.Fatalf("%s %s: after the opposite decision:\n%s\nwant:\n%s", c.name, label, got, c.opposite)
	}
	return found
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(dst, info.Mode().Perm())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			return err
		}
		return os.Chmod(dst, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The calls that change files. A kill just before each of them covers every
// instant: between two of them nothing on disk changes. (The chmod of a staged
// file, fchmodat2, is unknown to strace 6: a kill before it is the same as one
// before the next staged file's write, as far as the decision goes.)
var changingCalls = []string{"write", "pwrite64", "renameat", "renameat2", "linkat", "unlinkat", "ftruncate", "mkdirat", "fsync", "fdatasync"}

// strace runs the CLI in dir under strace with opts; it returns the exit code and
// stderr.
func straceCLI(t *testing.T, dir string, opts []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("strace", append(append(append([]string{"-f", "-qq"}, opts...), "--", testenv.Binary), args...)...)
	cmd.Dir = dir
	_, stderr, code := testenv.Run(t, cmd)
	return code, stderr
}

var traceLine = regexp.MustCompile(`^(\d+) +([a-z0-9_]+)\(`)

// countSteps traces the decision once and counts the changing calls its main
// thread makes, per call.
func (c *faultCase) countSteps(t *testing.T) {
	t.Helper()
	c.restore(t)
	trace := filepath.Join(t.TempDir(), "trace")
	if code, errOut := straceCLI(t, c.dir, []string{"-o", trace, "-e", "trace=" + strings.Join(changingCalls, ",")}, c.decision...); code != 0 {
		t.Fatalf("%s under strace: exit %d %s", c.name, code, errOut)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c.stepsOf = map[string]int{}
	main := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := traceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if main == "" {
			main = m[1]
		}
		if !slices.Contains(changingCalls, m[2]) {
			continue
		}
		if m[1] != main {
			t.Fatalf("%s: %s called from another thread (%s): a kill at the N-th call would not be the N-th step", c.name, m[2], sc.Text())
		}
		c.stepsOf[m[2]]++
	}
	c.verify(t, "(traced)")
}

// eachFaultCase runs f on every decision (files of about n lines), in parallel.
func eachFaultCase(t *testing.T, n int, f func(c *faultCase, t *testing.T)) {
	for _, c := range faultCases(t, testenv.TempDir(t), n) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f(c, t)
		})
	}
}

// Kill the CLI just before every call that changes a file, for every decision.
func TestDecisionKilledAtEveryStep(t *testing.T) {
	t.Parallel()
	requireStrace(t)
	eachFaultCase(t, 30, (*faultCase).killAtEveryStep)
}

func (c *faultCase) killAtEveryStep(t *testing.T) {
	kills := c.injectAtEachStep(t, changingCalls, "signal=SIGKILL", func(label string, code int, errOut string) {
		if code != 128+int(syscall.SIGKILL) {
			t.Fatalf("%s: %s did not happen: exit %d %s", c.name, label, code, errOut)
		}
		noDanglingReferences(t, c.name+" "+label, c.dir)
	}, func(t *testing.T, label string) {
		// A kill before the commit, or after the plan was removed, leaves nothing to
		// complete: a copy would only test a decision in a copied workspace.
		if _, err := os.Stat(filepath.Join(c.dir, history.Dir, "journal", "plan.json")); err == nil {
			c.inACopy(t, label)
		} else {
			c.verify(t, label)
		}
	})
	t.Logf("%s: killed at each of its %d steps (%v); %d times the next command completed the decision", c.name, kills, c.stepsOf, c.recovered)
}

// inACopy copies the workspace a decision was killed in with `cp -a` (new inodes, a
// new path), and verifies the copy as verify does: its next command completes or
// undoes the decision there, and the decision and its opposite then work. Nothing
// done in the copy touches the original, whose own next command then finds the
// decision done or undone.
func (c *faultCase) inACopy(t *testing.T, label string) {
	t.Helper()
	copied := c.dir + ".copy"
	if out, err := exec.Command("cp", "-a", c.dir, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
	defer os.RemoveAll(copied)
	original := treeOf(t, c.dir)
	c.verifyIn(t, copied, label+", in a copy of the workspace")
	if treeOf(t, c.dir) != original {
		t.Fatalf("%s %s: commands run in a copy of the workspace changed the original", c.name, label)
	}
	if got := c.state(t); got != c.before && got != c.after {
		t.Fatalf("%s %s: the original workspace is neither before nor after the decision:\n%s", c.name, label, got)
	}
}

// treeOf is every file under dir, the store's included, with its mode and bytes.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, _ := os.ReadFile(path)
		fmt.Fprintf(&b, "%s %v %x\n", path, info.Mode(), crc32.ChecksumIEEE(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// injectAtEachStep runs the decision once for each call of calls it makes, with
// strace injecting inject into that one, checks what the CLI did, then the
// workspace with verify. It returns how many runs it made.
func (c *faultCase) injectAtEachStep(t *testing.T, calls []string, inject string, check func(label string, code int, errOut string), verify func(t *testing.T, label string)) int {
	t.Helper()
	c.countSteps(t)
	runs := 0
	for _, call := range calls {
		for n := 1; n <= c.stepsOf[call]; n++ {
			c.restore(t)
			code, errOut := straceCLI(t, c.dir, []string{"-o", "/dev/null", "-e", "trace=" + call, "-e", fmt.Sprintf("inject=%s:%s:when=%d", call, inject, n)}, c.decision...)
			label := fmt.Sprintf("%s at %s #%d", inject, call, n)
			check(label, code, errOut)
			verify(t, label)
			runs++
		}
	}
	return runs
}

// Kill the CLI at random instants of its run.
func TestDecisionKilledAtRandom(t *testing.T) {
	t.Parallel()
	trials := 40
	if n, err := strconv.Atoi(os.Getenv("MCPDIFF_KILL_TRIALS")); err == nil && n > 0 {
		trials = n
	} else if testing.Short() {
		trials = 8
	}
	seed := time.Now().UnixNano()
	t.Logf("random seed %d", seed)
	// How long a process takes to start: kills before then find nothing begun.
	startup := median(t, 3, func() {
		if out, code := cli(t, ".", "version"); code != 0 {
			t.Fatal(out)
		}
	})
	// Files of 50,000 lines make the decision itself last long enough for random
	// kills to land in it often, not only in the process's start.
	eachFaultCase(t, 50000, func(c *faultCase, t *testing.T) {
		c.killAtRandom(t, rand.New(rand.NewSource(seed+int64(crc32.ChecksumIEEE([]byte(c.name))))), trials, startup)
	})
}

func (c *faultCase) killAtRandom(t *testing.T, rng *rand.Rand, trials int, startup time.Duration) {
	span := median(t, 3, func() {
		c.restore(t)
		if out, code := cli(t, c.dir, c.decision...); code != 0 {
			t.Fatalf("%s: %s", c.name, out)
		}
	})
	// Kills fall uniformly between lo and hi. Each kill that finds nothing begun
	// raises lo halfway to its instant, each that finds the decision done lowers
	// hi: the kills gather where the decision is being carried out.
	lo, hi := min(startup*3/4, span/2), span
	found := map[string]int{}
	for i := range trials {
		c.restore(t)
		cmd := exec.Command(testenv.Binary, c.decision...)
		cmd.Dir = c.dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		at := lo + time.Duration(rng.Int63n(int64(hi-lo)+1))
		// The random instant is the point of the test, not a synchronisation.
		time.Sleep(at)
		cmd.Process.Kill()
		cmd.Wait()
		kind := c.verify(t, fmt.Sprintf("killed at random after %v (trial %d)", at, i))
		found[kind]++
		switch {
		case kind == "before":
			lo += (at - lo) / 2
		case kind == "done":
			hi -= (hi - at) / 2
		}
		if hi-lo < 200*time.Microsecond { // start again wide: the run's length varies
			lo, hi = min(startup*3/4, span/2), span
		}
	}
	t.Logf("%s: %d kills over a %v run: %d found nothing begun, %d a decision the next command completed, %d the decision done",
		c.name, trials, span, found["before"], found["completed"], found["done"])
}

// median runs f n times and returns how long it took, the median.
func median(t *testing.T, n int, f func()) time.Duration {
	t.Helper()
	var took []time.Duration
	for range n {
		start := time.Now()
		f()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took[n/2]
}

var pathAtFault = regexp.MustCompile(`/\S+`)

// A write that fails with "no space left on device", at every write a decision
// makes: the decision is undone (or had not begun), and the error names the path
// whose write failed.
func TestDecisionDiskFullAtEveryWrite(t *testing.T) {
	t.Parallel()
	requireStrace(t)
	eachFaultCase(t, 30, (*faultCase).diskFullAtEveryWrite)
}

func (c *faultCase) diskFullAtEveryWrite(t *testing.T) {
	failed := 0
	runs := c.injectAtEachStep(t, []string{"write", "pwrite64", "linkat", "renameat", "mkdirat"}, "error=ENOSPC", func(label string, code int, errOut string) {
		switch code {
		case 0:
		case 1:
			failed++
			if !strings.Contains(errOut, "no space left on device") || !pathAtFault.MatchString(errOut) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("%s %s: the error should be one line naming the path and the cause: %q", c.name, label, errOut)
			}
		default:
			t.Fatalf("%s %s: exit %d %s", c.name, label, code, errOut)
		}
	}, func(t *testing.T, label string) { c.verify(t, label) })
	t.Logf("%s: %d of its writes failed in turn; %d of those failed the decision, which changed nothing", c.name, runs, failed)
}

// A real full disk: the workspaces on a small tmpfs (the tests must run as root to
// mount it), and a file filling it up to leave 0, 1, 2... pages free, until the
// decision succeeds at three levels in a row. At every level the decision is done
// or changed nothing, its error names the path whose write failed, and the next
// command still works on the full disk.
func TestDecisionOnAFullDisk(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := testenv.TempDir(t)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	for _, c := range faultCases(t, mnt, 3000) {
		c.fullDisk(t, filepath.Join(mnt, "filler"))
	}
}

func (c *faultCase) fullDisk(t *testing.T, filler string) {
	t.Helper()
	inARow, failed, pages := 0, 0, 0
	for ; inARow < 3; pages++ {
		if pages > 400 {
			t.Fatalf("%s: still failing with %d pages free", c.name, pages)
		}
		c.restore(t)
		fillUp(t, filler, pages)
		_, errOut, code := cliSplit(t, c.dir, c.decision...)
		label := fmt.Sprintf("with %d pages free", pages)
		switch code {
		case 0:
			inARow++
		case 1:
			inARow, failed = 0, failed+1
			if !strings.Contains(errOut, "no space left on device") || !strings.Contains(errOut, filepath.Dir(filler)+"/") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("%s %s: the error should be one line naming the path and the cause: %q", c.name, label, errOut)
			}
		default:
			t.Fatalf("%s %s: exit %d %s", c.name, label, code, errOut)
		}
		if got := c.state(t); got != c.before && got != c.after { // the next command, on the full disk
			t.Fatalf("%s %s: neither before nor after the decision:\n%s", c.name, label, got)
		}
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		c.verify(t, label)
	}
	t.Logf("%s: failed with 0 to %d pages free (%d levels), changing nothing; succeeded from %d", c.name, pages-4, failed, pages-3)
}

// fillUp writes filler so that its file system has only pages pages left.
func fillUp(t *testing.T, filler string, pages int) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(filler), &st); err != nil {
		t.Fatal(err)
	}
	size := int64(st.Bavail)*int64(st.Bsize) - int64(pages)*4096
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if size > 0 {
		if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
			t.Fatal(err)
		}
	}
}

// requireStrace skips a test that needs strace where it is missing or cannot trace.
func requireStrace(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		testenv.SkipWithout(t, "strace is not installed (.ci/run installs it)")
	}
	if out, err := exec.Command("strace", "-f", "-o", "/dev/null", "true").CombinedOutput(); err != nil {
		testenv.SkipWithout(t, fmt.Sprintf("strace cannot trace here: %v %s", err, out))
	}
}
