// Package benchtab holds what the benchmarks share: medians, rounding, the tables
// `make bench` prints beside the peers' figures, and memory figures from /proc.
package benchtab

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Median is the middle of samples (the upper one of an even count).
func Median(samples []time.Duration) time.Duration {
	s := slices.Clone(samples)
	slices.Sort(s)
	return s[len(s)/2]
}

// Round keeps three significant digits or so.
func Round(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	default:
		return d.Round(10 * time.Microsecond)
	}
}

// Row is one line of a Table.
type Row struct {
	Measurement string
	Figure      string  // as printed
	Value       float64 // the figure as a number, in Unit, for the verdict
	Unit        string
	Peer        string  // the peer's figure, when the table has a peer column
	Goal        float64 // in Unit; 0: none
}

// Table is a markdown table of benchmark figures, printed at the end of a run,
// beside a peer's figures when Peer names one and the goals.
type Table struct {
	Title string
	Peer  string // the peer column's heading; "" for none
	rows  []Row
}

// Add adds r, or replaces the row of the same measurement (without -benchtime 1x,
// the testing package runs a benchmark several times).
func (t *Table) Add(r Row) {
	for i := range t.rows {
		if t.rows[i].Measurement == r.Measurement {
			t.rows[i] = r
			return
		}
	}
	t.rows = append(t.rows, r)
}

// Time adds a row of timed samples: their median (the min and the count beside it),
// against goal (0: none).
func (t *Table) Time(measurement string, samples []time.Duration, peer string, goal time.Duration) {
	med := Median(samples)
	t.Add(Row{
		Measurement: measurement,
		Figure:      fmt.Sprintf("%v (min %v, n=%d)", Round(med), Round(slices.Min(samples)), len(samples)),
		Value:       float64(med) / float64(time.Millisecond),
		Unit:        "ms",
		Peer:        peer,
		Goal:        float64(goal) / float64(time.Millisecond),
	})
}

// Print writes the table (nothing when it has no rows), each goal with its verdict.
func (t *Table) Print(w io.Writer) {
	if len(t.rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### %s\n\n", t.Title)
	if t.Peer != "" {
		fmt.Fprintf(w, "| measurement | mcpdiff | %s | goal |\n|---|---|---|---|\n", t.Peer)
	} else {
		fmt.Fprint(w, "| measurement | figure | goal |\n|---|---|---|\n")
	}
	for _, r := range t.rows {
		goal := ""
		if r.Goal > 0 {
			verdict := "met"
			if r.Value >= r.Goal {
				verdict = fmt.Sprintf("MISSED (%.1fx the goal)", r.Value/r.Goal)
			}
			goal = fmt.Sprintf("< %g %s: %s", r.Goal, r.Unit, verdict)
		}
		if t.Peer != "" {
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.Measurement, r.Figure, r.Peer, goal)
		} else {
			fmt.Fprintf(w, "| %s | %s | %s |\n", r.Measurement, r.Figure, goal)
		}
	}
	fmt.Fprintln(w)
}
