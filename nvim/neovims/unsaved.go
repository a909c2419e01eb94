package neovims

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiff/mcpdiff/bridge/ide/lockfile"
	"github.com/mcpdiff/mcpdiff/internal/history"
)

// The Neovims that may hold a user's files with unsaved changes are found the same
// way by everything about to write those files outside Neovim (an agent's hook, a
// decision from the shell): the one whose terminal runs the writer ($NVIM), and
// every running Neovim with mcpdiff whose workspace folders hold one of the files
// or lie in the workspace of one's edit history, found through the lock files of
// their IDE servers, which carry Neovim's RPC address.

// Find lists the RPC addresses of the Neovims to ask about paths: own (the
// $NVIM of a process run inside a Neovim, or "") and every live Neovim whose lock
// file, in lockDirs, names a workspace folder that holds one of paths, or that lies
// in the workspace of a path's edit history (a Neovim started in a subfolder of the
// project edits the project's other files too).
func Find(paths []string, own string, lockDirs []string) []string {
	var addrs []string
	seen := map[string]bool{}
	add := func(a string) {
		if a != "" && !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	add(own)
	var real, workspaces []string
	for _, lf := range lockfile.Read(lockDirs) {
		if lf.NvimServer == "" || !lockfile.ProcessAlive(lf.PID) {
			continue
		}
		if real == nil { // only when there is a Neovim to ask
			real = make([]string, len(paths))
			for i, p := range paths {
				real[i] = history.RealPath(p)
				if ws, err := history.Find(filepath.Dir(real[i])); err == nil {
					workspaces = append(workspaces, history.RealPath(ws))
				}
			}
		}
		if holdsAny(lf.WorkspaceFolders, real, workspaces) {
			add(lf.NvimServer)
		}
	}
	return addrs
}

// holdsAny says whether one of folders holds one of paths or lies in one of
// workspaces.
func holdsAny(folders, paths, workspaces []string) bool {
	in := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) }
	for _, f := range folders {
		f = strings.TrimSuffix(history.RealPath(f), string(filepath.Separator))
		for _, p := range paths {
			if in(p, f) {
				return true
			}
		}
		for _, w := range workspaces {
			if in(f, strings.TrimSuffix(w, string(filepath.Separator))) {
				return true
			}
		}
	}
	return false
}

// UnsavedAnswer is what one Neovim said about a set of files.
type UnsavedAnswer struct {
	Addr    string
	Unsaved []string // the files it holds with unsaved changes
	// Err says it did not answer (in time, or at all while connected). A Neovim that
	// cannot be reached has exited: it holds nothing, and Err is nil.
	Err error
}

// AskUnsaved asks the Neovims at addrs, all at once, which of paths (absolute) they
// hold with unsaved changes, waiting for each at most limit.
func AskUnsaved(addrs, paths []string, limit time.Duration) []UnsavedAnswer {
	out := make([]UnsavedAnswer, len(addrs))
	each(addrs, limit, func(i int, b *Buffers, err error) {
		out[i] = UnsavedAnswer{Addr: addrs[i]}
		if err == nil {
			out[i].Unsaved, err = b.Unsaved(paths)
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			out[i].Err = fmt.Errorf("the Neovim at %s did not answer within %v whether it has unsaved changes of %s (is it busy, or waiting at a prompt?)",
				addrs[i], limit, strings.Join(paths, ", "))
		case err != nil && b != nil:
			out[i].Err = fmt.Errorf("the Neovim at %s: %w", addrs[i], err)
		}
	})
	return out
}

// ReloadIn has the Neovims at addrs re-read their unmodified buffers of paths, all
// at once, waiting for each at most limit. Best effort: a Neovim that does not
// answer still reloads them once it hears of the store's change.
func ReloadIn(addrs, paths []string, limit time.Duration) {
	each(addrs, limit, func(_ int, b *Buffers, err error) {
		if err == nil {
			_ = b.Reload(paths...)
		}
	})
}

// each connects to every Neovim at addrs at once and runs fn with the connection
// (nil, and the error, when there is none), every call bounded by limit. A Neovim
// that cannot be reached has exited: its error is not a deadline.
func each(addrs []string, limit time.Duration, fn func(i int, b *Buffers, err error)) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			b, err := DialContext(ctx, addr)
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				fn(i, nil, err)
				return
			}
			defer b.Close()
			b.Timeout = max(time.Until(deadline(ctx)), time.Millisecond)
			fn(i, b, nil)
		})
	}
	wg.Wait()
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
