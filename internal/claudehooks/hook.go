package claudehooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Budget is how long one hook call may take, whatever happens: Claude Code waits for
// it on every edit. It is kept under the 2 s promised to users with room for the
// process to start and exit: with 200 ms, a hook of the race-enabled build on a
// loaded machine (load 4) once took 2.2 s in all.
const Budget = 1500 * time.Millisecond

// askNeovimFor bounds the wait for a Neovim's answer about unsaved buffers (a busy
// one, or one waiting at a prompt, does not answer).
const askNeovimFor = time.Second

// maxInput bounds what is read from stdin: an event carries the whole file twice
// (originalFile and the tool's input), and files over the size limit are not
// recorded anyway.
const maxInput = 512 << 20

// Options configure Handle.
type Options struct {
	Nvim        string   // $NVIM: the Neovim whose terminal runs Claude Code, or ""
	LockDirs    []string // where running mcpdiff Neovims leave their lock files
	MaxFileSize int64    // files larger than this are not recorded
}

// Result is the hook's answer: Stdout for Claude Code (a decision, or nothing),
// Message for stderr, and the exit code. Code is 0 or 1, never 2: exit code 2 blocks
// the tool, and only the deliberate deny of the unsaved-buffer guard may stop a write
// (it does so with exit code 0 and a decision on stdout).
type Result struct {
	Stdout  []byte
	Message string
	Code    int
}

func ok() Result { return Result{} }

// note is a message on stderr with exit code 0: Claude Code shows it only in its
// transcript view. For input mcpdiff has nothing to do with.
func note(format string, args ...any) Result {
	return Result{Message: "mcpdiff hook: " + fmt.Sprintf(format, args...)}
}

// failed is exit code 1: Claude Code shows the message to the user as a hook error
// and carries on. For a write that happened but is not in the history.
func failed(format string, args ...any) Result {
	return Result{Message: "mcpdiff hook: " + fmt.Sprintf(format, args...), Code: 1}
}

// deny is Claude Code's PreToolUse decision that stops the tool call; the reason
// goes to the model, which tells the user.
func deny(reason string) Result {
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            PreToolUse,
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}})
	return Result{Stdout: append(out, '\n')}
}

// Handle answers one hook call: it reads the event from in and acts on it within ctx
// (give it a deadline of Budget from the start of the process).
func Handle(ctx context.Context, in io.Reader, o Options) Result {
	data, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return failed("could not read the hook input: %v; ignored", err)
	}
	if len(data) > maxInput {
		return failed("the hook input is over %d MB; ignored, nothing was recorded", maxInput>>20)
	}
	ev, err := ParseEvent(data)
	if err != nil {
		return failed("%v; ignored (mcpdiff hook is run by Claude Code, never by hand)", err)
	}
	if ev.Name != PreToolUse && ev.Name != PostToolUse {
		return note("%s events are not used; ignored (the hooks need PreToolUse and PostToolUse only)", ev.Name)
	}
	if !isWriteTool(ev.ToolName) {
		return note("%s does not write files; ignored", ev.ToolName)
	}
	if ev.target() == "" {
		return failed("%s call without a file_path; ignored", ev.ToolName)
	}
	if ev.Name == PreToolUse {
		return pre(ctx, ev, o)
	}
	return post(ctx, ev, o)
}
