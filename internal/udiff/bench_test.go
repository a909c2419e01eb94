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
)

// withScatteredChanges returns lines with n changes spread evenly over them, in turn a
// modified line, an inserted line and a deleted line.
func withScatteredChanges(lines []string, n int) []string {
	out := make([]string, 0, len(lines)+n)
	step := len(lines) / n
	for i, l := range lines {
		if i%step != step/2 {
			out = append(out, l)
			continue
		}
		switch (i / step) % 3 {
		case 0:
			out = append(out, "\t// modified\n")
		case 1:
			out = append(out, l, "\tinserted()\n")
		}
	}
	return out
}

// BenchmarkUnified compares our Unified with the published Go diff modules on a
// 100,000-line Go-like file. "out-bytes" is the size of the diff: minimal is ~15 KB
// for 100 changes.
func BenchmarkUnified(b *testing.B) {
	lines := goLikeFile(100000)
	old := strings.Join(lines, "")
	for _, changes := range []int{10, 100, 1000} {
		new := strings.Join(withScatteredChanges(lines, changes), "")
		generators := []struct {
			name string
			diff func() string
		}{
			{"mcpdiff", func() string { return Unified("f", "f", []byte(old), []byte(new), 3) }},
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

// BenchmarkUnifiedOneLineInHugeFile changes one line of an 11 MB file: trimming the
// common prefix and suffix should make it a matter of milliseconds.
func BenchmarkUnifiedOneLineInHugeFile(b *testing.B) {
	lines := goLikeFile(720000)
	old := []byte(strings.Join(lines, ""))
	lines[len(lines)/2] = "\t// changed\n"
	new := []byte(strings.Join(lines, ""))
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		Unified("f", "f", old, new, 3)
	}
}

// BenchmarkParseApplyNearest parses a 100-hunk diff and applies it to a 100,000-line
// file whose lines have shifted by 5 since the diff was made.
func BenchmarkParseApplyNearest(b *testing.B) {
	lines := goLikeFile(100000)
	text := Unified("f", "f", []byte(strings.Join(lines, "")), []byte(strings.Join(withScatteredChanges(lines, 100), "")), 3)
	shifted := []byte(strings.Repeat("// new header line\n", 5) + strings.Join(lines, ""))
	b.Run("Parse+ApplyNearest", func(b *testing.B) {
		for b.Loop() {
			files, err := Parse(text)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := files[0].ApplyNearest(shifted); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ParseLenient+ApplyNearestEOL", func(b *testing.B) {
		for b.Loop() {
			d, err := ParseLenient(text)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ApplyNearestEOL(shifted, d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
