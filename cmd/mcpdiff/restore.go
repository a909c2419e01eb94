package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/shell"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
)

// runRestore is `mcpdiff restore --file PATH [--yes]`: the file back to what its
// history says it holds. Without --yes it only shows what that would discard.
func runRestore(args []string, stdout, stderr io.Writer) int {
	a, err := parseFor("restore", args)
	if err == nil && (len(a.operands) > 0 || a.file == "") {
		err = errors.New("say which file: --file PATH")
	}
	if err != nil {
		return usageError(stderr, "restore", err)
	}
	store, err := openStore(a.workspace)
	if err != nil {
		return refused(stderr, err)
	}
	path := absFile(a.file)
	buffers := guardBuffers(store, stderr)
	out, err := store.Restore(context.Background(), path, a.yes)
	// A file of the history that is now a symlink is named by the link, not by the
	// file it leads to: restoring it is then refused, saying why.
	if link := linkFile(a.file); errors.Is(err, history.ErrNoHistory) && link != path {
		if again, errAgain := store.Restore(context.Background(), link, a.yes); !errors.Is(errAgain, history.ErrNoHistory) {
			if again != nil {
				again.Warnings = append(out.Warnings, again.Warnings...)
			}
			out, err, path = again, errAgain, link
		}
	}
	if out != nil {
		warn(stderr, out.Warnings)
	}
	if err != nil {
		return refused(stderr, throughLink(err, a.file, path))
	}
	name := termsafe.Escape(store.Rel(path))
	tty := isTerminal(stdout)
	color := tty && os.Getenv("NO_COLOR") == ""
	switch {
	case out.Diff == "":
		fmt.Fprintf(stdout, "%s holds its recorded state: nothing to restore\n", name)
	case !a.yes:
		writeDiff(stdout, fmt.Sprintf("restoring %s would discard these changes, made since its last recorded state:", name), out.Diff, color, tty)
		cmd := []string{"mcpdiff", "restore", "--file", a.file, "--yes"}
		if a.workspace != "" {
			cmd = append(cmd, "--workspace", a.workspace)
		}
		fmt.Fprintf(stdout, "nothing was changed; to discard them, run `%s`\n", shell.Command(cmd...))
	default:
		writeDiff(stdout, "discarded these changes:", out.Diff, color, tty)
		buffers.reload(out.Files)
		fmt.Fprintf(stdout, "restored %s to its recorded state\n", name)
	}
	return exitOK
}
