package claudehooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/nvim/neovims"
)

// The unsaved-buffer guard: before Claude Code writes a file, every Neovim that might
// have it open is asked whether its buffer has unsaved changes; if one has, the
// write is denied. Those Neovims are found as neovims.Find finds them: the one whose
// terminal runs Claude Code ($NVIM), and every running Neovim with mcpdiff whose
// workspace folders hold the file or lie in the workspace of its edit history.
//
// A Neovim that does not answer within askNeovimFor (busy, or waiting at a prompt)
// might have unsaved changes: the write is denied then too, asking to retry, as the
// file tools of `mcpdiff serve` do. A Neovim that has exited is not asked.
// The same guard serves every agent (the comments say Claude Code for short).

// guard returns a deny when the write must not happen, naming the file; the Neovim
// that holds the unsaved changes says so too.
func guard(ctx context.Context, paths []string, o Options, a *Agent) (r Result, refused bool) {
	type question struct{ addr, path string }
	var qs []question
	for _, p := range paths {
		for _, addr := range neovims.Find([]string{p}, o.Nvim, o.LockDirs) {
			qs = append(qs, question{addr, p})
		}
	}
	if len(qs) == 0 {
		return Result{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, askNeovimFor)
	defer cancel()
	answers := make([]answer, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil { // a panic here must not end the process with exit 2
					answers[i] = answer{err: fmt.Errorf("internal error: %v", p)}
				}
			}()
			answers[i] = ask(ctx, q.addr, history.RealPath(q.path), a)
		})
	}
	wg.Wait()
	var unsure error
	unsurePath := ""
	for i, ans := range answers {
		if ans.modified {
			return deny(fmt.Sprintf("%s has unsaved changes in Neovim, so it was not written. "+
				"Ask the user to save (:w) or discard (:e!) them in Neovim, then try again.", qs[i].path)), true
		}
		if ans.err != nil && unsure == nil {
			unsure, unsurePath = ans.err, qs[i].path
		}
	}
	if unsure != nil {
		return deny(fmt.Sprintf("%s was not written: %v. Neovim may hold unsaved changes of it; "+
			"ask the user to answer Neovim, then try again.", unsurePath, unsure)), true
	}
	return Result{}, false
}

type answer struct {
	modified bool
	err      error
}

// ask asks the Neovim at addr whether path has unsaved changes there, and when it
// has, tells that Neovim's user that a's write was refused. A Neovim that cannot be
// reached has exited (its lock file or $NVIM outlived it): no.
func ask(ctx context.Context, addr, path string, a *Agent) answer {
	b, err := neovims.DialContext(ctx, addr)
	if err != nil {
		return answer{}
	}
	defer b.Close()
	if d, has := ctx.Deadline(); has {
		b.Timeout = time.Until(d)
	}
	modified, err := b.Modified(path)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer from Neovim within %v on whether it has unsaved changes (is it busy, or waiting at a prompt?)", askNeovimFor)
	}
	if modified {
		_ = b.Notify(fmt.Sprintf("mcpdiff: %s wanted to write %s, which has unsaved changes here: the write was refused. "+
			"Save (:w) or discard (:e!) them, then ask %s again.", a.Label, path, a.Label))
	}
	return answer{modified: modified, err: err}
}
