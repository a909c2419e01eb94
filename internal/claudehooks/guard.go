package claudehooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/nvim"
)

// The unsaved-buffer guard: before Claude Code writes a file, every Neovim that might
// have it open is asked whether its buffer has unsaved changes; if one has, the
// write is denied. Those Neovims are found as nvim.Neovims finds them: the one whose
// terminal runs Claude Code ($NVIM), and every running Neovim with mcpdiff whose
// workspace folders hold the file.
//
// A Neovim that does not answer within askNeovimFor (busy, or waiting at a prompt)
// might have unsaved changes: the write is denied then too, asking to retry, as the
// file tools of `mcpdiff serve` do. A Neovim that has exited is not asked.

// guard returns a deny when the write must not happen.
func guard(ctx context.Context, path string, o Options) (Result, bool) {
	addrs := nvim.Neovims([]string{path}, o.Nvim, o.LockDirs)
	if len(addrs) == 0 {
		return Result{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, askNeovimFor)
	defer cancel()
	abs := history.RealPath(path)
	answers := make([]answer, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() { answers[i] = ask(ctx, addr, abs) })
	}
	wg.Wait()
	var unsure error
	for _, a := range answers {
		if a.modified {
			return deny(fmt.Sprintf("%s has unsaved changes in Neovim, so it was not written. "+
				"Ask the user to save (:w) or discard (:e!) them in Neovim, then try again.", path)), true
		}
		if a.err != nil && unsure == nil {
			unsure = a.err
		}
	}
	if unsure != nil {
		return deny(fmt.Sprintf("%s was not written: %v. Neovim may hold unsaved changes of it; "+
			"ask the user to answer Neovim, then try again.", path, unsure)), true
	}
	return Result{}, false
}

type answer struct {
	modified bool
	err      error
}

// ask asks the Neovim at addr whether path has unsaved changes there. A Neovim that
// cannot be reached has exited (its lock file or $NVIM outlived it): no.
func ask(ctx context.Context, addr, path string) answer {
	b, err := nvim.DialContext(ctx, addr)
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
	return answer{modified: modified, err: err}
}
