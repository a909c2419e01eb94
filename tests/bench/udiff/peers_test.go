// Package udiff compares mcpdiff's unified diffs with the published Go diff modules.
// It lives in the benchmarks' own module so that those modules stay out of mcpdiff's
// go.mod.
package udiff

import (
	"fmt"
	"strings"
	"testing"

	goudiff "github.com/aymanbagabas/go-udiff"
	"github.com/hexops/gotextdiff"
	"github.com/hexops/gotextdiff/myers"
	gotextspan "github.com/hexops/gotextdiff/span"
	"github.com/pmezard/go-difflib/difflib"

	"github.com/mcpdiff/mcpdiff/internal/testenv/golike"
	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// BenchmarkUnified compares our Unified with the published Go diff modules on a
// 100,000-line Go-like file. "out-bytes" is the size of the diff: minimal is ~15 KB
// for 100 changes.
func BenchmarkUnified(b *testing.B) {
	lines := golike.File(100000)
	old := strings.Join(lines, "")
	for _, changes := range []int{10, 100, 1000} {
		new := strings.Join(golike.WithScatteredChanges(lines, changes), "")
		generators := []struct {
			name string
			diff func() string
		}{
			{"mcpdiff", func() string { return udiff.Unified("f", "f", []byte(old), []byte(new), 3) }},
			{"go-udiff", func() string { return goudiff.Unified("a/f", "b/f", old, new) }},
			{"gotextdiff", func() string {
				edits := myers.ComputeEdits(gotextspan.URIFromPath("f"), old, new)
				return fmt.Sprint(gotextdiff.ToUnified("a/f", "b/f", old, edits))
			}},
		}
		if changes <= 100 { // roughly quadratic: seconds at 100 changes
			generators = append(generators, struct {
				name string
				diff func() string
			}{"go-difflib", func() string {
				out, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
					A: difflib.SplitLines(old), B: difflib.SplitLines(new), FromFile: "a/f", ToFile: "b/f", Context: 3,
				})
				return out
			}})
		}
		for _, g := range generators {
			b.Run(fmt.Sprintf("changes=%d/%s", changes, g.name), func(b *testing.B) {
				var out string
				for b.Loop() {
					out = g.diff()
				}
				b.ReportMetric(float64(len(out)), "out-bytes")
			})
		}
	}
}
