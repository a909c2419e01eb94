package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/shell"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
)

func runAccept(args []string, stdout, stderr io.Writer) int {
	return runDecide(history.Accepted, args, stdout, stderr)
}

func runReject(args []string, stdout, stderr io.Writer) int {
	return runDecide(history.Rejected, args, stdout, stderr)
}

// runDecide is `mcpdiff accept` and `mcpdiff reject`.
func runDecide(to history.Status, args []string, stdout, stderr io.Writer) int {
	name := "accept"
	if to == history.Rejected {
		name = "reject"
	}
	a, err := parseFor(name, args)
	switch {
	case err != nil:
	case len(a.operands) == 0 && a.conv == "" && a.file == "":
		err = errors.New("say which edits: an ID, --conv ID or --file PATH [--lines A-B]")
	case a.lines != "" && a.file == "":
		err = errors.New("--lines needs --file PATH: they are lines of that file")
	}
	var ranges []history.LineRange
	if err == nil && a.lines != "" {
		ranges, err = history.ParseLineRanges(a.lines)
	}
	var ids []string
	var changes []history.ChangeRef
	for i := 0; err == nil && i < len(a.operands); i++ {
		op := a.operands[i]
		id, block, isChange := strings.Cut(op, ":")
		if !isChange {
			ids = append(ids, op)
			continue
		}
		n, perr := strconv.Atoi(block)
		if perr != nil || n < 1 || id == "" {
			err = fmt.Errorf("bad change %q: write ID:N, where N is the number `mcpdiff show ID` gives the change", op)
		}
		changes = append(changes, history.ChangeRef{EditID: id, Block: n - 1})
	}
	if err != nil {
		return usageError(stderr, name, err)
	}
	store, err := openStore(a.workspace)
	if err != nil {
		return decideFailed(stdout, stderr, a, err)
	}
	sel := history.Selection{IDs: ids, Changes: changes, Conversation: a.conv, Lines: ranges, WithLater: a.withLater}
	if a.file != "" {
		sel.File = absFile(a.file)
	}
	buffers := guardBuffers(store, stderr)
	out, err := store.Decide(context.Background(), sel, to, a.force)
	warn(stderr, out.Warnings)
	if external := (*history.ExternalChangeError)(nil); errors.As(err, &external) && a.workspace != "" {
		external.Workspace = store.Workspace()
	}
	if err != nil {
		return decideFailed(stdout, stderr, a, throughLink(err, a.file, sel.File))
	}
	buffers.reload(out.Files)
	if a.json {
		_ = json.NewEncoder(stdout).Encode(map[string]any{"ok": true, "edits": nonNil(out.Edits), "later": nonNil(out.Later),
			"changes": out.Blocks, "files": nonNil(out.Files)})
		return exitOK
	}
	past := name + "ed"
	switch {
	case len(out.Edits) == 0 && len(out.Files) > 0: // --force put a recorded state back
		fmt.Fprintf(stdout, "the edits are already %s; the files were put back as recorded\n", past)
	case len(out.Edits) == 0 && a.file != "":
		fmt.Fprintf(stdout, "nothing to do: %s has no pending edits\n", termsafe.Escape(store.Rel(sel.File)))
	case len(out.Edits) == 0:
		fmt.Fprintf(stdout, "nothing to do: the edits are already %s\n", past)
	case out.Blocks > 0 && len(out.Later) == 0:
		fmt.Fprintf(stdout, "%s %s of %s\n", past, plural(out.Blocks, "change"), editsText(out.Edits))
	default:
		fmt.Fprintf(stdout, "%s %s\n", past, editsText(out.Edits))
	}
	if len(out.Later) > 0 {
		fmt.Fprintf(stdout, "with the later %s in the way: %s\n", plural(len(out.Later), "edit"), termsafe.Escape(strings.Join(out.Later, ", ")))
	}
	for _, f := range out.Files {
		// A rejected create, or the source of an accepted move, is gone from disk:
		// "rebuilt" would send the user looking for it.
		verb := "rebuilt"
		if _, err := os.Lstat(f); errors.Is(err, fs.ErrNotExist) {
			verb = "removed"
		}
		fmt.Fprintf(stdout, "%s %s\n", verb, termsafe.Escape(store.Rel(f)))
	}
	return exitOK
}

func editsText(ids []string) string {
	if len(ids) == 1 {
		return "edit " + termsafe.Escape(ids[0])
	}
	return plural(len(ids), "edit")
}

// withLaterCommand is the command that rejects what a refused reject selected
// together with the later edits in its way.
func withLaterCommand(a *cliArgs) string {
	cmd := append([]string{"mcpdiff", "reject"}, a.operands...)
	for _, f := range []struct{ name, value string }{{"--conv", a.conv}, {"--file", a.file}, {"--lines", a.lines}, {"--workspace", a.workspace}} {
		if f.value != "" {
			cmd = append(cmd, f.name, f.value)
		}
	}
	return shell.Command(append(cmd, "--with-later")...)
}

// decideFailed reports a refused accept/reject: the difference first when files
// changed outside mcpdiff, then the one-line reason.
func decideFailed(stdout, stderr io.Writer, a *cliArgs, err error) int {
	kind := "error"
	msg := err.Error()
	var diff strings.Builder
	var files, later []string
	command := ""
	var conflict *history.ConflictError
	var external *history.ExternalChangeError
	var unsaved *unsavedError
	switch {
	case errors.As(err, &unsaved):
		kind = "unsaved"
		files = unsaved.paths
	case errors.As(err, &conflict):
		kind = "conflict"
		for _, c := range conflict.Conflicts {
			files = appendNew(files, c.Path)
		}
		for _, e := range conflict.Later() {
			later = append(later, e.EditID)
		}
		if conflict.Rejecting {
			command = withLaterCommand(a)
			msg = conflict.Summary() + "; reject them too (" + command + ") or decide on them first"
		}
	case errors.As(err, &external):
		kind = "external_change"
		for _, d := range external.Drifts {
			files = append(files, d.Path)
			diff.WriteString(d.Diff)
		}
	case errors.Is(err, history.ErrNoStore):
		kind = "no_store"
	case errors.Is(err, history.ErrUnknownID):
		kind = "unknown_id"
	case errors.Is(err, history.ErrNoPendingChange):
		kind = "no_change"
	case errors.Is(err, history.ErrForeign):
		kind = "foreign"
	case errors.Is(err, history.ErrInconsistent):
		kind = "inconsistent"
	case errors.Is(err, history.ErrInvalidEntry):
		kind = "invalid"
	}
	if a != nil && a.json {
		_ = json.NewEncoder(stdout).Encode(map[string]any{"ok": false, "kind": kind, "message": msg, "diff": diff.String(),
			"files": nonNil(files), "later": nonNil(later), "command": command})
		return exitRefused
	}
	if diff.Len() > 0 {
		tty := isTerminal(stdout)
		writeDiff(stdout, "changes made outside mcpdiff:", diff.String(), tty && os.Getenv("NO_COLOR") == "", tty)
	}
	return refused(stderr, errors.New(msg))
}
