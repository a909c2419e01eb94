package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The property: after random edits to several files (all operations, edits of one
// or several blocks, edits on neighbouring lines) and random accept/reject decisions
// of whole edits and of some of their blocks, every file equals what replaying only
// the kept blocks gives, or the decision was refused (changing nothing) naming exactly
// the later edits whose place would be a guess; rejecting with WithLater takes those
// along.
//
// The oracle is independent of the implementation: every line ever written is unique,
// so it works on line identities, never on diffs or offsets. It keeps the recorded
// file R and, where the wanted file S differs, units that say which recorded lines
// stand for which wanted lines; S is read off R and the units. The rule it applies
// is the documented one: a kept block conflicts where it changes lines a rejected
// block wrote, splits them, or puts lines exactly where lines a rejected block
// removed go back.

type oBlock struct {
	del, add    []string
	left, right string // the recorded neighbours when it was made ("" = an edge)
}

type oracleOp struct {
	entry  *Entry
	file   int      // identity of the file
	kind   string   // edit (also write_file), create, delete, move
	blocks []oBlock // edit: in file order; create: one block adding the content
	path   string   // create, move: the path after
}

type oracleFile struct {
	exists bool
	path   string
	lines  []string
}

type propWorld struct {
	w       *ws
	rng     *rand.Rand
	ops     []oracleOp
	files   []*oracleFile // recorded world, by identity
	owner   map[string]int
	counter int
	conv    string
}

func (p *propWorld) newLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		p.counter++
		out[i] = fmt.Sprintf("line-%d", p.counter)
	}
	return out
}

func text(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

func (p *propWorld) existing() []int {
	var out []int
	for id, f := range p.files {
		if f.exists {
			out = append(out, id)
		}
	}
	return out
}

// step makes one random change in the recorded world and records it.
func (p *propWorld) step() {
	live := p.existing()
	choice := p.rng.Intn(12)
	if len(live) == 0 {
		choice = 0
	}
	switch {
	case choice == 0 || (choice == 1 && len(live) < 3):
		p.create()
	case choice <= 7:
		p.edit(live[p.rng.Intn(len(live))])
	case choice == 8:
		p.replace(live[p.rng.Intn(len(live))])
	case choice == 9:
		p.move(live[p.rng.Intn(len(live))])
	default:
		p.delete(live[p.rng.Intn(len(live))])
	}
}

func (p *propWorld) create() {
	path := fmt.Sprintf("f%d.txt", len(p.files))
	id := len(p.files)
	// Sometimes bring back a path whose file was deleted (same identity, as the
	// history tracks it).
	for old, f := range p.files {
		if !f.exists && p.owner[f.path] == old && p.rng.Intn(3) == 0 {
			path, id = f.path, old
			break
		}
	}
	add := p.newLines(1 + p.rng.Intn(6))
	e := p.w.create(p.conv, path, text(add))
	if id == len(p.files) {
		p.files = append(p.files, &oracleFile{})
	}
	*p.files[id] = oracleFile{exists: true, path: path, lines: add}
	p.owner[path] = id
	p.ops = append(p.ops, oracleOp{entry: e, file: id, kind: "create", blocks: []oBlock{{add: add}}, path: path})
}

// edit changes one to three places of a file, each at least one unchanged line from
// the next (so the diff shows them as separate blocks).
func (p *propWorld) edit(id int) {
	f := p.files[id]
	n := len(f.lines)
	var blocks []oBlock
	var next []string
	pos := 0 // lines before pos are decided
	for b, count := 0, 1+p.rng.Intn(3)*p.rng.Intn(2); b < count && pos <= n; b++ {
		a := pos + p.rng.Intn(n-pos+1)
		e := a + p.rng.Intn(min(3, n-a)+1)
		add := p.newLines(p.rng.Intn(4))
		if a == e && len(add) == 0 {
			add = p.newLines(1)
		}
		blk := oBlock{del: append([]string(nil), f.lines[a:e]...), add: add}
		if a > 0 {
			blk.left = f.lines[a-1]
		}
		if e < n {
			blk.right = f.lines[e]
		}
		blocks = append(blocks, blk)
		next = append(append(next, f.lines[pos:a]...), add...)
		pos = e
		if pos < n { // one unchanged line before the next block
			next = append(next, f.lines[pos])
			pos++
		} else {
			pos = n + 1
		}
	}
	if pos < n {
		next = append(next, f.lines[pos:]...)
	}
	e := p.w.edit(p.conv, f.path, text(next))
	f.lines = next
	p.ops = append(p.ops, oracleOp{entry: e, file: id, kind: "edit", blocks: blocks})
}

func (p *propWorld) replace(id int) {
	f := p.files[id]
	add := p.newLines(1 + p.rng.Intn(5))
	before := p.w.mustRead(f.path)
	e := p.w.change(p.conv, Change{Op: Replace, Path: p.w.abs(f.path), Before: []byte(before), BeforeExists: true, After: []byte(text(add))})
	// A write_file is an edit of the whole file: it removes every line it saw.
	p.ops = append(p.ops, oracleOp{entry: e, file: id, kind: "edit", blocks: []oBlock{{del: f.lines, add: add}}})
	f.lines = add
}

func (p *propWorld) move(id int) {
	f := p.files[id]
	to := fmt.Sprintf("moved/m%d-%d.txt", id, len(p.ops))
	e := p.w.move(p.conv, f.path, to)
	delete(p.owner, f.path)
	f.path = to
	p.owner[to] = id
	p.ops = append(p.ops, oracleOp{entry: e, file: id, kind: "move", path: to})
}

func (p *propWorld) delete(id int) {
	f := p.files[id]
	e := p.w.remove(p.conv, f.path)
	f.exists = false
	f.lines = nil
	p.ops = append(p.ops, oracleOp{entry: e, file: id, kind: "delete"})
}

// decisions holds, per edit, the status of each of its blocks.
type decisions map[string][]Status

func (d decisions) copy() decisions {
	out := decisions{}
	for k, v := range d {
		out[k] = append([]Status(nil), v...)
	}
	return out
}

// oUnit: the recorded lines r stand for the wanted lines s. An empty r is a place
// where s goes back, before the recorded line at ("" = the end).
type oUnit struct {
	r                  []string
	at                 string
	s                  []string
	openStart, openEnd bool
}

// oState is one file in the oracle's replay.
type oState struct {
	existsR, existsS bool
	pathR, pathS     string
	R                []string
	units            []*oUnit
	sOnly            []string // S while R does not exist
}

func index(lines []string) map[string]int {
	m := make(map[string]int, len(lines))
	for i, l := range lines {
		m[l] = i
	}
	return m
}

func (f *oState) span(u *oUnit, idx map[string]int) (int, int) {
	if len(u.r) == 0 {
		if u.at == "" {
			return len(f.R), len(f.R)
		}
		return idx[u.at], idx[u.at]
	}
	return idx[u.r[0]], idx[u.r[0]] + len(u.r)
}

// read reads S off R[u0:u1] and the given units.
func (f *oState) read(u0, u1 int, units []*oUnit, idx map[string]int) []string {
	empties, starts := map[int][]*oUnit{}, map[int]*oUnit{}
	for _, u := range units {
		a, e := f.span(u, idx)
		if a == e {
			empties[a] = append(empties[a], u)
		} else {
			starts[a] = u
		}
	}
	var out []string
	for i := u0; i <= u1; i++ {
		for _, u := range empties[i] {
			out = append(out, u.s...)
		}
		if i == u1 {
			break
		}
		if u := starts[i]; u != nil {
			out = append(out, u.s...)
			i += len(u.r) - 1
			continue
		}
		out = append(out, f.R[i])
	}
	return out
}

func (f *oState) S() []string {
	switch {
	case !f.existsS:
		return nil
	case !f.existsR:
		return f.sOnly
	}
	return f.read(0, len(f.R), f.units, index(f.R))
}

func (f *oState) locate(b oBlock, idx map[string]int) (int, int) {
	if len(b.del) > 0 {
		a := idx[b.del[0]]
		return a, a + len(b.del)
	}
	if b.left == "" {
		return 0, 0
	}
	return idx[b.left] + 1, idx[b.left] + 1
}

// guess reports whether keeping block b would be a guess.
func (f *oState) guess(b oBlock, idx map[string]int) bool {
	a, e := f.locate(b, idx)
	for _, u := range f.units {
		us, ue := f.span(u, idx)
		switch {
		case us == ue:
			if (a == e && a == us) || (a < us && us < e && len(b.add) > 0) {
				return true
			}
		case e > a:
			if a < ue && us < e {
				return true
			}
		default:
			if (us < a && a < ue) || (a == us && u.openStart) || (a == ue && u.openEnd) {
				return true
			}
		}
	}
	return false
}

func (f *oState) keepBlock(b oBlock) {
	idx := index(f.R)
	a, e := f.locate(b, idx)
	next := append(append(append([]string(nil), f.R[:a]...), b.add...), f.R[e:]...)
	f.reanchor(a, e, next)
	f.R = next
}

// reanchor moves places anchored on removed lines to the line now at a.
func (f *oState) reanchor(a, e int, next []string) {
	removed := map[string]bool{}
	for _, l := range f.R[a:e] {
		removed[l] = true
	}
	for _, u := range f.units {
		if len(u.r) == 0 && removed[u.at] {
			u.at = ""
			if a < len(next) {
				u.at = next[a]
			}
		}
	}
}

func (f *oState) rejectBlock(b oBlock) {
	idx := index(f.R)
	a, e := f.locate(b, idx)
	var before, merged, after []*oUnit
	for _, u := range f.units {
		us, ue := f.span(u, idx)
		empty := us == ue
		var merge, isBefore bool
		if a == e {
			merge = (empty && us == a) || (!empty && us < a && a < ue) || (!empty && ue == a && u.openEnd) || (!empty && us == a && u.openStart)
			isBefore = (empty && us < a) || (!empty && ue <= a)
		} else {
			merge = (empty && a < us && us < e) || (!empty && a < ue && us < e)
			isBefore = ue <= a
		}
		switch {
		case merge:
			merged = append(merged, u)
		case isBefore:
			before = append(before, u)
		default:
			after = append(after, u)
		}
	}
	u0, u1 := a, e
	for _, u := range merged {
		us, ue := f.span(u, idx)
		u0, u1 = min(u0, us), max(u1, ue)
	}
	nu := &oUnit{s: f.read(u0, u1, merged, idx)}
	for _, u := range merged {
		us, ue := f.span(u, idx)
		nu.openStart = nu.openStart || (us == u0 && (u.openStart || us == ue))
		nu.openEnd = nu.openEnd || (ue == u1 && (u.openEnd || us == ue))
	}
	next := append(append(append([]string(nil), f.R[:a]...), b.add...), f.R[e:]...)
	delta := len(b.add) - (e - a)
	nu.r = append([]string(nil), next[u0:u1+delta]...)
	if len(nu.r) == 0 && u0 < len(next) {
		nu.at = next[u0]
	}
	f.reanchor(a, e, next)
	f.R = next
	f.units = append([]*oUnit(nil), before...)
	if strings.Join(nu.r, "\x00") != strings.Join(nu.s, "\x00") {
		f.units = append(f.units, nu)
	}
	f.units = append(f.units, after...)
}

// want replays the ops under the decisions. It returns the wanted files and the
// kept edits whose place would be a guess (treated as rejected from there on, as a
// reject that takes them along does).
func (p *propWorld) want(status decisions) (files map[string]string, way []string, ok bool) {
	state := make([]*oState, len(p.files))
	for i := range state {
		state[i] = &oState{}
	}
	for _, op := range p.ops {
		f := state[op.file]
		st := status[op.entry.EditID]
		keep := make([]bool, len(st))
		anyKept := false
		for i, s := range st {
			keep[i] = s != Rejected
			anyKept = anyKept || keep[i]
		}
		if anyKept && p.guessOp(f, op, keep) {
			way = append(way, op.entry.EditID)
			for i := range keep {
				keep[i] = false
			}
			anyKept = false
		}
		switch op.kind {
		case "create":
			if anyKept {
				*f = oState{existsR: true, existsS: true, pathR: op.path, pathS: op.path, R: op.blocks[0].add}
				continue
			}
			f.existsR, f.pathR, f.R = true, op.path, op.blocks[0].add
			f.units = nil
			if f.existsS {
				f.units = []*oUnit{{r: append([]string(nil), f.R...), s: f.sOnly}}
				if len(f.R) == 0 {
					f.units[0].r = nil
				}
			}
			f.sOnly = nil
		case "delete":
			if anyKept {
				*f = oState{pathR: f.pathR, pathS: f.pathS}
				continue
			}
			if f.existsS {
				f.sOnly = f.S()
			}
			f.existsR, f.R, f.units = false, nil, nil
		case "move":
			f.pathR = op.path
			if anyKept {
				f.pathS = op.path
			}
		case "edit":
			for i := len(op.blocks) - 1; i >= 0; i-- {
				if keep[i] {
					f.keepBlock(op.blocks[i])
				} else if f.existsS {
					f.rejectBlock(op.blocks[i])
				} else { // S has no file: R alone changes
					idx := index(f.R)
					a, e := f.locate(op.blocks[i], idx)
					f.R = append(append(append([]string(nil), f.R[:a]...), op.blocks[i].add...), f.R[e:]...)
				}
			}
		}
	}
	files = map[string]string{}
	for _, s := range state {
		if !s.existsS {
			continue
		}
		if _, dup := files[s.pathS]; dup {
			return nil, way, false
		}
		files[s.pathS] = text(s.S())
	}
	return files, way, true
}

// guessOp reports whether keeping op's kept blocks would be a guess.
func (p *propWorld) guessOp(f *oState, op oracleOp, keep []bool) bool {
	switch op.kind {
	case "create":
		return f.existsS
	case "edit":
		if !f.existsS {
			return true
		}
		idx := index(f.R)
		for i, b := range op.blocks {
			if keep[i] && f.guess(b, idx) {
				return true
			}
		}
	}
	return false
}

// disk reads every file of the workspace outside the history store.
func (p *propWorld) disk() map[string]string {
	out := map[string]string{}
	filepath.WalkDir(p.w.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.w.dir, path)
		if d.IsDir() {
			if rel == ".mcp" {
				return filepath.SkipDir
			}
			return nil
		}
		b, _ := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return out
}

func TestPropertyRejectKeepsEveryOtherEdit(t *testing.T) {
	cases := 300
	if testing.Short() {
		cases = 60
	}
	var total propCounts
	for seed := 1; seed <= cases; seed++ {
		total.add(runProperty(t, int64(seed)))
	}
	t.Logf("%+v", total)
	if total.decided < total.refused || total.partial == 0 || total.withLater == 0 {
		t.Fatalf("the test checks little: %+v", total)
	}
}

type propCounts struct{ decided, refused, withLater, partial, cleaned int }

func (c *propCounts) add(o propCounts) {
	c.decided += o.decided
	c.refused += o.refused
	c.withLater += o.withLater
	c.partial += o.partial
	c.cleaned += o.cleaned
}

func runProperty(t *testing.T, seed int64) (n propCounts) {
	t.Helper()
	w := newWS(t)
	p := &propWorld{w: w, rng: rand.New(rand.NewSource(seed)), owner: map[string]int{}, conv: NewConversationID()}
	for i, count := 0, 4+p.rng.Intn(14); i < count; i++ {
		if p.rng.Intn(6) == 0 {
			p.conv = NewConversationID()
		}
		p.step()
	}
	status := decisions{}
	for _, op := range p.ops {
		status[op.entry.EditID] = make([]Status, max(len(op.blocks), 1))
		for i := range status[op.entry.EditID] {
			status[op.entry.EditID][i] = Pending
		}
	}
	gone := map[string]bool{} // conversations cleaned up: their edits are final
	for round := 0; round < 5; round++ {
		// A cleanup between decisions must not change what later decisions do.
		if round > 0 && p.rng.Intn(2) == 0 {
			dropped, _, err := w.store.Cleanup(context.Background(), 0)
			if err != nil {
				t.Fatalf("seed %d: cleanup: %v", seed, err)
			}
			for _, c := range dropped {
				gone[c] = true
			}
			n.cleaned += len(dropped)
		}
		to := Rejected
		if p.rng.Intn(5) < 2 {
			to = Accepted
		}
		sel := Selection{WithLater: p.rng.Intn(2) == 0}
		next := status.copy()
		for _, op := range p.ops {
			if gone[op.entry.ConversationID] || p.rng.Intn(3) != 0 {
				continue
			}
			if len(op.blocks) > 1 && op.kind == "edit" && p.rng.Intn(2) == 0 {
				for i := range op.blocks {
					if p.rng.Intn(2) == 0 {
						sel.Changes = append(sel.Changes, ChangeRef{EditID: op.entry.EditID, Block: i})
						next[op.entry.EditID][i] = to
					}
				}
				continue
			}
			sel.IDs = append(sel.IDs, op.entry.EditID)
			for i := range next[op.entry.EditID] {
				next[op.entry.EditID][i] = to
			}
		}
		if len(sel.IDs) == 0 && len(sel.Changes) == 0 {
			continue
		}
		want, way, ok := p.want(next)
		takeAlong := len(way) > 0 && to == Rejected && sel.WithLater
		if takeAlong {
			for _, id := range way {
				for i := range next[id] {
					next[id][i] = Rejected
				}
			}
			var again []string
			want, again, ok = p.want(next)
			if len(again) > 0 {
				t.Fatalf("seed %d round %d: the oracle's edits in the way are not closed: %v then %v", seed, round, way, again)
			}
		}
		before := p.disk()
		out, err := w.store.Decide(context.Background(), sel, to, false)
		if len(way) > 0 && !takeAlong {
			var conflict *ConflictError
			if !errors.As(err, &conflict) {
				t.Fatalf("seed %d round %d: want a refusal naming %v, got %v\n%s", seed, round, way, err, p.describe(next))
			}
			var named []string
			for _, e := range conflict.Later() {
				named = append(named, e.EditID)
			}
			sort.Strings(named)
			sort.Strings(way)
			if strings.Join(named, " ") != strings.Join(way, " ") {
				t.Fatalf("seed %d round %d: the refusal names %v, want %v\n%s", seed, round, named, way, p.describe(next))
			}
			if after := p.disk(); !equalMaps(before, after) {
				t.Fatalf("seed %d: a refused decision changed files", seed)
			}
			n.refused++
			continue
		}
		if !ok {
			if err == nil {
				t.Fatalf("seed %d round %d: carried out, but two files would share a path\n%s", seed, round, p.describe(next))
			}
			continue
		}
		if err != nil {
			t.Fatalf("seed %d round %d: %v\n%s", seed, round, err, p.describe(next))
		}
		if takeAlong {
			got := append([]string(nil), out.Later...)
			sort.Strings(got)
			sort.Strings(way)
			if strings.Join(got, " ") != strings.Join(way, " ") {
				t.Fatalf("seed %d round %d: took along %v, want %v", seed, round, got, way)
			}
			n.withLater++
		}
		if len(sel.Changes) > 0 {
			n.partial++
		}
		n.decided++
		status = next
		if got := p.disk(); !equalMaps(got, want) {
			t.Fatalf("seed %d round %d:\n got %q\nwant %q\n%s", seed, round, got, want, p.describe(status))
		}
		if drifts, err := w.store.Check(); err != nil || len(drifts) > 0 {
			t.Fatalf("seed %d round %d: the history disagrees with the files: %v %v", seed, round, err, drifts)
		}
		p.checkHunks(t, seed, status)
	}
	return n
}

// checkHunks compares the pending hunks with the lines pending blocks wrote.
func (p *propWorld) checkHunks(t *testing.T, seed int64, status decisions) {
	t.Helper()
	writer := map[string]ChangeRef{} // line → the pending block that wrote it
	for _, op := range p.ops {
		for i, b := range op.blocks {
			if status[op.entry.EditID][i] == Pending {
				for _, l := range b.add {
					writer[l] = ChangeRef{EditID: op.entry.EditID, Block: i}
				}
			}
		}
	}
	for rel, content := range p.disk() {
		hunks, err := p.w.store.PendingChanges(p.w.abs(rel))
		if err != nil {
			t.Fatalf("seed %d: hunks of %s: %v", seed, rel, err)
		}
		lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
		covered := map[int]ChangeRef{}
		for _, h := range hunks {
			if h.Kind == KindDelete {
				continue
			}
			for l := h.Start; l <= h.End; l++ {
				covered[l] = ChangeRef{EditID: h.EditID, Block: h.Block}
			}
		}
		for i, l := range lines {
			if content == "" {
				break
			}
			w, pending := writer[l]
			if got, ok := covered[i+1]; pending != ok || (ok && got != w) {
				t.Fatalf("seed %d: %s line %d (%s): hunk %v, want %v (pending %v)\n%+v\n%q\n%s", seed, rel, i+1, l, got, w, pending, hunks, content, p.describe(status))
			}
		}
	}
}

func (p *propWorld) describe(status decisions) string {
	var b strings.Builder
	for _, op := range p.ops {
		fmt.Fprintf(&b, "  %-8v file %d %-8s %s", status[op.entry.EditID], op.file, op.kind, short(op.entry.EditID))
		for _, bl := range op.blocks {
			fmt.Fprintf(&b, " [del=%v add=%v]", bl.del, bl.add)
		}
		fmt.Fprintf(&b, " path=%s\n", op.path)
	}
	return b.String()
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if bv, ok := b[k]; !ok || bv != a[k] {
			return false
		}
	}
	return true
}

// FuzzRejectKeepsEveryOtherEdit runs the property on seeds the fuzzer picks.
func FuzzRejectKeepsEveryOtherEdit(f *testing.F) {
	f.Add(int64(1))
	f.Add(int64(66))
	f.Fuzz(func(t *testing.T, seed int64) { runProperty(t, seed) })
}
