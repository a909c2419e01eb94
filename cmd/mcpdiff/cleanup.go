package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/shell"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
)

// runCleanup is `mcpdiff cleanup`. It drops only when told how old (--older-than)
// or told yes (--yes: every resolved conversation); otherwise it lists what it
// would drop and drops nothing, since what it drops cannot be brought back.
func runCleanup(args []string, stdout, stderr io.Writer) int {
	a, err := parseFor("cleanup", args)
	if err != nil {
		return usageError(stderr, "cleanup", err)
	}
	var age time.Duration
	if a.olderThan != "" {
		if age, err = parseAge(a.olderThan); err != nil {
			return usageError(stderr, "cleanup", err)
		}
	}
	store, err := openStore(a.workspace)
	if err != nil {
		return refused(stderr, err)
	}
	apply := a.olderThan != "" || a.yes
	cleanup := store.Cleanup
	if !apply {
		cleanup = store.CleanupPreview
	}
	dropped, kept, err := cleanup(context.Background(), age)
	warn(stderr, store.TakeNotes())
	if err != nil {
		return refused(stderr, err)
	}
	if !apply {
		return cleanupPreview(store, a, dropped, kept, stdout, stderr)
	}
	fmt.Fprintf(stdout, "dropped %d conversation(s)", len(dropped))
	if len(kept) > 0 {
		fmt.Fprintf(stdout, "; kept %d (pending edits, too recent, or sharing files with those)", len(kept))
	}
	fmt.Fprintln(stdout)
	for _, c := range dropped {
		fmt.Fprintf(stdout, "  %s\n", termsafe.Escape(c))
	}
	return exitOK
}

// cleanupPreview says what `cleanup --yes` would drop: each conversation with its
// edits and files, and the command that drops them.
func cleanupPreview(store *history.Store, a *cliArgs, dropped, kept []string, stdout, stderr io.Writer) int {
	if len(dropped) == 0 {
		fmt.Fprintf(stdout, "nothing to drop: no conversation is fully resolved and free of files that pending edits need (%d kept)\n", len(kept))
		return exitOK
	}
	list, err := store.List(history.Filter{})
	if err != nil {
		return refused(stderr, err)
	}
	edits := map[string]int{}
	files := map[string][]string{}
	for _, e := range list.Entries {
		edits[e.ConversationID]++
		files[e.ConversationID] = appendNew(files[e.ConversationID], entryPath(store, e))
	}
	fmt.Fprintf(stdout, "would drop %d conversation(s), every edit in them accepted or rejected; nothing was dropped:\n", len(dropped))
	rows := [][]string{{"  CONVERSATION", "EDITS", "FILES"}}
	for _, c := range dropped {
		rows = append(rows, []string{"  " + c, strconv.Itoa(edits[c]), strings.Join(files[c], ", ")})
	}
	writeTable(stdout, rows)
	if len(kept) > 0 {
		fmt.Fprintf(stdout, "would keep %d (pending edits, or sharing files with those)\n", len(kept))
	}
	cmd := []string{"mcpdiff", "cleanup", "--yes"}
	if a.workspace != "" {
		cmd = append(cmd, "--workspace", a.workspace)
	}
	fmt.Fprintf(stdout, "to drop them (their diffs and checkpoints go too, for good), run `%s`; `--older-than 7d` instead of `--yes` drops only those older than that\n", shell.Command(cmd...))
	return exitOK
}

// parseAge reads a Go duration, or a number of days ("7d") or weeks ("2w").
func parseAge(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			if v, err := strconv.ParseFloat(n, 64); err == nil && v >= 0 {
				return time.Duration(v * float64(unit)), nil
			}
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad --older-than %q: use e.g. 12h, 7d or 2w", s)
	}
	return d, nil
}
