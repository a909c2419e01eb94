package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/hookcmd"
)

// command is one command of the binary: how it runs, and what `mcpdiff help
// COMMAND` and `mcpdiff COMMAND --help` say about it. The history commands' flags
// are parsed from the same list their help prints (historyFlags).
type command struct {
	name     string
	summary  string   // one line, for `mcpdiff help`
	usage    []string // the synopses, without "mcpdiff "
	about    string   // what it does, in a paragraph or two
	flags    []string // names in historyFlags, in the order shown
	operands int      // how many ids a history command takes: 0, 1, or -1 for any number
	flagSet  func() *flag.FlagSet
	history  bool // reads a whole store once and exits (see run)
	byHand   bool // false: run by the plugin or by an agent, not typed
	run      func(args []string) int
	examples []string
}

// flagDoc is a history command's flag: the value it takes ("" for a switch) and what
// it does.
type flagDoc struct{ arg, help string }

var historyFlags = map[string]flagDoc{
	"conv":       {"ID", "the edits of the conversation ID (a conversation id, or its first characters)"},
	"file":       {"PATH", "the edits of the file PATH"},
	"lines":      {"A-B[,C-D]", "with --file: only the pending changes touching these lines of the file as it is now"},
	"status":     {"S", "only edits of this status: pending, accepted or rejected"},
	"with-later": {"", "also reject the later edits that stand in the way (a plain reject names them and changes nothing)"},
	"force":      {"", "go on although a file changed outside mcpdiff since its last recorded edit; that change is lost (see `mcpdiff restore`)"},
	"json":       {"", "print JSON for scripts instead of text"},
	"review":     {"", "print the rows of Neovim's review list as JSON (the plugin uses it)"},
	"health":     {"", "the store's facts instead of its edits: where, format, writable, counts, what is wrong"},
	"older-than": {"AGE", "drop only resolved conversations older than AGE: 12h, 7d, 2w"},
	"yes":        {"", "do it without asking (without it, the command only shows what it would do)"},
	"workspace":  {"DIR", "the workspace whose history to use (default: the nearest .mcp/edit_history above the working directory)"},
}

// commands in the order `mcpdiff help` lists them.
var commands []*command

func init() {
	commands = []*command{
		{name: "status", summary: "list recorded edits (--health: the store's own facts)", history: true, byHand: true,
			usage: []string{"status [--conv ID] [--file PATH] [--status S] [--json] [--workspace DIR]", "status --health [--json] [--workspace DIR]"},
			about: "One row per recorded edit: its id (the first 8 characters; 4 or more are enough wherever an id is asked for), " +
				"when it was made, its status, the operation, the agent's tool, the lines it added and removed, " +
				"its conversation (shortened the same way) and the file; and the conversation's prompt where it is known. " +
				"A file whose bytes differ from what its history says is named on stderr, with the ways out. " +
				"With --health it tells of the store instead, as :checkhealth mcpdiff shows it: where it is, its " +
				"format, whether it is writable, how many edits it holds and how many are pending, and its warnings " +
				"and notes; --json prints that as one object (workspace, store, format, writable, edits, pending, " +
				"warnings, info, and error when the history cannot be read, with exit status 1).",
			flags:    []string{"conv", "file", "status", "json", "health", "review", "workspace"},
			examples: []string{"mcpdiff status --status pending", "mcpdiff status --file src/main.go", "mcpdiff status --health"},
			run:      func(args []string) int { return runStatus(args, os.Stdout, os.Stderr) }},
		{name: "show", summary: "show the diff of an edit, or of every edit of a conversation", history: true, byHand: true,
			usage: []string{"show ID [--workspace DIR]"}, operands: 1,
			about: "ID is an edit id or a conversation id, or the first characters of one. Each change of an edit " +
				"(a block of changed lines) is numbered [1], [2]… in its hunk's @@ line, so that `accept ID:N` and " +
				"`reject ID:N` can pick one; a rejected change is marked so. In colour on a terminal.",
			flags: []string{"workspace"},
			run:   func(args []string) int { return runShow(args, os.Stdout, os.Stderr) }},
		{name: "accept", summary: "accept edits (a rejected one is put back)", history: true, byHand: true,
			operands: -1,
			usage:    []string{"accept ID[:N]... [flags]", "accept --conv ID [flags]", "accept --file PATH [--lines A-B] [flags]"},
			about: "Marks edits accepted. The file of a pending edit is left as it is; an edit that was rejected is put " +
				"back, its file rebuilt with it. ID:N is the edit's change N (`mcpdiff show ID` numbers them). " +
				"Refused, changing nothing, while a Neovim running mcpdiff holds one of the files with unsaved changes.",
			flags:    []string{"conv", "file", "lines", "force", "json", "workspace"},
			examples: []string{"mcpdiff accept 3f2a9c1b", "mcpdiff accept --conv claude_1k2m"},
			run:      func(args []string) int { return runAccept(args, os.Stdout, os.Stderr) }},
		{name: "reject", summary: "reject edits and rebuild their files without them", history: true, byHand: true,
			operands: -1,
			usage:    []string{"reject ID[:N]... [flags]", "reject --conv ID [flags]", "reject --file PATH [--lines A-B] [flags]"},
			about: "Marks edits rejected and rebuilds their files as if they had never been made, keeping every other " +
				"edit, later ones included. Refused, changing nothing, where the result would be a guess (a later " +
				"kept edit changed the same lines: they are named, and --with-later rejects them too), and while a " +
				"Neovim running mcpdiff holds one of the files with unsaved changes.",
			flags:    []string{"conv", "file", "lines", "with-later", "force", "json", "workspace"},
			examples: []string{"mcpdiff reject 3f2a9c1b", "mcpdiff reject 3f2a9c1b:2", "mcpdiff reject --file src/main.go --lines 18-22"},
			run:      func(args []string) int { return runReject(args, os.Stdout, os.Stderr) }},
		{name: "cleanup", summary: "drop resolved conversations (asks for --yes or --older-than)", history: true, byHand: true,
			usage: []string{"cleanup [--older-than AGE | --yes] [--workspace DIR]"},
			about: "Drops the logs, diffs and checkpoints of conversations whose edits are all accepted or rejected, " +
				"where no other edit needs them. Without --older-than or --yes it only lists what it would drop.",
			flags: []string{"older-than", "yes", "workspace"},
			run:   func(args []string) int { return runCleanup(args, os.Stdout, os.Stderr) }},
		{name: "restore", summary: "put a file back to its recorded state (asks for --yes)", history: true, byHand: true,
			usage: []string{"restore --file PATH [--yes] [--workspace DIR]"},
			about: "Puts back the bytes the history says PATH holds, discarding the changes made to it since its last " +
				"recorded edit. Without --yes it only shows the diff it would discard.",
			flags: []string{"file", "yes", "workspace"},
			run:   func(args []string) int { return runRestore(args, os.Stdout, os.Stderr) }},
		{name: "adopt", summary: "make an edit history you did not make yours", history: true, byHand: true,
			usage: []string{"adopt [--yes] [--workspace DIR]"},
			about: "A history mcpdiff did not make for you on this machine (one a repository brought, or one from " +
				"mcpdiff 0.2.0) is never decided on, replayed or recorded into. adopt shows what it holds and, " +
				"after you say yes (or with --yes), signs it as yours.",
			flags: []string{"yes", "workspace"},
			run:   func(args []string) int { return runAdopt(args, os.Stdin, os.Stdout, os.Stderr) }},
		{name: "serve", summary: "the file tools over MCP (stdio, or --http 127.0.0.1:PORT)", byHand: true,
			usage: []string{"serve [--root DIR]... [--toolsets LIST] [--http 127.0.0.1:PORT] [flags]"},
			about: "An MCP server with the file tools, for any MCP client: it starts it (stdio), or connects to " +
				"--http with the bearer token printed on start. Every change is recorded in the workspace's history.",
			flagSet: func() *flag.FlagSet { fs, _ := serveFlags(io.Discard); return fs },
			run:     func(args []string) int { return runServe(args, os.Stderr) }},
		{name: "hooks", summary: "install, uninstall or show an agent's hooks", byHand: true,
			usage: []string{"hooks install|uninstall|status|settings [--agent NAME|all] [--scope SCOPE] [--json]"},
			about: hooksAbout,
			run:   func(args []string) int { return runHooks(args, os.Stdout, os.Stderr) }},
		{name: "version", summary: "print the version and the commit it was built from (or that it is a release build)", byHand: true,
			usage: []string{"version"},
			run:   runVersion},
		{name: "help", summary: "explain mcpdiff or one of its commands", byHand: true,
			usage: []string{"help [COMMAND]"},
			about: "Without COMMAND, lists the commands; with one, explains it as `mcpdiff COMMAND --help` does: " +
				"its usage, what it does, its flags and examples.",
			run: func(args []string) int { return runHelp(args, os.Stdout, os.Stderr) }},
		{name: "hook", summary: "an agent's hook handler (run by the agent)",
			usage: []string{"hook [--agent NAME] [--event EVENT]"},
			about: "Reads one hook event of an agent as JSON on stdin, records the write it announces and refuses " +
				"one to a file with unsaved changes in Neovim. NAME is claude (the default), codex, gemini, " +
				"opencode, copilot or cursor; EVENT names the event where the agent's JSON does not (Copilot CLI). " +
				"Installed by `mcpdiff hooks install`, never run by hand.",
			// hookcmd's init runs it before main starts, unless asked for help.
			run: func(args []string) int { return hookcmd.Run(time.Now(), args, os.Stdin, os.Stdout, os.Stderr) }},
		{name: "nvim", summary: "the process the Neovim plugin starts (never by hand)",
			usage: []string{"nvim"},
			about: "Started by the Lua plugin as an RPC job: it serves Claude Code's IDE protocol for that Neovim " +
				"and follows the edit histories of its files.",
			run: runNvim},
	}
}

// lookupCommand is the command called name, or nil.
func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// wantsHelp reports whether args ask for help (-h or --help before any --).
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// runHelp is `mcpdiff help [COMMAND]`.
func runHelp(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		printUsage(stdout)
		return exitOK
	case len(args) == 1 && lookupCommand(args[0]) != nil:
		lookupCommand(args[0]).printHelp(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "mcpdiff help: no command %q; `mcpdiff help` lists them\n", strings.Join(args, " "))
	return exitUsage
}

// printUsage lists the commands, those typed by hand first.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "mcpdiff keeps every edit an agent makes, to accept or reject later.\n\nusage: mcpdiff COMMAND [flags]\n\ncommands:\n")
	for _, byHand := range []bool{true, false} {
		if !byHand {
			fmt.Fprint(w, "\nrun by the plugin and the agents, not by hand:\n")
		}
		for _, c := range commands {
			if c.byHand == byHand {
				fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
			}
		}
	}
	fmt.Fprint(w, "\n`mcpdiff help COMMAND` or `mcpdiff COMMAND --help` explains one; exit status 0 done, 1 refused (one line on stderr says why), 2 bad usage.\n")
}

// printHelp explains c: its synopses, what it does, one line per flag, examples.
func (c *command) printHelp(w io.Writer) {
	for i, u := range c.usage {
		lead := "usage: "
		if i > 0 {
			lead = "       "
		}
		fmt.Fprintf(w, "%smcpdiff %s\n", lead, u)
	}
	switch {
	case strings.Contains(c.about, "\n"): // laid out already
		fmt.Fprintf(w, "\n%s", c.about)
	case c.about != "":
		fmt.Fprintf(w, "\n%s\n", wrap(c.about, 88))
	}
	var lines [][2]string
	for _, name := range c.flags {
		if name == "review" { // for the plugin: works, but not shown
			continue
		}
		d := historyFlags[name]
		lines = append(lines, [2]string{strings.TrimSpace("--" + name + " " + d.arg), d.help})
	}
	if c.flagSet != nil {
		c.flagSet().VisitAll(func(f *flag.Flag) {
			arg, help := flag.UnquoteUsage(f)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
				help += " (default " + f.DefValue + ")"
			}
			lines = append(lines, [2]string{strings.TrimSpace("--" + f.Name + " " + strings.ToUpper(arg)), help})
		})
	}
	if len(lines) > 0 {
		width := 0
		for _, l := range lines {
			width = max(width, len(l[0]))
		}
		fmt.Fprint(w, "\nflags:\n")
		for _, l := range lines {
			fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
		}
	}
	if len(c.examples) > 0 {
		fmt.Fprint(w, "\nexamples:\n")
		for _, e := range c.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// runVersion is `mcpdiff version`, which takes no arguments.
func runVersion(args []string) int {
	if len(args) > 0 {
		return usageError(os.Stderr, "version", fmt.Errorf("takes no arguments, not %q", args[0]))
	}
	if origin == "release" {
		fmt.Printf("mcpdiff %s (release build, %s/%s)\n", version, runtime.GOOS, runtime.GOARCH)
	} else {
		fmt.Printf("mcpdiff %s (commit %s)\n", version, commit)
	}
	return exitOK
}

// usageError says what was wrong with a command's arguments and how it is used.
func usageError(stderr io.Writer, name string, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "mcpdiff %s: %v\n", name, err)
	}
	if c := lookupCommand(name); c != nil {
		for i, u := range c.usage {
			lead := "usage: "
			if i > 0 {
				lead = "       "
			}
			fmt.Fprintf(stderr, "%smcpdiff %s\n", lead, u)
		}
		fmt.Fprintf(stderr, "`mcpdiff %s --help` explains it\n", name)
	}
	return exitUsage
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len([]rune(word)) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len([]rune(word))
	}
	return b.String()
}
