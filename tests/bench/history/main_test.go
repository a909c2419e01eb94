// Package history benchmarks the edit history at the sizes a long agent session
// reaches: rejecting one edit among 1,000 on a 10,000-line file, listing 10,000
// entries, and recording an edit with 100 scattered changes to a 100,000-line file.
// Each is timed in-process through the history package and, for what a user types,
// as a run of the mcpdiff binary (CLI). hooks_test.go times `mcpdiff hook`, the
// process Claude Code runs around each of its own edits.
//
// Run it with `make bench`, or:
//
//	MCPDIFF_BIN=$PWD/bin/mcpdiff go test -run '^$' -bench . -benchtime 1x ./tests/bench/history
//
// Each sub-benchmark times several repetitions itself and reports the median as
// ns/op; a markdown table "measurement | figure | goal" is printed at the end. The
// goals are issues 3 and 8's, for a 2-core machine; nothing here fails on timing.
package history

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// binary is the mcpdiff CLI: $MCPDIFF_BIN, else built into a temp folder.
var binary string

func TestMain(m *testing.M) { os.Exit(run(m)) }

// run is TestMain's body, so that its deferred clean-up runs before os.Exit.
func run(m *testing.M) int {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		return m.Run() // `go test ./...`: nothing to build
	}
	binary = os.Getenv("MCPDIFF_BIN")
	if binary == "" {
		dir, err := os.MkdirTemp("", "mcpdiff-bench")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "mcpdiff")
		_, here, _, _ := runtime.Caller(0)
		build := exec.Command("go", "build", "-o", binary, "./cmd/mcpdiff")
		build.Dir = filepath.Join(filepath.Dir(here), "..", "..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build mcpdiff: %v\n%s", err, out)
			return 1
		}
	}
	code := m.Run()
	printTable()
	return code
}

// result is one row of the summary table.
type result struct {
	measurement string
	samples     []time.Duration
	goal        time.Duration // 0: no goal of its own
}

// results in the order they were first measured.
var results []result

// record adds a row, or replaces the row of a measurement taken again (without
// -benchtime 1x, the testing package runs a benchmark several times).
func record(measurement string, samples []time.Duration, goal time.Duration) {
	r := result{measurement, samples, goal}
	for i := range results {
		if results[i].measurement == measurement {
			results[i] = r
			return
		}
	}
	results = append(results, r)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func printTable() {
	if len(results) == 0 {
		return
	}
	fmt.Println("\n### Edit history at scale (median of the repetitions, min in brackets)")
	fmt.Println()
	fmt.Println("| measurement | figure | goal |")
	fmt.Println("|---|---|---|")
	for _, r := range results {
		goal := ""
		if r.goal > 0 {
			verdict := "met"
			if median(r.samples) >= r.goal {
				verdict = fmt.Sprintf("MISSED (%.1fx the goal)", float64(median(r.samples))/float64(r.goal))
			}
			goal = fmt.Sprintf("< %v: %s", r.goal, verdict)
		}
		fmt.Printf("| %s | %v (min %v, n=%d) | %s |\n", r.measurement, round(median(r.samples)), round(slices.Min(r.samples)), len(r.samples), goal)
	}
	fmt.Println("| diff of a 100,000-line file with 100 scattered changes | see `go test -run '^$' -bench 'Unified/^changes=100$/mcpdiff' ./udiff` | < 50ms |")
	fmt.Println()
}

// round keeps three significant digits or so.
func round(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	default:
		return d.Round(10 * time.Microsecond)
	}
}
