package udiff

import (
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv/golike"
)

// BenchmarkUnifiedOneLineInHugeFile changes one line of an 11 MB file: trimming the
// common prefix and suffix should make it a matter of milliseconds.
func BenchmarkUnifiedOneLineInHugeFile(b *testing.B) {
	lines := golike.File(720000)
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
	lines := golike.File(100000)
	text := Unified("f", "f", []byte(strings.Join(lines, "")), []byte(strings.Join(golike.WithScatteredChanges(lines, 100), "")), 3)
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
