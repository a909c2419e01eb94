package history

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
	"github.com/mcpdiff/mcpdiff/tests/bench/benchtab"
)

// Repetitions timed inside one benchmark iteration (so `-benchtime 1x` is enough).
const (
	inProcessReps = 10
	cliReps       = 5
)

// ws is a workspace with an edit history, changed the way the MCP tools change it:
// each change is logged through Store.Record, which writes it in Apply.
type ws struct {
	dir   string
	root  *workspace.Root
	store *history.Store
}

func newWS(b *testing.B) *ws {
	b.Helper()
	root, st := testenv.CreateStore(b, b.TempDir())
	return &ws{dir: root.Path(), root: root, store: st}
}

// edit records and writes one edit of the file rel from before to after.
func (w *ws) edit(b *testing.B, conv, rel string, before, after []byte) *history.Entry {
	b.Helper()
	return testenv.RecordEdit(b, w.store, w.root, conv, rel, before, after)
}

func (w *ws) write(b *testing.B, rel string, lines []string) {
	b.Helper()
	testenv.WriteFile(b, filepath.Join(w.dir, rel), strings.Join(lines, ""))
}

func (w *ws) expect(b *testing.B, rel string, lines []string, after string) {
	b.Helper()
	if testenv.ReadFile(b, filepath.Join(w.dir, rel)) != strings.Join(lines, "") {
		b.Fatalf("after %s, %s does not hold what it should", after, rel)
	}
}

func (w *ws) decide(b *testing.B, id string, to history.Status) *history.Outcome {
	b.Helper()
	out, err := w.store.Decide(context.Background(), history.Selection{IDs: []string{id}}, to, false)
	if err != nil {
		b.Fatalf("%s %s: %v", to, id, err)
	}
	return out
}

// cli runs the mcpdiff binary on the workspace, checks it succeeded, and returns how
// long the process took and what it printed.
func (w *ws) cli(b *testing.B, args ...string) (time.Duration, string) {
	b.Helper()
	cmd := exec.Command(testenv.Binary, append(args, "--workspace", w.dir)...)
	start := time.Now()
	stdout, stderr, code := testenv.Run(b, cmd)
	elapsed := time.Since(start)
	if code != 0 {
		b.Fatalf("mcpdiff %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	return elapsed, stdout
}

// codeLine is line i of an ordinary Go-like file.
func codeLine(i int) string {
	switch i % 6 {
	case 0:
		return fmt.Sprintf("func step%d(ctx context.Context) error {\n", i)
	case 1:
		return fmt.Sprintf("\tif err := run(ctx, %d); err != nil {\n", i)
	case 2:
		return fmt.Sprintf("\t\treturn fmt.Errorf(\"step %d: %%w\", err)\n", i)
	case 3:
		return "\t}\n"
	case 4:
		return "\treturn nil\n"
	default:
		return "}\n"
	}
}

func codeLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = codeLine(i)
	}
	return out
}

// BenchmarkReject rejects one edit in the middle of 1,000 recorded one-line edits
// (10 conversations of 100) scattered over a 10,000-line file, then accepts it again,
// which restores the file for the next repetition. Both rebuild the file by
// replaying every other kept edit.
func BenchmarkReject(b *testing.B) {
	const fileLines, edits, convs = 10000, 1000, 10
	w := newWS(b)
	lines := codeLines(fileLines)
	w.write(b, "big.go", lines)
	// Edit i changes line at[i]: every tenth line, visited in a scattered order (379
	// and 1,000 are coprime), so no two edits touch the same or adjacent lines.
	at := make([]int, edits)
	ids := make([]string, edits)
	for i := range edits {
		at[i] = (i*379%edits)*(fileLines/edits) + 5
		before := []byte(strings.Join(lines, ""))
		lines[at[i]] = fmt.Sprintf("\tedited%d := %d // changed by edit %d\n", i, i, i)
		conv := fmt.Sprintf("conv_bench_%02d", i*convs/edits)
		ids[i] = w.edit(b, conv, "big.go", before, []byte(strings.Join(lines, ""))).EditID
	}
	k := edits / 2 // the edit rejected: the first of conversation 5
	withoutK := append([]string(nil), lines...)
	withoutK[at[k]] = codeLine(at[k])

	b.Run("in-process", func(b *testing.B) {
		var reject, accept, checks []time.Duration
		for range inProcessReps * b.N {
			var out *history.Outcome
			reject = append(reject, timed(func() { out = w.decide(b, ids[k], history.Rejected) }))
			checks = append(checks, out.Checks)
			w.expect(b, "big.go", withoutK, "the reject")
			accept = append(accept, timed(func() { out = w.decide(b, ids[k], history.Accepted) }))
			checks = append(checks, out.Checks)
			w.expect(b, "big.go", lines, "accepting it again")
		}
		report(b, reject)
		record("reject 1 of 1,000 edits on a 10,000-line file (Store.Decide)", reject, 100*time.Millisecond)
		record("accept it again, rebuilding the file (Store.Decide)", accept, 0)
		record("of each of those, the store's own checks (signatures; the file's history agreeing with itself)", checks, time.Millisecond)
	})
	b.Run("cli", func(b *testing.B) {
		var reject, accept []time.Duration
		for range cliReps * b.N {
			d, _ := w.cli(b, "reject", ids[k])
			reject = append(reject, d)
			w.expect(b, "big.go", withoutK, "mcpdiff reject")
			d, _ = w.cli(b, "accept", ids[k])
			accept = append(accept, d)
			w.expect(b, "big.go", lines, "mcpdiff accept")
		}
		report(b, reject)
		record("`mcpdiff reject ID`, same edit (whole process)", reject, 100*time.Millisecond)
		record("`mcpdiff accept ID`, putting it back (whole process)", accept, 0)
	})
}

// BenchmarkStatus lists 10,000 entries: 100 files with 100 edits each, recorded
// over 10 conversations.
func BenchmarkStatus(b *testing.B) {
	const files, editsPerFile, convs, fileLines = 100, 100, 10, 150
	w := newWS(b)
	for f := range files {
		w.write(b, fileName(f), codeLines(fileLines))
	}
	for c := range convs {
		conv := fmt.Sprintf("conv_bench_%02d", c)
		for f := range files {
			for j := range editsPerFile / convs {
				n := c*editsPerFile/convs + j // the file's n-th edit changes its line n
				lines := codeLines(fileLines)
				for m := range n {
					lines[m] = fmt.Sprintf("\tedited%d()\n", m)
				}
				before := []byte(strings.Join(lines, ""))
				lines[n] = fmt.Sprintf("\tedited%d()\n", n)
				w.edit(b, conv, fileName(f), before, []byte(strings.Join(lines, "")))
			}
		}
	}
	const entries = files * editsPerFile

	b.Run("in-process", func(b *testing.B) {
		var list []time.Duration
		for range inProcessReps * b.N {
			var got *history.Listing
			list = append(list, timed(func() {
				var err error
				if got, err = w.store.List(history.Filter{}); err != nil {
					b.Fatal(err)
				}
			}))
			if len(got.Entries) != entries {
				b.Fatalf("listed %d entries, want %d", len(got.Entries), entries)
			}
		}
		report(b, list)
		record("status over 10,000 entries (Store.List)", list, 50*time.Millisecond)
	})
	b.Run("cli", func(b *testing.B) {
		var table, asJSON []time.Duration
		for range cliReps * b.N {
			d, out := w.cli(b, "status")
			table = append(table, d)
			if n := strings.Count(out, "\n"); n != entries+1 {
				b.Fatalf("mcpdiff status printed %d lines, want %d", n, entries+1)
			}
			d, out = w.cli(b, "status", "--json")
			asJSON = append(asJSON, d)
			if n := strings.Count(out, `"edit_id"`); n != entries {
				b.Fatalf("mcpdiff status --json listed %d entries, want %d", n, entries)
			}
		}
		report(b, table)
		record("`mcpdiff status`, 10,000 entries (whole process)", table, 50*time.Millisecond)
		record("`mcpdiff status --json`, 10,000 entries (whole process)", asJSON, 50*time.Millisecond)
	})
}

func fileName(f int) string { return fmt.Sprintf("file%03d.go", f) }

// BenchmarkRecordScatteredEdit records one edit that makes 100 scattered changes to
// a 100,000-line file: what the history adds to such an edit, its unified diff
// included (the diff alone is udiff's BenchmarkUnified/changes=100).
func BenchmarkRecordScatteredEdit(b *testing.B) {
	const fileLines, changes = 100000, 100
	w := newWS(b)
	a := codeLines(fileLines)
	c := append([]string(nil), a...)
	for i := range changes {
		n := i*fileLines/changes + fileLines/changes/2
		c[n] = fmt.Sprintf("\tchanged%d()\n", n)
	}
	w.write(b, "huge.go", a)
	contents := [2][]byte{[]byte(strings.Join(a, "")), []byte(strings.Join(c, ""))}
	var samples []time.Duration
	for r := 0; r <= inProcessReps*b.N; r++ {
		before, after := contents[r%2], contents[(r+1)%2]
		d := timed(func() { w.edit(b, "conv_bench_scattered", "huge.go", before, after) })
		if r > 0 { // the first edit of the conversation also writes its checkpoint
			samples = append(samples, d)
		}
	}
	w.expect(b, "huge.go", [][]string{a, c}[(inProcessReps*b.N+1)%2], "the last edit")
	report(b, samples)
	record("record an edit with 100 scattered changes to a 100,000-line file (Store.Record, diff included)", samples, 0)
}

// BenchmarkCLIStart is the floor under every CLI figure: starting the binary.
func BenchmarkCLIStart(b *testing.B) {
	var samples []time.Duration
	for range cliReps * b.N {
		cmd := exec.Command(testenv.Binary, "version")
		samples = append(samples, timed(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("mcpdiff version: %v\n%s", err, out)
			}
		}))
	}
	report(b, samples)
	record("`mcpdiff version` (process start, for scale)", samples, 0)
}

func timed(op func()) time.Duration {
	start := time.Now()
	op()
	return time.Since(start)
}

// report makes the median of samples the benchmark's ns/op.
func report(b *testing.B, samples []time.Duration) {
	b.ReportMetric(float64(benchtab.Median(samples).Nanoseconds()), "ns/op")
}
