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
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	binary   string // the mcpdiff binary
	nvimBin  string // the Neovim measured
	repoRoot string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

// run is TestMain's body, so that its deferred clean-up runs before os.Exit.
func run(m *testing.M) int {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		return m.Run() // `go test ./...`: nothing to build
	}
	_, here, _, _ := runtime.Caller(0)
	repoRoot = filepath.Join(filepath.Dir(here), "..", "..", "..")
	nvimBin = pickNvim()
	if nvimBin == "" {
		fmt.Fprintln(os.Stderr, "tests/bench/ide: no Neovim found: set MCPDIFF_NVIMS")
		return 1
	}
	binary = os.Getenv("MCPDIFF_BIN")
	if binary == "" {
		dir, err := os.MkdirTemp("", "mcpdiff-bench")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "mcpdiff")
		build := exec.Command("go", "build", "-o", binary, "./cmd/mcpdiff")
		build.Dir = repoRoot
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build mcpdiff: %v\n%s", err, out)
			return 1
		}
	}
	code := m.Run()
	printTable()
	return code
}

// pickNvim is the first Neovim of $MCPDIFF_NVIMS, else 0.10 from the cache, else nvim.
func pickNvim() string {
	if env := os.Getenv("MCPDIFF_NVIMS"); env != "" {
		return strings.Split(env, ":")[0]
	}
	home, _ := os.UserHomeDir()
	if p := filepath.Join(home, ".cache/nvim-0.10/bin/nvim"); fileExists(p) {
		return p
	}
	p, _ := exec.LookPath("nvim")
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// row is one line of the summary table.
type row struct {
	measurement string
	figure      string  // formatted median
	value       float64 // for the verdict, in the unit of goal
	incumbent   string  // claudecode.nvim's figure
	goal        float64 // 0: none
	unit        string
}

var rows []row

// recordDuration adds (or replaces, when a benchmark runs again) a timed row.
func recordDuration(measurement string, samples []time.Duration, incumbent string, goal time.Duration) {
	med := median(samples)
	addRow(row{
		measurement: measurement,
		figure:      fmt.Sprintf("%v (min %v, n=%d)", round(med), round(slices.Min(samples)), len(samples)),
		value:       float64(med) / float64(time.Millisecond),
		incumbent:   incumbent,
		goal:        float64(goal) / float64(time.Millisecond),
		unit:        "ms",
	})
}

func addRow(r row) {
	for i := range rows {
		if rows[i].measurement == r.measurement {
			rows[i] = r
			return
		}
	}
	rows = append(rows, r)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

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

func printTable() {
	if len(rows) == 0 {
		return
	}
	fmt.Printf("\n### Neovim bridge (%s, median of the repetitions)\n\n", nvimVersion())
	fmt.Println("| measurement | mcpdiff | claudecode.nvim | goal |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		goal := ""
		if r.goal > 0 {
			verdict := "met"
			if r.value >= r.goal {
				verdict = fmt.Sprintf("MISSED (%.1fx the goal)", r.value/r.goal)
			}
			goal = fmt.Sprintf("< %g %s: %s", r.goal, r.unit, verdict)
		}
		fmt.Printf("| %s | %s | %s | %s |\n", r.measurement, r.figure, r.incumbent, goal)
	}
	fmt.Println()
}

func nvimVersion() string {
	out, err := exec.Command(nvimBin, "--version").Output()
	if err != nil {
		return nvimBin
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first)
}
