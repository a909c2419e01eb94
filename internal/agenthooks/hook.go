package agenthooks

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"
)

// Budget is how long one hook call may take, whatever happens: the agent waits for
// it on every edit. It is kept under the 2 s promised to users with room for the
// process to start and exit: with 200 ms, a hook of the race-enabled build on a
// loaded machine (load 4) once took 2.2 s in all.
const Budget = 1500 * time.Millisecond

// maxInput bounds what is read from stdin: an event carries the whole file twice
// (originalFile and the tool's input), and files over the size limit are not
// recorded anyway.
const maxInput = 512 << 20

// Options configure Handle.
type Options struct {
	Agent       *Agent   // whose event it is; nil: Claude Code
	Event       string   // the event's name, for agents whose input has none (Copilot CLI)
	Nvim        string   // $NVIM: the Neovim whose terminal runs the agent, or ""
	LockDirs    []string // where running mcpdiff Neovims leave their lock files
	MaxFileSize int64    // files larger than this are not recorded
	StateDir    string   // mcpdiff's state folder (prompt titles); "": none kept
}

func (o Options) agent() *Agent {
	if o.Agent == nil {
		return Claude
	}
	return o.Agent
}

// Result is the hook's answer: Stdout for the agent (a decision, or nothing),
// Message for stderr, and the exit code. Code is never 2: Claude Code and Codex read
// exit code 2 as a refusal, and only the deliberate deny of the unsaved-buffer guard
// may stop a write (it does so with exit code 0 and a decision on stdout).
type Result struct {
	Stdout  []byte
	Message string
	Code    int
	denied  string // the guard's reason, rendered in the agent's form by Handle
}

func ok() Result { return Result{} }

// note is a message on stderr with exit code 0: Claude Code shows it only in its
// transcript view. For input mcpdiff has nothing to do with.
func note(format string, args ...any) Result {
	return Result{Message: "mcpdiff hook: " + fmt.Sprintf(format, args...)}
}

// failed is a write that happened but is not in the history: exit code 1 for Claude
// Code, which shows the message to the user as a hook error and carries on (Handle
// makes it 0 for agents that would take it as more).
func failed(format string, args ...any) Result {
	return Result{Message: "mcpdiff hook: " + fmt.Sprintf(format, args...), Code: 1}
}

// deny refuses the tool call; the reason goes to the model, which tells the user.
func deny(reason string) Result { return Result{denied: reason} }

// Handle answers one hook call: it reads the event from in and acts on it within ctx
// (give it a deadline of Budget from the start of the process). It never panics: a
// panic is recovered into a message, never a refusal.
func Handle(ctx context.Context, in io.Reader, o Options) (r Result) {
	a := o.agent()
	defer func() {
		if p := recover(); p != nil {
			r = failed("internal error, nothing was recorded and nothing refused: %v\n%s", p, firstFrames(debug.Stack()))
		}
		r = a.finish(r)
	}()
	data, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return failed("could not read the hook input: %v; ignored", err)
	}
	if len(data) > maxInput {
		return failed("the hook input is over %d MB; ignored, nothing was recorded", maxInput>>20)
	}
	c, err := a.parse(data, o.Event)
	if err != nil {
		return failed("%v; ignored (mcpdiff hook is run by %s, never by hand)", err, a.Label)
	}
	switch c.Phase {
	case Prompt:
		return prompt(c, o, a)
	case Before:
		return pre(ctx, c, o, a)
	case After:
		return post(ctx, c, o, a)
	}
	return note("%s", c.Why)
}

// finish renders r as the agent takes it: a deny in its own form, failures with its
// non-blocking exit code.
func (a *Agent) finish(r Result) Result {
	if r.denied != "" {
		r.Stdout, r.Code = a.deny(r.denied), 0
	}
	if r.Code != 0 {
		r.Code = a.failCode
	}
	return r
}

// Fail is the answer to a problem found before the event could be read (bad usage),
// in the agent's non-blocking form.
func (a *Agent) Fail(message string) Result {
	return a.finish(Result{Message: message, Code: 1})
}

// firstFrames keeps a panic's stack short enough for a hook message.
func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	if len(lines) > 12 {
		lines = lines[:12]
	}
	return strings.Join(lines, "\n")
}
