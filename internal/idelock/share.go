package idelock

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Several Neovims running mcpdiff in one project: Claude Code started with --ide
// (outside Neovim, so without CLAUDE_CODE_SSE_PORT) connects only when exactly one
// lock file has a workspace folder that holds its cwd, and connects to none when two
// do. So the Neovims share their folders out: each folder is held by one of them,
// and the others list, in its place, a path inside it (the file they have open)
// that holds no cwd, which keeps them in /ide's list without being chosen by --ide.
//
// The rule, which every Neovim works out alike from the lock files: a folder is held
// by the Neovim with the outermost folder holding it, and of those with that same
// folder, by the one started or focused last. Two folders where one holds the other
// cannot both be held by different Neovims (a cwd inside the inner one would find
// both), so the outer one wins: it also serves every cwd the inner one does not.

// Claim is what a lock file says of a Neovim running mcpdiff, for sharing folders.
type Claim struct {
	Folders []string // its workspace, symlinks resolved (Content.NvimWorkspace)
	Active  int64    // Content.NvimActive
	PID     int
	Port    int // from the lock file's name: two claims are never equal
}

// Claims are the claims of the live Neovims running mcpdiff among files, except the
// one whose lock file is at own.
func Claims(files []File, own string) []Claim {
	var out []Claim
	for _, f := range files {
		if f.Path == own || len(f.NvimWorkspace) == 0 || !Alive(f.PID) {
			continue
		}
		port, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(f.Path), ".lock"))
		out = append(out, Claim{Folders: f.NvimWorkspace, Active: f.NvimActive, PID: f.PID, Port: port})
	}
	return out
}

// newer reports whether c was started or focused after o (the pid, then the port,
// decide a tie: every Neovim must come to the same answer).
func (c Claim) newer(o Claim) bool {
	if c.Active != o.Active {
		return c.Active > o.Active
	}
	if c.PID != o.PID {
		return c.PID > o.PID
	}
	return c.Port > o.Port
}

// Hold says, for each of me's folders, whether me holds it (see above), and
// whether any other Neovim's folders overlap me's (one holds, or is, another).
func Hold(me Claim, others []Claim) (held []bool, shared bool) {
	held = make([]bool, len(me.Folders))
	for i, f := range me.Folders {
		held[i] = true
		for _, o := range others {
			for _, g := range o.Folders {
				switch {
				case g == f:
					shared = true
					held[i] = held[i] && !o.newer(me)
				case within(f, g):
					shared = true
					held[i] = false
				case within(g, f):
					shared = true
				}
			}
		}
	}
	return held, shared
}

// within reports whether path lies strictly inside folder.
func within(path, folder string) bool {
	folder = strings.TrimSuffix(folder, string(filepath.Separator))
	return strings.HasPrefix(path, folder+string(filepath.Separator)) && len(path) > len(folder)+1
}
