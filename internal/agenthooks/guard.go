package agenthooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/neovims"
)

// The unsaved-buffer guard: before an agent writes a file, every Neovim that might
// have it open is asked whether its buffer has unsaved changes (neovims.Check); if
// one has, the write is denied, and that Neovim says so to its user. A Neovim that
// does not answer in time might have unsaved changes: the write is denied then too,
// asking to retry, as the file tools of `mcpdiff serve` do (neovims.Check's rule for
// an agent's write). The same guard serves every agent.

// guard returns a deny when the write must not happen, naming the file.
func guard(ctx context.Context, paths []string, o Options, a *Agent) (r Result, refused bool) {
	asking := neovims.Asking{Own: o.Nvim, LockDirs: o.LockDirs, ForAgent: true, Tell: func(unsaved []string) string {
		return fmt.Sprintf("mcpdiff: %s wanted to write %s, which has unsaved changes here: the write was refused. "+
			"Save (:w) or discard (:e!) them, then ask %s again.", a.Label, strings.Join(unsaved, ", "), a.Label)
	}}
	checked := neovims.Check(ctx, paths, asking)
	if len(checked.Unsaved) > 0 {
		return deny(fmt.Sprintf("%s has unsaved changes in Neovim, so it was not written. "+
			"Ask the user to save (:w) or discard (:e!) them in Neovim, then try again.", checked.Unsaved[0])), true
	}
	if checked.Refusal != nil {
		return deny(fmt.Sprintf("%s was not written: %v. Neovim may hold unsaved changes of it; "+
			"ask the user to answer Neovim, then try again.", strings.Join(paths, ", "), checked.Refusal)), true
	}
	return Result{}, false
}
