package udiff

// Strict and nearest application of a diff, and reversing one: the round-trip tests'
// yardsticks (mcpdiff itself applies a model's diffs with ApplyNearestEOL).

// Apply applies d strictly: every hunk must match at exactly its header position.
func (d *FileDiff) Apply(old []byte) ([]byte, error) { return d.apply(old, atHeader) }

// ApplyNearest applies d when each hunk's context and deleted lines match exactly,
// at the matching position nearest to its header line (hunks stay in order and must not
// overlap). No fuzz: a hunk whose lines are not found is an *ApplyError.
//
// Each hunk is searched at or after the end of the previous one; of two matches
// equally near its header line the earlier wins.
func (d *FileDiff) ApplyNearest(old []byte) ([]byte, error) { return d.apply(old, nearest) }

// Reverse returns the diff that undoes d.
func (d *FileDiff) Reverse() *FileDiff {
	r := &FileDiff{OldName: d.NewName, NewName: d.OldName, Hunks: make([]Hunk, len(d.Hunks))}
	for i, h := range d.Hunks {
		r.Hunks[i] = Hunk{
			OldStart: h.NewStart, OldLines: h.NewLines, NewStart: h.OldStart, NewLines: h.OldLines,
			Lines: reverseLines(h.Lines),
		}
	}
	return r
}

// reverseLines swaps deletions and insertions; in each run of changes the new
// deletions come first, as diff writes them.
func reverseLines(lines []Line) []Line {
	out := make([]Line, 0, len(lines))
	for i := 0; i < len(lines); {
		if lines[i].Kind == Context {
			out = append(out, lines[i])
			i++
			continue
		}
		j := i
		for j < len(lines) && lines[j].Kind != Context {
			j++
		}
		for _, l := range lines[i:j] {
			if l.Kind == Insert {
				out = append(out, Line{Delete, l.Text})
			}
		}
		for _, l := range lines[i:j] {
			if l.Kind == Delete {
				out = append(out, Line{Insert, l.Text})
			}
		}
		i = j
	}
	return out
}
