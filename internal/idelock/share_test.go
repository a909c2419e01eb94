package idelock

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestHold(t *testing.T) {
	older := Claim{Folders: []string{"/p"}, Active: 1, PID: 10, Port: 1}
	newer := Claim{Folders: []string{"/p"}, Active: 2, PID: 9, Port: 2}
	for _, c := range []struct {
		name   string
		me     Claim
		others []Claim
		held   []bool
		shared bool
	}{
		{name: "alone", me: older, held: []bool{true}},
		{name: "same folder, started earlier", me: older, others: []Claim{newer}, held: []bool{false}, shared: true},
		{name: "same folder, started later", me: newer, others: []Claim{older}, held: []bool{true}, shared: true},
		{name: "same time: the pid decides", me: Claim{Folders: []string{"/p"}, Active: 1, PID: 11}, others: []Claim{older}, held: []bool{true}, shared: true},
		{name: "inside another's folder", me: Claim{Folders: []string{"/p/sub"}, Active: 9}, others: []Claim{older}, held: []bool{false}, shared: true},
		{name: "holding another's folder", me: older, others: []Claim{{Folders: []string{"/p/sub"}, Active: 9}}, held: []bool{true}, shared: true},
		{name: "a sibling", me: older, others: []Claim{{Folders: []string{"/pp"}, Active: 9}}, held: []bool{true}},
		{name: "cwd and an LSP root", me: Claim{Folders: []string{"/p/sub", "/p"}, Active: 3}, others: []Claim{older},
			held: []bool{false, true}, shared: true},
	} {
		held, shared := Hold(c.me, c.others)
		if !reflect.DeepEqual(held, c.held) || shared != c.shared {
			t.Errorf("%s: held %v shared %v, want %v %v", c.name, held, shared, c.held, c.shared)
		}
	}
}

// Whatever folders several Neovims have, a cwd that one of their folders holds is
// held by exactly one Neovim (so `claude --ide` there connects to it), and every
// Neovim comes to the same answer from the others' lock files.
func TestHoldFindsExactlyOne(t *testing.T) {
	tree := []string{"/a", "/a/b", "/a/b/c", "/a/d", "/e", "/e/f"}
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	for round := 0; round < 2000; round++ {
		claims := make([]Claim, 1+r.IntN(4))
		for i := range claims {
			n := 1 + r.IntN(2)
			for range n {
				claims[i].Folders = append(claims[i].Folders, tree[r.IntN(len(tree))])
			}
			claims[i].Active, claims[i].PID, claims[i].Port = int64(r.IntN(3)), 100+r.IntN(3), 1000+i
		}
		holders := make([][]string, len(claims))
		for i, me := range claims {
			others := append(append([]Claim(nil), claims[:i]...), claims[i+1:]...)
			held, _ := Hold(me, others)
			for j, f := range me.Folders {
				if held[j] {
					holders[i] = append(holders[i], f)
				}
			}
		}
		for _, cwd := range append(tree, "/a/b/c/x", "/z") {
			covered, found := false, 0
			for i, c := range claims {
				for _, f := range c.Folders {
					covered = covered || f == cwd || within(cwd, f)
				}
				for _, f := range holders[i] {
					if f == cwd || within(cwd, f) {
						found++
						break
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[covered]; found != want {
				t.Fatalf("seed %d, round %d: claims %+v hold %v; a claude in %s finds %d Neovims, want %d",
					seed, round, claims, holders, cwd, found, want)
			}
		}
	}
}

func TestClaimsSkipOwnDeadAndOtherEditors(t *testing.T) {
	dir := t.TempDir()
	live := os.Getpid()
	write := func(port string, c Content) string {
		p := filepath.Join(dir, port+".lock")
		if err := Write(p, c); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := write("1001", Content{PID: live, NvimWorkspace: []string{"/p"}})
	write("1002", Content{PID: live, NvimWorkspace: []string{"/p"}, NvimActive: 7})
	write("1003", Content{PID: live, WorkspaceFolders: []string{"/p"}, IDEName: "Visual Studio Code"}) // not mcpdiff's
	write("1004", Content{PID: 1 << 30, NvimWorkspace: []string{"/p"}})                                // dead
	got := Claims(Read([]string{dir}), own)
	if want := []Claim{{Folders: []string{"/p"}, Active: 7, PID: live, Port: 1002}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("claims %+v, want %+v", got, want)
	}
}
