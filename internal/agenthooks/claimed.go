package agenthooks

import (
	"context"
	"slices"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/neovims"
)

// Who records a write of a diff the user accepted in Neovim (Claude Code's openDiff,
// which Claude Code then writes itself): the bridge that accepted it, as accepted,
// with the bytes written. The hook defers to it: before recording, it asks the
// bridges of the Neovims that could have accepted the write (those the
// unsaved-buffer guard asks) which of the call's written files they recorded
// (neovims.Claimed), and leaves those out. Anything else (no such Neovim, a write the bridge did not
// accept) the hook records. A bridge that does not answer in time claims nothing:
// the hook records the write, with a note that it may then be in the history
// twice. Only Claude Code sends openDiff to mcpdiff's IDE server.

// leaveToBridge drops from byStore the changes a bridge claims, and returns the
// notes of the Neovims that did not answer.
func leaveToBridge(ctx context.Context, byStore map[string]*commits, o Options) []string {
	type change struct {
		in *commits
		i  int
	}
	var asked []change
	for _, g := range byStore {
		for i, ch := range g.main {
			if ch.Op == history.Edit || ch.Op == history.Create || ch.Op == history.Replace {
				asked = append(asked, change{g, i})
			}
		}
	}
	if len(asked) == 0 {
		return nil
	}
	writes := make([]neovims.Written, len(asked))
	for n, c := range asked {
		ch := c.in.main[c.i]
		writes[n] = neovims.Written{Path: ch.Path, Hash: edit.FileHash(ch.After)}
	}
	// Nobody to ask (no lock file of a Neovim that may hold them): nothing is
	// dialled, no cost for users without an mcpdiff Neovim.
	claimed, silent := neovims.Claimed(ctx, writes, o.Nvim, o.LockDirs)
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
	var notes []string
	for _, err := range silent {
		notes = append(notes, err.Error()+"; recorded here: if it did, the write is in the history twice (reject the hook's pending entry)")
	}
	return notes
}
