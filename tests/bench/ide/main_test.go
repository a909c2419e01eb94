// Package ide benchmarks the Neovim half of the editor bridge against the figures
// of the incumbent, claudecode.nvim: the time from Claude Code's openDiff to the diff
// drawn in Neovim, from `:w` to the FILE_SAVED answer, the plugin's start-up cost
// and Neovim's memory after ten diff cycles. Everything is real: a headless Neovim
// with the plugin, the `mcpdiff nvim` bridge, and a WebSocket client speaking as
// Claude Code does.
//
// Run it with `make bench`, or:
//
//	MCPDIFF_BIN=$PWD/bin/mcpdiff MCPDIFF_NVIMS=$(scripts/nvim-0.10) \
//	  go test -run '^$' -bench . -benchtime 1x ./tests/bench/ide
//
// Each benchmark times several repetitions itself and reports the median; a table
// beside claudecode.nvim's figures and the goals is printed at the end. Nothing here
// fails on timing.
package ide

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/tests/bench/benchtab"
)

var (
	nvimBin  string // the Neovim measured
	repoRoot = testenv.RepoRoot()
	table    = benchtab.Table{Peer: "claudecode.nvim"}
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Suite{Build: testenv.PlainBuild, BenchOnly: true, Setup: pickNvim, Done: printTable})
}

// pickNvim takes the last Neovim found: the one $MCPDIFF_NVIMS names (`make bench`
// names 0.10), else 0.10 when installed, else Debian's.
func pickNvim() error {
	found := testenv.FoundNeovims()
	if len(found) == 0 {
		return errors.New("tests/bench/ide: no Neovim found: set MCPDIFF_NVIMS")
	}
	nvimBin = found[len(found)-1]
	return nil
}

// recordDuration adds (or replaces, when a benchmark runs again) a timed row.
func recordDuration(measurement string, samples []time.Duration, incumbent string, goal time.Duration) {
	table.Time(measurement, samples, incumbent, goal)
}

func printTable() {
	table.Title = "Neovim bridge (" + testenv.NeovimVersion(nvimBin) + ", median of the repetitions)"
	table.Print(os.Stdout)
}
