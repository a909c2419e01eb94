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
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/tests/bench/benchtab"
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Suite{Build: testenv.PlainBuild, BenchOnly: true, Done: printTable})
}

var table = benchtab.Table{Title: "Edit history at scale (median of the repetitions, min in brackets)"}

// record adds a row of timed samples against goal (0: none).
func record(measurement string, samples []time.Duration, goal time.Duration) {
	table.Time(measurement, samples, "", goal)
}

func printTable() {
	table.Print(os.Stdout)
	fmt.Println("The diff of a 100,000-line file with 100 scattered changes (goal < 50 ms): see `go test -run '^$' -bench 'Unified/^changes=100$/mcpdiff' ./internal/udiff`.")
}
