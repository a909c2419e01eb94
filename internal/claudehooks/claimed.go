package claudehooks

import (
	"slices"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/nvim/neovims"
)

// Who records a write of a diff the user accepted in Neovim (Claude Code's openDiff,
// which Claude Code then writes itself): the bridge that accepted it, as accepted.
// The hook defers to it: before recording, it asks the Neovims that could have
// accepted the write (those the unsaved-buffer guard asks) which of the call's
// written files their bridge recorded, and leaves those out. Anything else (no such
// Neovim, no answer within askNeovimFor, a write the bridge did not accept) the hook
// records. Only Claude Code sends openDiff to mcpdiff's IDE server.

// leaveToBridge drops from byStore the changes a bridge claims.
func leaveToBridge(byStore map[string]*commits, o Options) {
	type change struct {
		in *commits
		i  int
	}
	var asked []change
	var paths []string
	for _, g := range byStore {
		for i, ch := range g.main {
			if ch.Op == history.Edit || ch.Op == history.Create || ch.Op == history.Replace {
				asked = append(asked, change{g, i})
				paths = append(paths, ch.Path)
			}
		}
	}
	if len(asked) == 0 {
		return
	}
	addrs := neovims.Find(paths, o.Nvim, o.LockDirs)
	if len(addrs) == 0 {
		return // nobody to ask: no cost for users without an mcpdiff Neovim
	}
	writes := make([]neovims.Written, len(asked))
	for n, c := range asked {
		ch := c.in.main[c.i]
		writes[n] = neovims.Written{Path: ch.Path, Hash: edit.FileHash(ch.After)}
	}
	claimed := neovims.AskClaimed(addrs, writes, askNeovimFor)
	// Backwards: a commit's later changes go first, so the indexes still hold.
	for n := len(asked) - 1; n >= 0; n-- {
		if c := asked[n]; claimed[n] {
			c.in.main = slices.Delete(c.in.main, c.i, c.i+1)
		}
	}
	for k, g := range byStore {
		if len(g.main) == 0 && len(g.edited) == 0 {
			delete(byStore, k)
		}
	}
}
