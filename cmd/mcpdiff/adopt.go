package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/history"
)

// runAdopt is `mcpdiff adopt [--yes]`: it shows what a foreign store holds and, with
// --yes or the user's yes at a terminal, makes it this user's (history.Store.Adopt).
// Without a terminal and without --yes it only shows.
func runAdopt(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a, err := parseFor("adopt", args)
	if err != nil {
		return usageError(stderr, "adopt", err)
	}
	store, err := openStore(a.workspace)
	if err != nil {
		return refused(stderr, err)
	}
	foreign := store.Foreign()
	if foreign == nil {
		fmt.Fprintf(stdout, "the edit history in %s is yours already; nothing to do\n", printable(store.Workspace()))
		return exitOK
	}
	var fe *history.ForeignError
	if !errors.As(foreign, &fe) {
		return refused(stderr, foreign)
	}
	in, err := store.Inspect()
	if err != nil {
		return refused(stderr, err)
	}
	showInspection(stdout, store, fe, in)
	switch {
	case a.yes:
	case stdinTerminal(stdin) && isTerminal(stdout):
		fmt.Fprint(stdout, "Adopt it, so that mcpdiff records into it and decides on it? [y/N] ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
			fmt.Fprintln(stdout, "not adopted; nothing was changed")
			return exitRefused
		}
	default:
		fmt.Fprintln(stdout, "nothing was changed; to adopt it, run `mcpdiff adopt --yes` there")
		return exitOK
	}
	if err := store.Adopt(); err != nil {
		return refused(stderr, err)
	}
	fmt.Fprintf(stdout, "adopted: the edit history in %s is yours now\n", printable(store.Workspace()))
	return exitOK
}

// showInspection prints what the store holds.
func showInspection(w io.Writer, store *history.Store, fe *history.ForeignError, in *history.Inspection) {
	fmt.Fprintf(w, "The edit history in %s is not yours: %s.\n", printable(store.Workspace()), fe.Reason)
	fmt.Fprintf(w, "It holds %s in %s, of %s:\n", plural(in.Entries, "edit"), plural(len(in.Conversations), "conversation"), plural(len(in.Files), "file"))
	for _, f := range in.Files {
		fmt.Fprintf(w, "  %s\n", printable(f))
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintln(w, title)
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", printable(l))
		}
	}
	section("Invalid entries (no decision acts on them):", in.Invalid)
	section("Files whose history does not agree with itself (no decision rebuilds them):", in.Inconsistent)
	section("Not read:", in.Warnings)
	if in.Plan {
		fmt.Fprintln(w, "It holds the plan of an interrupted decision (journal/plan.json): the next command sets it aside, unapplied.")
	}
	if len(in.Invalid) == 0 && len(in.Inconsistent) == 0 && len(in.Warnings) == 0 {
		fmt.Fprintln(w, "No entry is invalid.")
	}
}

// stdinTerminal reports whether r is a terminal the user can answer at.
func stdinTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminal(f)
}

// printable is s with control characters escaped, so that a name cannot move the
// cursor, ring the bell or forge a line.
func printable(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			q := strconv.QuoteToGraphic(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}
