package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/idelock"
	"github.com/mcpdiff/mcpdiff/internal/neovims"
)

// bufferGuard keeps a decision from the shell (or from Neovim, which runs the CLI)
// from writing a file that a Neovim running mcpdiff holds with unsaved changes,
// and has the Neovims that answered reload their buffers of the files it wrote. A
// Neovim that does not answer in time does not block the decision (neovims.Check's
// rule for the user's own decision): the user at the shell asked for it, and
// Neovim will warn before saving over the new file.
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
	checked := neovims.Check(context.Background(), paths, neovims.Asking{Own: os.Getenv("NVIM"), LockDirs: idelock.Dirs()})
	for _, err := range checked.Silent {
		warn(g.stderr, []string{fmt.Sprintf("%v; going on without its answer (Neovim warns before saving over a file changed on disk)", err)})
	}
	for _, addr := range checked.Answered {
		g.answered = appendNew(g.answered, addr)
	}
	if len(checked.Unsaved) == 0 {
		return nil
	}
	unsaved := &unsavedError{paths: checked.Unsaved}
	for _, f := range checked.Unsaved {
		unsaved.names = append(unsaved.names, g.store.Rel(f))
	}
	return unsaved
}

// reload has the Neovims that answered re-read their unmodified buffers of files.
func (g *bufferGuard) reload(files []string) {
	if len(files) == 0 || len(g.answered) == 0 {
		return
	}
	neovims.Reload(g.answered, files)
}
