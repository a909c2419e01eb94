package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/reviewlist"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

func runShow(args []string, stdout, stderr io.Writer) int {
	a, err := parseFor("show", args)
	if err != nil {
		return usageError(stderr, "show", err)
	}
	store, err := openStore(a.workspace)
	if err != nil {
		return refused(stderr, err)
	}
	if err := store.Foreign(); err != nil {
		warn(stderr, []string{err.Error()})
	}
	entries, err := store.Named(a.operands[0])
	if err != nil {
		return refused(stderr, err)
	}
	tty := isTerminal(stdout)
	color := tty && os.Getenv("NO_COLOR") == ""
	out := bufio.NewWriterSize(stdout, pipeSize)
	defer out.Flush()
	stdout = out
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		diff, err := store.Diff(e)
		if err != nil {
			return refused(stderr, err)
		}
		writeDiff(stdout, showHeader(store, e), numberChanges(diff, e.BlockStatus), color, tty)
	}
	return exitOK
}

// showHeader is what `show` says of an edit before its diff, each name escaped.
func showHeader(store *history.Store, e *history.Entry) string {
	// The tool call is counted from 1 in the conversation, as people count them
	// (tool_call_index is 0-based).
	lines := []string{fmt.Sprintf("edit %s  %s %s  %s  (conversation %s, call %d, %s, %s)", termsafe.Escape(e.EditID), termsafe.Escape(string(e.Operation)), entryPath(store, e),
		termsafe.Escape(e.StatusText()), termsafe.Escape(e.ConversationID), e.ToolCallIndex+1, termsafe.Escape(e.ToolName), reviewlist.LocalTime(e.Timestamp))}
	if e.ConversationTitle != "" {
		lines = append(lines, "prompt: "+termsafe.Escape(e.ConversationTitle))
	}
	if len(e.BlockStatus) > 0 {
		lines = append(lines, changeStates(e.BlockStatus))
	}
	return strings.Join(lines, "\n")
}

// changeStates says where each change of an edit decided in part stands.
func changeStates(states []history.Status) string {
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = fmt.Sprintf("[%d] %s", i+1, st)
	}
	return "changes: " + strings.Join(parts, ", ") + " (a rejected change is not in the file)"
}

// numberChanges writes, after each hunk's @@ line, the numbers of the changes in it
// ([1], [2]…: the blocks of changed lines, counted through the edit as `accept ID:N`
// and `reject ID:N` count them), with the status of those not pending. The @@ line
// may hold text after its second @@, so the diff still applies as a patch.
func numberChanges(diff string, states []history.Status) string {
	files, err := udiff.Parse(diff)
	if err != nil || len(files) != 1 {
		return diff
	}
	var perHunk []int
	for _, h := range files[0].Hunks {
		d := udiff.FileDiff{Hunks: []udiff.Hunk{h}}
		perHunk = append(perHunk, len(d.Blocks()))
	}
	var b strings.Builder
	hunk, change := 0, 0
	for _, line := range strings.SplitAfter(diff, "\n") {
		if !strings.HasPrefix(line, "@@") || hunk >= len(perHunk) {
			b.WriteString(line)
			continue
		}
		text, nl := strings.CutSuffix(line, "\n")
		b.WriteString(text)
		for range perHunk[hunk] {
			change++
			fmt.Fprintf(&b, " [%d]", change)
			if change <= len(states) && states[change-1] != history.Pending {
				fmt.Fprintf(&b, " %s", states[change-1])
			}
		}
		if nl {
			b.WriteString("\n")
		}
		hunk++
	}
	return b.String()
}
