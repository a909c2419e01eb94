package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/reviewlist"
	"github.com/mcpdiff/mcpdiff/internal/shell"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Exit statuses of the history commands.
const (
	exitOK      = 0
	exitRefused = 1 // conflict, external change, unknown id: one line on stderr
	exitUsage   = 2
)

// cliArgs are the flags and operands of one history command. Flags may stand
// before or after the operands.
type cliArgs struct {
	operands  []string
	json      bool
	review    bool
	force     bool
	withLater bool
	yes       bool
	lines     string
	conv      string
	file      string
	status    string
	workspace string
	olderThan string
}

// valueFlags take an argument (--flag VALUE or --flag=VALUE).
var valueFlags = map[string]func(*cliArgs) *string{
	"conv":       func(a *cliArgs) *string { return &a.conv },
	"file":       func(a *cliArgs) *string { return &a.file },
	"status":     func(a *cliArgs) *string { return &a.status },
	"workspace":  func(a *cliArgs) *string { return &a.workspace },
	"older-than": func(a *cliArgs) *string { return &a.olderThan },
	"lines":      func(a *cliArgs) *string { return &a.lines },
}

func parseCLI(args []string, allowed ...string) (*cliArgs, error) {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	a := &cliArgs{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			a.operands = append(a.operands, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			a.operands = append(a.operands, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !ok[name] {
			return nil, fmt.Errorf("unknown flag %s", arg)
		}
		switch name {
		case "json":
			a.json = true
		case "force":
			a.force = true
		case "with-later":
			a.withLater = true
		case "review":
			a.review = true
		case "yes":
			a.yes = true
		default:
			if !hasValue {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				value = args[i]
			}
			*valueFlags[name](a) = value
		}
	}
	return a, nil
}

// openStore finds the store: --workspace, else the nearest .mcp/edit_history above
// the working directory.
func openStore(dir string) (*history.Store, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		if dir, err = history.Find(wd); err != nil {
			return nil, err
		}
	}
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return history.OpenExisting(root)
}

// absFile turns a --file argument into the absolute real path the log records.
func absFile(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

func runStatus(args []string, stdout, stderr io.Writer) int {
	a, err := parseCLI(args, "json", "review", "conv", "file", "status", "workspace")
	if err != nil || len(a.operands) > 0 {
		return usageError(stderr, "status", err, "mcpdiff status [--conv ID] [--file PATH] [--status pending|accepted|rejected] [--json] [--workspace DIR]")
	}
	if a.review { // the rows of Neovim's review list, when its bridge does not run
		return reviewRows(a.workspace, stdout, stderr)
	}
	if a.status != "" && a.status != "pending" && a.status != "accepted" && a.status != "rejected" {
		return usageError(stderr, "status", fmt.Errorf("--status must be pending, accepted or rejected, not %q", a.status), "")
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
		fmt.Fprintln(stdout, "no recorded edits")
		return exitOK
	}
	rows := [][]string{{"EDIT", "TIME", "STATUS", "OP", "CONVERSATION", "PATH"}}
	titled := false // the conversations' titles (their prompts), a last column when any is known
	for _, e := range list.Entries {
		rows = append(rows, []string{e.EditID, reviewlist.LocalTime(e.Timestamp), e.StatusText(), string(e.Operation), e.ConversationID, entryPath(store, e)})
		titled = titled || e.ConversationTitle != ""
	}
	if titled {
		rows[0] = append(rows[0], "TITLE")
		for i, e := range list.Entries {
			rows[i+1] = append(rows[i+1], e.ConversationTitle)
		}
	}
	writeTable(stdout, rows)
	return exitOK
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

func runShow(args []string, stdout, stderr io.Writer) int {
	a, err := parseCLI(args, "workspace")
	if err != nil || len(a.operands) != 1 {
		return usageError(stderr, "show", err, "mcpdiff show ID [--workspace DIR]")
	}
	store, err := openStore(a.workspace)
	if err != nil {
		return refused(stderr, err)
	}
	if err := store.Foreign(); err != nil {
		warn(stderr, []string{err.Error()})
	}
	entries, err := store.Resolve(a.operands[0])
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
		header := fmt.Sprintf("edit %s  %s %s  %s  (%s #%d, %s, %s)", e.EditID, e.Operation, entryPath(store, e), e.StatusText(), e.ConversationID, e.ToolCallIndex, e.ToolName, reviewlist.LocalTime(e.Timestamp))
		if e.ConversationTitle != "" {
			header += "\nprompt: " + e.ConversationTitle
		}
		if len(e.HunkStatus) > 0 {
			header += "\n" + hunkStates(e.HunkStatus)
		}
		diff, err := store.Diff(e)
		if err != nil {
			return refused(stderr, err)
		}
		writeDiff(stdout, termsafe.Escape(header), diff, color, tty)
	}
	return exitOK
}

// runDecide is `mcpdiff accept` and `mcpdiff reject`.
func runDecide(to history.Status, args []string, stdout, stderr io.Writer) int {
	name := "accept"
	if to == history.Rejected {
		name = "reject"
	}
	flags := []string{"json", "force", "conv", "file", "lines", "workspace"}
	if to == history.Rejected {
		flags = append(flags, "with-later")
	}
	a, err := parseCLI(args, flags...)
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
	var hunks []history.HunkRef
	for i := 0; err == nil && i < len(a.operands); i++ {
		op := a.operands[i]
		id, block, isHunk := strings.Cut(op, ":")
		if !isHunk {
			ids = append(ids, op)
			continue
		}
		n, perr := strconv.Atoi(block)
		if perr != nil || n < 1 || id == "" {
			err = fmt.Errorf("bad change block %q: write ID:N, N counting the edit's changes from 1", op)
		}
		hunks = append(hunks, history.HunkRef{EditID: id, Block: n - 1})
	}
	if err != nil {
		extra := ""
		if to == history.Rejected {
			extra = " [--with-later]"
		}
		return usageError(stderr, name, err, "mcpdiff "+name+" (ID[:N]... | --conv ID | --file PATH [--lines A-B[,C-D]])"+extra+" [--force] [--json] [--workspace DIR]")
	}
	store, err := openStore(a.workspace)
	if err != nil {
		return decideFailed(stdout, stderr, a, err)
	}
	sel := history.Selection{IDs: ids, Hunks: hunks, Conversation: a.conv, Lines: ranges, WithLater: a.withLater}
	if a.file != "" {
		sel.File = absFile(a.file)
	}
	buffers := guardBuffers(store, stderr)
	out, err := store.Decide(context.Background(), sel, to, a.force)
	warn(stderr, out.Warnings)
	if err != nil {
		return decideFailed(stdout, stderr, a, err)
	}
	buffers.reload(out.Files)
	if a.json {
		_ = json.NewEncoder(stdout).Encode(map[string]any{"ok": true, "edits": nonNil(out.Edits), "later": nonNil(out.Later),
			"hunks": out.Blocks, "files": nonNil(out.Files)})
		return exitOK
	}
	past := name + "ed"
	switch {
	case len(out.Edits) == 0 && len(out.Files) > 0: // --force put a recorded state back
		fmt.Fprintf(stdout, "the edits are already %s; the files were put back as recorded\n", past)
	case len(out.Edits) == 0:
		fmt.Fprintf(stdout, "nothing to do: the edits are already %s\n", past)
	case out.Blocks > 0 && len(out.Later) == 0:
		fmt.Fprintf(stdout, "%s %s of %s\n", past, plural(out.Blocks, "change block"), editsText(out.Edits))
	default:
		fmt.Fprintf(stdout, "%s %s\n", past, editsText(out.Edits))
	}
	if len(out.Later) > 0 {
		fmt.Fprintf(stdout, "with the later %s in the way: %s\n", plural(len(out.Later), "edit"), strings.Join(out.Later, ", "))
	}
	for _, f := range out.Files {
		fmt.Fprintf(stdout, "rebuilt %s\n", termsafe.Escape(store.Rel(f)))
	}
	return exitOK
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func editsText(ids []string) string {
	if len(ids) == 1 {
		return "edit " + ids[0]
	}
	return plural(len(ids), "edit")
}

// hunkStates says which change blocks of an edit decided in part are where.
func hunkStates(states []history.Status) string {
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = fmt.Sprintf("%d %s", i+1, st)
	}
	return "change blocks: " + strings.Join(parts, ", ") + " (rejected blocks are not in the file)"
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
			msg += "; to reject them together: " + command
		}
	case errors.As(err, &external):
		kind = "external_change"
		for _, d := range external.Drifts {
			files = append(files, d.Path)
			diff.WriteString(d.Diff)
		}
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

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// runCleanup is `mcpdiff cleanup`. It drops only when told how old (--older-than)
// or told yes (--yes: every resolved conversation); otherwise it lists what it
// would drop and drops nothing, since what it drops cannot be brought back.
func runCleanup(args []string, stdout, stderr io.Writer) int {
	a, err := parseCLI(args, "older-than", "yes", "workspace")
	if err != nil || len(a.operands) > 0 {
		return usageError(stderr, "cleanup", err, "mcpdiff cleanup [--older-than DURATION | --yes] [--workspace DIR]")
	}
	var age time.Duration
	if a.olderThan != "" {
		if age, err = parseAge(a.olderThan); err != nil {
			return usageError(stderr, "cleanup", err, "")
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

// writeTable prints rows in columns two spaces apart, the last column unpadded.
// pipeSize is what a Linux pipe holds: output is written a pipe's worth at a time,
// not in the 4 KB pieces of a default bufio.Writer (`status --json` of 10,000 edits
// is 6 MB).
const pipeSize = 64 << 10

func writeTable(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			r[i] = termsafe.Escape(cell) // a name cannot forge a row or reach the terminal
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	for _, r := range rows {
		for i, cell := range r {
			io.WriteString(w, cell)
			if i < len(r)-1 {
				io.WriteString(w, strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		io.WriteString(w, "\n")
	}
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

func entryPath(store *history.Store, e *history.Entry) string {
	if e.SourcePath != nil {
		return termsafe.Escape(store.Rel(*e.SourcePath)) + " -> " + termsafe.Escape(store.Rel(e.FilePath))
	}
	return termsafe.Escape(store.Rel(e.FilePath))
}

// writeDiff prints a header and a diff, coloured like git when color is set. The
// lines that name files have their control characters escaped; so do the content
// lines on a terminal (tty), which a hostile file could otherwise drive. Piped, the
// content stays byte for byte, a patch to apply.
func writeDiff(w io.Writer, header, diff string, color, tty bool) {
	const bold, red, green, cyan, reset = "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[0m"
	if color {
		fmt.Fprintln(w, bold+header+reset)
	} else {
		fmt.Fprintln(w, header)
	}
	for _, line := range strings.SplitAfter(diff, "\n") {
		if line == "" {
			continue
		}
		text, nl := strings.CutSuffix(line, "\n")
		names := strings.HasPrefix(text, "+++") || strings.HasPrefix(text, "---") || strings.HasPrefix(text, "rename ") || strings.HasPrefix(text, "diff ")
		if names || tty {
			text = termsafe.Escape(text)
		}
		switch {
		case !color:
		case names:
			text = bold + text + reset
		case strings.HasPrefix(text, "+"):
			text = green + text + reset
		case strings.HasPrefix(text, "-"):
			text = red + text + reset
		case strings.HasPrefix(text, "@@"):
			text = cyan + text + reset
		}
		io.WriteString(w, text)
		if nl {
			io.WriteString(w, "\n")
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func warn(w io.Writer, warnings []string) {
	for _, m := range warnings {
		fmt.Fprintf(w, "mcpdiff: warning: %s\n", termsafe.Escape(m))
	}
}

// inform prints what is worth knowing but wrong with nothing (history.Notices.Info).
func inform(w io.Writer, info []string) {
	for _, m := range info {
		fmt.Fprintf(w, "mcpdiff: info: %s\n", termsafe.Escape(m))
	}
}

// exitOnPanic turns a panic of a history command into exit status 1 and one line
// saying so: exit status 2 means bad usage, and scripts read it that way.
func exitOnPanic(code *int) {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "mcpdiff: internal error: %s (a bug in mcpdiff: please report it with the command that caused it)\n", oneLine(fmt.Sprint(r)))
		*code = exitRefused
	}
}

func refused(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "mcpdiff: %s\n", termsafe.Escape(oneLine(err.Error())))
	return exitRefused
}

func usageError(stderr io.Writer, cmd string, err error, usage string) int {
	if err != nil {
		fmt.Fprintf(stderr, "mcpdiff %s: %v\n", cmd, err)
	}
	if usage != "" {
		fmt.Fprintf(stderr, "usage: %s\n", usage)
	}
	return exitUsage
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
