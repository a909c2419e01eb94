package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/reviewlist"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
)

func runStatus(args []string, stdout, stderr io.Writer) int {
	a, err := parseFor("status", args)
	if err != nil {
		return usageError(stderr, "status", err)
	}
	if a.health {
		if a.conv != "" || a.file != "" || a.status != "" || a.review {
			return usageError(stderr, "status", errors.New("--health tells of the whole store: it takes only --json and --workspace"))
		}
		return runHealth(a, stdout, stderr)
	}
	if a.review { // the rows of Neovim's review list, when its bridge does not run
		return reviewRows(a.workspace, stdout, stderr)
	}
	if a.status != "" && a.status != "pending" && a.status != "accepted" && a.status != "rejected" {
		return usageError(stderr, "status", fmt.Errorf("--status must be pending, accepted or rejected, not %q", a.status))
	}
	store, err := openStore(a.workspace)
	if err != nil {
		return refused(stderr, err)
	}
	out := bufio.NewWriterSize(stdout, pipeSize) // a pipe's worth per write, not 4 KB
	defer out.Flush()
	stdout = out
	f := history.Filter{Conversation: a.conv, Status: history.Status(a.status)}
	if a.file != "" {
		f.File = absFile(a.file)
	}
	list, err := store.Review(context.Background(), f)
	if err != nil {
		return refused(stderr, err)
	}
	wd, _ := os.Getwd()
	notices := store.Notices(list, wd)
	warn(stderr, notices.Warnings)
	inform(stderr, notices.Info)
	if a.json {
		store.FillCounts(list.Entries)
		if err := history.WriteJSON(stdout, list.Entries); err != nil {
			return refused(stderr, err)
		}
		return exitOK
	}
	if len(list.Entries) == 0 {
		fmt.Fprintln(stdout, nothingListed(store, a, f))
		return exitOK
	}
	writeTable(stdout, statusRows(store, list))
	return exitOK
}

// statusWidth is the width a status row keeps to with ordinary paths: the title is
// shortened to what is left of it (but never below minTitle characters).
const (
	statusWidth = 100
	minTitle    = 16
)

// statusRows are the rows `mcpdiff status` prints: short ids as Neovim shows them,
// and the conversation's title last, when any is known.
func statusRows(store *history.Store, list *history.Listing) [][]string {
	convs := list.ShortConversationIDs()
	rows := [][]string{{"EDIT", "TIME", "STATUS", "OP", "TOOL", "+/−", "CONVERSATION", "PATH"}}
	titled := false
	for _, e := range list.Entries {
		added, removed, _ := store.Counts(e)
		rows = append(rows, []string{shortID(e.EditID), shortTime(e.Timestamp), e.StatusText(), string(e.Operation), e.ToolName,
			fmt.Sprintf("+%d −%d", added, removed), convs[e.ConversationID], entryPath(store, e)})
		titled = titled || e.ConversationTitle != ""
	}
	if !titled {
		return rows
	}
	used := 0
	for col := range rows[0] {
		width := 0
		for _, r := range rows {
			width = max(width, utf8.RuneCountInString(termsafe.Escape(r[col])))
		}
		used += width + 2
	}
	room := max(minTitle, statusWidth-used)
	rows[0] = append(rows[0], "TITLE")
	for i, e := range list.Entries {
		rows[i+1] = append(rows[i+1], shorten(termsafe.Escape(e.ConversationTitle), room))
	}
	return rows
}

// nothingListed says that nothing matched, and what was asked for.
func nothingListed(store *history.Store, a *cliArgs, f history.Filter) string {
	what := "recorded edits"
	if f.Status != "" {
		what = string(f.Status) + " edits"
	}
	if f.File != "" {
		what += " of " + termsafe.Escape(store.Rel(f.File))
	}
	if f.Conversation != "" {
		what += " in conversation " + termsafe.Escape(f.Conversation)
	}
	return "no " + what
}

// shortID is an edit id as people read it: its first 8 characters.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// shortTime is a log timestamp as "01-02 15:04", local time.
func shortTime(ts string) string {
	t := reviewlist.LocalTime(ts) // 2006-01-02 15:04:05
	if len(t) == 19 {
		return t[5:16]
	}
	return t
}

// shorten cuts s to n characters, the last of them an ellipsis.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// reviewRows prints the rows of Neovim's review list as JSON.
func reviewRows(dir string, stdout, stderr io.Writer) int {
	wd, _ := os.Getwd()
	store, err := openStore(dir)
	if errors.Is(err, history.ErrNoStore) {
		if dir == "" {
			dir = wd
		}
		return printJSON(stdout, stderr, reviewlist.NoHistory(dir))
	}
	if err != nil {
		return refused(stderr, err)
	}
	list, err := reviewlist.Build(store, wd)
	if err != nil {
		return refused(stderr, err)
	}
	return printJSON(stdout, stderr, list)
}

func printJSON(stdout, stderr io.Writer, list *reviewlist.List) int {
	if err := json.NewEncoder(stdout).Encode(list); err != nil {
		return refused(stderr, err)
	}
	return exitOK
}
