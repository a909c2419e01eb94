package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/bridge/ide/lockfile"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/nvim/neovims"
)

// askNeovimsFor bounds the wait for the Neovims' answers about unsaved buffers. A
// Neovim that does not answer in time (busy, or waiting at a prompt) does not block
// the decision: the user at the shell asked for it, and Neovim will warn before
// saving over the new file.
const askNeovimsFor = time.Second

// bufferGuard keeps a decision from the shell (or from Neovim, which runs the CLI)
// from writing a file that a Neovim running mcpdiff holds with unsaved changes,
// and has the Neovims that answered reload their buffers of the files it wrote.
type bufferGuard struct {
	store    *history.Store
	stderr   io.Writer
	answered []string // the Neovims that answered
}

// guardBuffers sets store's write guard.
func guardBuffers(store *history.Store, stderr io.Writer) *bufferGuard {
	g := &bufferGuard{store: store, stderr: stderr}
	store.SetWriteGuard(g.check)
	return g
}

// unsavedError refuses a decision over files with unsaved changes in Neovim.
type unsavedError struct {
	paths []string // absolute
	names []string // as messages show them: relative to the workspace
}

func (e *unsavedError) Error() string {
	verb := "has"
	if len(e.names) > 1 {
		verb = "have"
	}
	return fmt.Sprintf("%s %s unsaved changes in Neovim: save (:w) or discard (:e!) them in Neovim first, then decide again; nothing was changed",
		strings.Join(e.names, ", "), verb)
}

func (g *bufferGuard) check(paths []string) error {
	addrs := neovims.Find(paths, os.Getenv("NVIM"), lockfile.Dirs())
	if len(addrs) == 0 {
		return nil
	}
	unsaved := &unsavedError{}
	for _, a := range neovims.AskUnsaved(addrs, paths, askNeovimsFor) {
		if a.Err != nil {
			warn(g.stderr, []string{fmt.Sprintf("%v; going on without its answer (Neovim warns before saving over a file changed on disk)", a.Err)})
			continue
		}
		g.answered = append(g.answered, a.Addr)
		for _, f := range a.Unsaved {
			if len(appendNew(unsaved.paths, f)) > len(unsaved.paths) {
				unsaved.paths = append(unsaved.paths, f)
				unsaved.names = append(unsaved.names, g.store.Rel(f))
			}
		}
	}
	if len(unsaved.paths) > 0 {
		return unsaved
	}
	return nil
}

// reload has the Neovims that answered re-read their unmodified buffers of files.
func (g *bufferGuard) reload(files []string) {
	if len(files) == 0 || len(g.answered) == 0 {
		return
	}
	neovims.ReloadIn(g.answered, files, askNeovimsFor)
}
