// Package agenthooks is `mcpdiff hook`: it records the file writes coding agents
// make with their own tools (Claude Code, Codex, Gemini CLI, OpenCode, Copilot CLI
// and Cursor) in the edit history, and guards unsaved Neovim buffers against them.
// Each agent runs `mcpdiff hook --agent NAME` before and after each call of its
// file-writing tools, and when the user submits a prompt, with the event as JSON on
// stdin. An adapter per agent (agents.go) turns its events into one Call (event.go);
// one core acts on it by phase: the prompt (prompts.go), before the write (record.go
// pre, guard.go), after it (record.go post, claimed.go); the adapter renders the
// answer in the agent's own form (hook.go). Putting the hooks into each agent's
// configuration is internal/hooksettings.
package agenthooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpdiff/mcpdiff/internal/history"
)

// Claude Code's event names this package acts on.
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
)

// WriteTools are the Claude Code tools that write files; the hooks are registered for
// them (the matcher is a regular expression over tool names).
var WriteTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}

// Phase is where in a tool call (or a prompt) an event comes.
type Phase int

const (
	Ignored Phase = iota // nothing to do (another event, a tool that writes no file)
	Prompt               // the user submitted a prompt: a new conversation
	Before               // a write is about to happen
	After                // a write happened (or failed)
)

// Call is one agent event, the same for every agent.
type Call struct {
	Phase   Phase
	Event   string // the agent's name for the event, for messages
	Why     string // Ignored: why, for the message on stderr
	Session string // the agent's session (or conversation) id
	// Turn identifies the user's prompt where the agent says so (Claude Code's
	// prompt_id, Codex's turn_id, Cursor's generation_id, OpenCode's message id);
	// "" where it does not (the prompt event's marker is used then).
	Turn   string
	CallID string // the tool call's id, where the agent gives one
	// PairWith is what pairs the before and after of a call that has no id: the
	// session, tool and arguments.
	PairWith string
	Cwd      string
	Tool     string
	Files    []Target
	Prompt   string // Prompt: the user's text
	Title    string // the prompt's title, where the event carries it (OpenCode)
	// After: the tool wrote nothing (Claude Code's staged edits); Created: the tool
	// created the file, so a missing snapshot means there was none.
	NotWritten, Created bool
	// Undo gives the bytes before from the bytes after, for an after-event without a
	// snapshot (Cursor's afterFileEdit carries its edits); nil when it cannot.
	Undo func(after []byte) ([]byte, bool)
}

// Target is a file a call writes.
type Target struct {
	Path   string // absolute
	MoveTo string // absolute destination of a move, or ""
	Whole  bool   // the tool writes the whole content (a rewrite, not an edit)
	Delete bool   // the tool deletes the file
}

// abs makes p absolute against cwd, cleaned; "" stays "".
func abs(p, cwd string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) && cwd != "" {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// Paths are every file the call touches (a move's both ends).
func (c *Call) Paths() []string {
	var out []string
	for _, t := range c.Files {
		out = append(out, t.Path)
		if t.MoveTo != "" {
			out = append(out, t.MoveTo)
		}
	}
	return out
}

// ConversationID is the history conversation of one Claude Code prompt: the same for
// every write made while answering it (every hook process computes it alone, so
// concurrent ones agree), different for the next prompt. Without a prompt_id (older
// CLIs) a session is one conversation; without either, each write is its own.
func ConversationID(session, prompt string) string {
	if session == "" && prompt == "" {
		return history.NewConversationID()
	}
	return conversationID("claude", session, prompt)
}

// conversationID is agent's conversation of one prompt (turn) of a session. Both parts
// are hashes: the first names the session, so a session's prompts look alike in
// `mcpdiff status`.
func conversationID(agent, session, turn string) string {
	s := sha256.Sum256([]byte(session))
	p := sha256.Sum256([]byte(session + "\x00" + turn))
	return agent + "_" + hex.EncodeToString(s[:4]) + "_" + hex.EncodeToString(p[:4])
}

// maxTitle is the longest conversation title, in characters.
const maxTitle = 80

// Title is what a prompt is called in the history: its first non-empty line, with
// control characters made spaces, at most maxTitle characters.
func Title(prompt string) string {
	line := ""
	for _, l := range strings.Split(prompt, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, line)
	if utf8.RuneCountInString(line) <= maxTitle {
		return line
	}
	r := []rune(line)
	return strings.TrimSpace(string(r[:maxTitle-1])) + "…"
}

// pairing is the part of a call's arguments that names it when it has no id: the
// arguments as canonical JSON (keys sorted), so that the before and after events,
// which carry the same arguments, agree.
func pairing(parts ...any) string {
	var b strings.Builder
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			b.WriteString(v)
		case json.RawMessage:
			var any any
			if json.Unmarshal(v, &any) == nil {
				canon, _ := json.Marshal(any)
				b.Write(canon)
			}
		default:
			fmt.Fprint(&b, v)
		}
		b.WriteByte(0)
	}
	return b.String()
}
