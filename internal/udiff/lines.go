package udiff

import (
	"hash/maphash"
	"sort"
	"strings"
)

// SplitLines splits b after each "\n". Every element but the last ends in "\n"; the
// last one ends in "\n" too unless b lacks a final newline. strings.Join(SplitLines(b), "")
// equals string(b). An empty b gives no lines.
func SplitLines(b []byte) []string { return splitLines(string(b)) }

// splitLines is SplitLines for a string; the lines share s's memory.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(lines, s)
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// Edit is one block of change with no context: a[OldStart:OldEnd] became
// b[NewStart:NewEnd]. Indexes are 0-based.
type Edit struct{ OldStart, OldEnd, NewStart, NewEnd int }

// Lines returns the edits that turn a into b, in increasing order; two edits are never
// adjacent (they would have been merged). When a shortest edit script is found within
// minimalBudget steps of Myers' search (an edit of a few places, which is every tool
// call), the result is minimal: the edit history relies on that, since a diff wider
// than the change makes a spurious conflict when an edit is rejected. Otherwise
// (large rewrites) it is close to minimal: patience anchoring on unique lines, Myers
// inside the gaps.
func Lines(a, b []string) []Edit {
	// Trim before interning: a one-line change in a huge file then costs only the
	// string comparisons.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	d := newDiffer(a[pre:len(a)-suf], b[pre:len(b)-suf])
	d.budget = minimalBudget
	d.myers(0, len(d.x), 0, len(d.y))
	if d.overBudget {
		d.edits, d.budget, d.overBudget = d.edits[:0], 0, false
		d.diff(0, len(d.x), 0, len(d.y))
	}
	for i := range d.edits {
		e := &d.edits[i]
		e.OldStart, e.OldEnd, e.NewStart, e.NewEnd = e.OldStart+pre, e.OldEnd+pre, e.NewStart+pre, e.NewEnd+pre
	}
	return d.edits
}

// myersWorkLimit bounds the steps of one Myers search (tens of milliseconds). Past it
// the gap is reported as one replace block: that only happens for big gaps that have
// no line unique on both sides and need thousands of line changes.
const myersWorkLimit = 1 << 22

// minimalBudget bounds the first, exact Myers search of Lines (a few milliseconds).
const minimalBudget = 1 << 20

// differ holds the interned lines and the scratch space of one Lines call.
type differ struct {
	x, y  []int32 // line ids: equal lines have equal ids
	edits []Edit

	// Per line id, used and reset again by uniqueAnchors.
	countX, countY, posY []int32

	vf, vb []int // furthest-reaching paths of the Myers search, by diagonal

	budget     int  // > 0: total Myers steps allowed before giving up on a minimal diff
	spent      int  // Myers steps taken so far
	overBudget bool // the budget ran out: the edits so far are not minimal
}

func newDiffer(a, b []string) *differ {
	t := newInterner(len(a) + len(b))
	d := &differ{x: t.intern(a), y: t.intern(b)}
	d.countX = make([]int32, len(t.lines))
	d.countY = make([]int32, len(t.lines))
	d.posY = make([]int32, len(t.lines))
	return d
}

// interner gives each distinct line a small id, in order of first appearance. It is
// an open-addressing hash table: twice as fast as a map[string]int32 here, which
// matters as interning is most of the time of a diff.
type interner struct {
	seed   maphash.Seed
	slots  []int32  // id+1 of the line hashed there; 0 is empty. The length is a power of 2.
	lines  []string // by id
	hashes []uint64 // by id
}

func newInterner(capacity int) *interner {
	size := 1
	for size < 2*capacity {
		size *= 2
	}
	return &interner{seed: maphash.MakeSeed(), slots: make([]int32, size)}
}

func (t *interner) intern(lines []string) []int32 {
	ids := make([]int32, len(lines))
	mask := uint64(len(t.slots) - 1)
	for i, s := range lines {
		h := maphash.String(t.seed, s)
		for slot := h & mask; ; slot = (slot + 1) & mask {
			id := t.slots[slot] - 1
			if id < 0 {
				id = int32(len(t.lines))
				t.slots[slot] = id + 1
				t.lines = append(t.lines, s)
				t.hashes = append(t.hashes, h)
			} else if t.hashes[id] != h || t.lines[id] != s {
				continue
			}
			ids[i] = id
			break
		}
	}
	return ids
}

// add records that x[xlo:xhi] became y[ylo:yhi], merging it into the previous edit
// when they touch. Edits arrive in increasing order.
func (d *differ) add(xlo, xhi, ylo, yhi int) {
	if xlo == xhi && ylo == yhi {
		return
	}
	if n := len(d.edits); n > 0 && d.edits[n-1].OldEnd == xlo {
		d.edits[n-1].OldEnd, d.edits[n-1].NewEnd = xhi, yhi
		return
	}
	d.edits = append(d.edits, Edit{xlo, xhi, ylo, yhi})
}

// trim narrows x[xlo:xhi] and y[ylo:yhi] by their common prefix and suffix.
func (d *differ) trim(xlo, xhi, ylo, yhi int) (int, int, int, int) {
	for xlo < xhi && ylo < yhi && d.x[xlo] == d.y[ylo] {
		xlo, ylo = xlo+1, ylo+1
	}
	for xlo < xhi && ylo < yhi && d.x[xhi-1] == d.y[yhi-1] {
		xhi, yhi = xhi-1, yhi-1
	}
	return xlo, xhi, ylo, yhi
}

// diff records the edits turning x[xlo:xhi] into y[ylo:yhi]: it matches the longest
// increasing sequence of lines that occur once on each side, and recurses into the
// gaps between them; a gap without such lines goes to Myers.
func (d *differ) diff(xlo, xhi, ylo, yhi int) {
	xlo, xhi, ylo, yhi = d.trim(xlo, xhi, ylo, yhi)
	if xlo == xhi || ylo == yhi {
		d.add(xlo, xhi, ylo, yhi)
		return
	}
	anchors := d.uniqueAnchors(xlo, xhi, ylo, yhi)
	if len(anchors) == 0 {
		d.myers(xlo, xhi, ylo, yhi)
		return
	}
	for _, a := range anchors {
		d.diff(xlo, a.x, ylo, a.y)
		xlo, ylo = a.x+1, a.y+1
	}
	d.diff(xlo, xhi, ylo, yhi)
}

type pair struct{ x, y int }

// uniqueAnchors returns the longest increasing sequence of pairs (i, j) with
// x[i] == y[j] where that line occurs exactly once in x[xlo:xhi] and once in y[ylo:yhi].
func (d *differ) uniqueAnchors(xlo, xhi, ylo, yhi int) []pair {
	for _, id := range d.x[xlo:xhi] {
		d.countX[id]++
	}
	for j := ylo; j < yhi; j++ {
		id := d.y[j]
		d.countY[id]++
		d.posY[id] = int32(j)
	}
	var unique []pair // in increasing x order
	for i := xlo; i < xhi; i++ {
		if id := d.x[i]; d.countX[id] == 1 && d.countY[id] == 1 {
			unique = append(unique, pair{i, int(d.posY[id])})
		}
	}
	for _, id := range d.x[xlo:xhi] {
		d.countX[id] = 0
	}
	for _, id := range d.y[ylo:yhi] {
		d.countY[id] = 0
	}
	return longestIncreasingY(unique)
}

// longestIncreasingY returns the longest subsequence of ps whose y values increase
// (ps is sorted by x, and no two share a y), by patience sorting in O(n log n).
func longestIncreasingY(ps []pair) []pair {
	if len(ps) == 0 {
		return nil
	}
	var tails []int // tails[k]: index in ps of the smallest last y of an increasing run of length k+1
	prev := make([]int, len(ps))
	for i, p := range ps {
		k := sort.Search(len(tails), func(t int) bool { return ps[tails[t]].y >= p.y })
		prev[i] = -1
		if k > 0 {
			prev[i] = tails[k-1]
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([]pair, len(tails))
	for i, k := tails[len(tails)-1], len(tails)-1; k >= 0; i, k = prev[i], k-1 {
		out[k] = ps[i]
	}
	return out
}

// myers records a shortest edit script for x[xlo:xhi] → y[ylo:yhi] (linear-space
// divide and conquer on the middle snake, Myers 1986 section 4b).
func (d *differ) myers(xlo, xhi, ylo, yhi int) {
	xlo, xhi, ylo, yhi = d.trim(xlo, xhi, ylo, yhi)
	if xlo == xhi || ylo == yhi {
		d.add(xlo, xhi, ylo, yhi)
		return
	}
	snake, ok := d.middleSnake(d.x[xlo:xhi], d.y[ylo:yhi])
	if !ok {
		d.add(xlo, xhi, ylo, yhi)
		return
	}
	d.myers(xlo, xlo+snake.start.x, ylo, ylo+snake.start.y)
	d.myers(xlo+snake.end.x, xhi, ylo+snake.end.y, yhi)
}

type snake struct{ start, end pair }

// middleSnake finds the middle snake of a shortest path from (0,0) to (len(a),len(b)):
// a run of equal lines that splits the path into two halves of at most half its
// cost. a and b are non-empty and differ at both ends (trimmed), so the edit distance
// is at least 2 and both halves are smaller problems. It gives up (false) after
// myersWorkLimit steps.
func (d *differ) middleSnake(a, b []int32) (snake, bool) {
	n, m := len(a), len(b)
	delta := n - m
	odd := delta%2 != 0
	maxD := (n + m + 1) / 2
	off := maxD + 1
	d.vf = growInts(d.vf, 2*maxD+3)
	d.vb = growInts(d.vb, 2*maxD+3)
	vf, vb := d.vf, d.vb        // vf[off+k]: furthest x on diagonal k = x-y from the start;
	vf[off+1], vb[off+1] = 0, 0 // vb[off+k]: furthest distance back from the end on diagonal k = (n-x)-(m-y)
	work, limit := 0, myersWorkLimit
	if d.budget > 0 {
		limit = min(limit, d.budget-d.spent)
	}
	defer func() { d.spent += work }()
	for step := 0; step <= maxD; step++ {
		if work > limit {
			d.overBudget = d.budget > 0
			return snake{}, false
		}
		for k := -step; k <= step; k += 2 {
			var x int
			if k == -step || (k != step && vf[off+k-1] < vf[off+k+1]) {
				x = vf[off+k+1] // down from diagonal k+1
			} else {
				x = vf[off+k-1] + 1 // right from diagonal k-1
			}
			y := x - k
			start := pair{x, y}
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			work += x - start.x + 1
			vf[off+k] = x
			// An odd delta means the paths meet on a forward step.
			if kb := delta - k; odd && kb >= -(step-1) && kb <= step-1 && x+vb[off+kb] >= n {
				return snake{start, pair{x, y}}, true
			}
		}
		for kb := -step; kb <= step; kb += 2 {
			var u int
			if kb == -step || (kb != step && vb[off+kb-1] < vb[off+kb+1]) {
				u = vb[off+kb+1]
			} else {
				u = vb[off+kb-1] + 1
			}
			v := u - kb
			start := pair{u, v}
			for u < n && v < m && a[n-1-u] == b[m-1-v] {
				u, v = u+1, v+1
			}
			work += u - start.x + 1
			vb[off+kb] = u
			// An even delta means the paths meet on a backward step.
			if k := delta - kb; !odd && k >= -step && k <= step && vf[off+k]+u >= n {
				return snake{pair{n - u, m - v}, pair{n - start.x, m - start.y}}, true
			}
		}
	}
	return snake{}, false // not reached: the paths meet by step maxD
}

// growInts returns s with length n, reusing its memory when large enough.
func growInts(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}
