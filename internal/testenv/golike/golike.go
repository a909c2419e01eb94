// Package golike makes Go-like source text for the diff tests and benchmarks: a leaf
// package, so that internal/udiff's own tests can use it (testenv imports udiff).
package golike

import "fmt"

// File returns n lines that look like Go source: functions of nine lines each, every
// one different, so that a diff finds unique anchors as in real code.
func File(n int) []string {
	lines := make([]string, 0, n)
	for i := 0; len(lines) < n; i++ {
		lines = append(lines,
			fmt.Sprintf("// f%d does step %d.\n", i, i),
			fmt.Sprintf("func f%d(x int) int {\n", i),
			fmt.Sprintf("\ty := x * %d\n", i),
			"\tif y < 0 {\n",
			"\t\treturn 0\n",
			"\t}\n",
			"\treturn y\n",
			"}\n",
			"\n",
		)
	}
	return lines[:n]
}

// WithScatteredChanges returns lines with n changes spread evenly over them, in turn a
// modified line, an inserted line and a deleted line.
func WithScatteredChanges(lines []string, n int) []string {
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
