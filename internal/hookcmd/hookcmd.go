// Package hookcmd is `mcpdiff hook`, the command every agent runs on every edit. It
// runs from this package's init (start.go), before the binary initializes the
// packages only `serve` and `nvim` need.
package hookcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/agenthooks"
	"github.com/mcpdiff/mcpdiff/internal/idelock"
	"github.com/mcpdiff/mcpdiff/internal/userkey"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Run is `mcpdiff hook [--agent NAME] [--event EVENT]`, run by an agent with one
// hook event on stdin. It never exits 2 (Claude Code and Codex would refuse the
// write): a deny is printed on stdout; a failure exits with the agent's
// non-blocking code (always 0 for Copilot CLI, which refuses on any other).
func Run(start time.Time, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	agent, event, err := hookArgs(args)
	a := claudeAgentOr(agent)
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "mcpdiff hook: internal error, nothing was recorded and nothing refused: %v\n", p)
			code = a.Fail("").Code
		}
	}()
	if err != nil {
		fmt.Fprintf(stderr, "mcpdiff hook: %v; %s runs it with the event on stdin\n", err, a.Label)
		return misuseCode(a)
	}
	if f, ok := stdin.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintf(stderr, "mcpdiff hook is %s's hook handler: it reads one hook event as JSON on stdin.\n"+
				"Install it with `mcpdiff hooks install%s`, or start the agent from Neovim (:McpDiffAgent %s).\n",
				a.Label, agentOption(a), a.Name)
			return misuseCode(a)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(agenthooks.Budget))
	defer cancel()
	r := agenthooks.Handle(ctx, stdin, agenthooks.Options{
		Agent:       a,
		Event:       event,
		Nvim:        os.Getenv("NVIM"),
		LockDirs:    idelock.Dirs(),
		MaxFileSize: workspace.DefaultMaxFileSize,
		StateDir:    userkey.Dir(),
	})
	if len(r.Stdout) > 0 {
		stdout.Write(r.Stdout)
	}
	if r.Message != "" {
		fmt.Fprintln(stderr, r.Message)
	}
	return r.Code
}

// hookArgs reads `hook`'s flags: --agent NAME and --event EVENT.
func hookArgs(args []string) (agent *agenthooks.Agent, event string, err error) {
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if (name == "--agent" || name == "--event") && !hasValue {
			if i+1 >= len(args) {
				return agent, event, fmt.Errorf("%s needs a value", name)
			}
			i++
			value = args[i]
		}
		switch name {
		case "--agent":
			a, err := agenthooks.AgentNamed(value)
			if err != nil {
				return agent, event, err
			}
			agent = a
		case "--event":
			event = value
		default:
			return agent, event, fmt.Errorf("unexpected argument %q (it takes --agent NAME and --event EVENT)", args[i])
		}
	}
	return agent, event, nil
}

func claudeAgentOr(a *agenthooks.Agent) *agenthooks.Agent {
	if a == nil {
		return agenthooks.Agents[0]
	}
	return a
}

// misuseCode: misuse by hand exits 1, except where that would refuse the agent's
// writes (Copilot CLI reads any failure as a refusal).
func misuseCode(a *agenthooks.Agent) int {
	if a.Name == "copilot" {
		return 0
	}
	return 1
}

// agentOption is " --agent NAME", or "" for Claude Code (the default).
func agentOption(a *agenthooks.Agent) string {
	if a == agenthooks.Agents[0] {
		return ""
	}
	return " --agent " + a.Name
}
