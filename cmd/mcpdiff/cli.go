package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/shell"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// The parts every history command shares: its flags, the store it works on, and how
// it prints tables, diffs, warnings and refusals.

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
	health    bool
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

// parseFor parses the arguments of the history command name, which takes the flags
// its help lists and as many ids as it says.
func parseFor(name string, args []string) (*cliArgs, error) {
	c := lookupCommand(name)
	a, err := parseCLI(args, c.flags...)
	switch {
	case err != nil:
		return nil, err
	case c.operands == 0 && len(a.operands) == 1 && a.file == "" && slices.Contains(c.flags, "file"):
		return nil, fmt.Errorf("say which file with --file: `%s`", shell.Command("mcpdiff", name, "--file", a.operands[0]))
	case c.operands == 0 && len(a.operands) > 0:
		return nil, fmt.Errorf("unexpected argument %q", a.operands[0])
	case c.operands == 1 && len(a.operands) == 0:
		return nil, errors.New("say which edit or conversation: its id, or the first 4 or more characters of it (see `mcpdiff status`)")
	case c.operands == 1 && len(a.operands) > 1:
		return nil, fmt.Errorf("takes one id, not %d", len(a.operands))
	}
	return a, nil
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
		case "health":
			a.health = true
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

// throughLink adds to err, when it says that the file given (as --file) has no
// history, that the path leads there through a symlink: the history holds files by
// their real path, and a folder that became a link makes the name another file.
func throughLink(err error, given, resolved string) error {
	if !errors.Is(err, history.ErrNoHistory) && !errors.Is(err, history.ErrNoPendingChange) {
		return err
	}
	if lexical, _ := filepath.Abs(given); lexical != resolved {
		return fmt.Errorf("%w (%s leads there through a symlink)", err, given)
	}
	return err
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
	return linkFile(abs)
}

// linkFile is the absolute path of p with its folders resolved but not p itself:
// the path a file of the history has when it became a symlink.
func linkFile(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
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
		// Empty cells at the end of a row (an edit without a title) are not padded:
		// a row ends with its last text, not with spaces.
		last := len(r) - 1
		for last > 0 && r[last] == "" {
			last--
		}
		for i, cell := range r[:last+1] {
			io.WriteString(w, cell)
			if i < last {
				io.WriteString(w, strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		io.WriteString(w, "\n")
	}
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
	fmt.Fprintf(stderr, "mcpdiff: %s\n", oneLine(err.Error()))
	return exitRefused
}

// oneLine is a message on one line, as it is otherwise: its control characters
// (a newline in a file name) escaped, not squeezed, so that a name or a command in it
// stays exact.
func oneLine(s string) string { return termsafe.Escape(strings.TrimSpace(s)) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
