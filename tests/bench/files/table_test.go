package files

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// row is one line of the summary table: a workload, the mcpdiff column it compares
// with the peers, and which figure of it the row shows.
type row struct {
	label, workload, mcpdiff string
	show                     func(*figure) cell
}

// cell is one figure as shown: value (and min, for timings; 0 otherwise) feed the
// ratios.
type cell struct {
	value, min float64
	text       string
	ok         bool
}

// median shows "median (min N)"; first shows the single warm-up call; rss the peak
// resident memory.
func median(f *figure) cell {
	if len(f.samples) == 0 {
		return cell{text: "–"}
	}
	return cell{float64(f.median()), float64(f.min()), fmt.Sprintf("%s (min %s)", ms(f.median()), ms(f.min())), true}
}

func first(f *figure) cell {
	return cell{float64(f.first), 0, ms(f.first), f.first > 0}
}

func rss(f *figure) cell {
	if f.rss == 0 {
		return cell{text: "–"}
	}
	return cell{f.rss, 0, fmt.Sprintf("%.0f MB", f.rss/(1<<20)), true}
}

var rows = []row{
	{"start → initialize answered", "start", "mcpdiff", median},
	{"read 10,000-line file (mcpdiff read_text_file)", "read", "mcpdiff read_text_file", median},
	{"read 10,000-line file (mcpdiff read_files)", "read", "mcpdiff read_files", median},
	{"one-line edit, 1 MB file", "edit-1MB", "mcpdiff", median},
	{"one-line edit, 1 MB file: first call (1 sample)", "edit-1MB", "mcpdiff", first},
	{"one-line edit, 11 MB file", "edit-11MB", "mcpdiff", median},
	{"one-line edit, 11 MB file: first call (1 sample)", "edit-11MB", "mcpdiff", first},
	{"peak RSS after the 11 MB edits", "edit-11MB", "mcpdiff", rss},
	{"20 pipelined edits to one file (until all answered)", "pipelined", "mcpdiff", median},
}

// printTable writes the markdown summary of every figure measured in this run.
func printTable(w io.Writer) {
	if len(figures) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### mcpdiff vs peer MCP file servers (median of %d–%d repetitions, min in brackets)\n\n", pipelineReps, readReps)
	fmt.Fprintln(w, "| workload | mcpdiff | reference | mark3labs | reference/mcpdiff | mark3labs/mcpdiff | survived (mcpdiff · reference · mark3labs) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		if len(figures[r.workload]) == 0 {
			continue
		}
		base := lookup(r.workload, r.mcpdiff, r.show)
		cells := []string{r.label, base.text}
		var ratios []string
		for _, peer := range []string{reference.name, mark3labs.name} {
			c := lookup(r.workload, peer, r.show)
			cells = append(cells, c.text)
			ratios = append(ratios, ratio(c, base))
		}
		cells = append(cells, ratios...)
		cells = append(cells, survivors(r.workload))
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
	fmt.Fprintln(w)
	printGoals(w)
}

func lookup(workload, column string, show func(*figure) cell) cell {
	f := figures[workload][column]
	if f == nil && column != mcpdiff.name && peers[column] == "" {
		return cell{text: "not installed"}
	}
	if f == nil {
		return cell{text: "not run"}
	}
	return show(f)
}

// ratio is peer/mcpdiff: above 1, mcpdiff is faster (or smaller). For timings the
// ratio of the minimums follows in brackets: a busy machine disturbs it less.
func ratio(peer, base cell) string {
	if !peer.ok || !base.ok || base.value == 0 {
		return "–"
	}
	out := fmt.Sprintf("%.1fx", peer.value/base.value)
	if peer.min > 0 && base.min > 0 {
		out += fmt.Sprintf(" (%.1fx)", peer.min/base.min)
	}
	return out
}

// survivors is "min/20" per server for the pipelined row (the worst repetition).
func survivors(workload string) string {
	if workload != "pipelined" {
		return ""
	}
	var out []string
	for _, srv := range servers {
		f := figures[workload][srv.name]
		if f == nil {
			out = append(out, "–")
			continue
		}
		out = append(out, fmt.Sprintf("%d/%d", slices.Min(f.survived), pipelined))
	}
	return strings.Join(out, " · ")
}

// printGoals compares the figures with the goals: the 11 MB one-line edit at
// least 10x faster than the reference and no slower than mark3labs, and no lost
// update.
func printGoals(w io.Writer) {
	edit := figures["edit-11MB"]
	if m := edit[mcpdiff.name]; m != nil {
		for _, g := range []struct {
			peer string
			want float64
		}{{reference.name, 10}, {mark3labs.name, 1}} {
			p := edit[g.peer]
			if p == nil {
				fmt.Fprintf(w, "- goal: 11 MB one-line edit ≥ %gx faster than %s: not measured (%s not run)\n", g.want, g.peer, g.peer)
				continue
			}
			ratio := float64(p.median()) / float64(m.median())
			minRatio := float64(p.min()) / float64(m.min())
			fmt.Fprintf(w, "- goal: 11 MB one-line edit ≥ %gx faster than %s: %.1fx (minimums: %.1fx), %s\n",
				g.want, g.peer, ratio, minRatio, verdict(ratio >= g.want))
		}
	}
	if m := figures["pipelined"][mcpdiff.name]; m != nil {
		lost := 0
		for i := range m.acked {
			lost = max(lost, m.acked[i]-m.survived[i])
		}
		fmt.Fprintf(w, "- goal: zero lost updates (answered as done but missing from the file): worst repetition lost %d of %d, %s\n",
			lost, pipelined, verdict(lost == 0))
	}
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}

// ms formats a duration in milliseconds with three significant digits.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}
