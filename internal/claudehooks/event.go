// Package claudehooks records Claude Code's own file writes in the edit history and
// guards unsaved Neovim buffers against them, through Claude Code's hooks: Claude Code
// runs `mcpdiff hook` before (PreToolUse) and after (PostToolUse) each call of its
// Edit, Write, NotebookEdit (and, in older versions, MultiEdit) tools, with the event
// as JSON on stdin, in every permission mode. It also puts those hooks into Claude
// Code's settings files and takes them out again (settings.go).
package claudehooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/mcpdiff/mcpdiff/internal/history"
)

// Event names and tools this package acts on.
const (
	PreToolUse  = "PreToolUse"
	PostToolUse = "PostToolUse"
)

// WriteTools are the Claude Code tools that write files; the hooks are registered for
// them (the matcher is a regular expression over tool names).
var WriteTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}

func isWriteTool(name string) bool {
	for _, t := range WriteTools {
		if t == name {
			return true
		}
	}
	return false
}

// Event is the part of a hook's input this package reads.
type Event struct {
	SessionID string `json:"session_id"`
	PromptID  string `json:"prompt_id"`
	Cwd       string `json:"cwd"`
	Name      string `json:"hook_event_name"`
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	ToolInput struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	} `json:"tool_input"`
	// ToolResponse is decoded only as far as needed: it holds the whole file
	// (originalFile), megabytes for a big one.
	ToolResponse json.RawMessage `json:"tool_response"`
}

// response is what PostToolUse needs of tool_response.
type response struct {
	Type   string `json:"type"`   // Write: "create" or "update"
	Staged bool   `json:"staged"` // held for review, the file was not written
}

// ParseEvent decodes one hook input.
func ParseEvent(data []byte) (*Event, error) {
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("the hook input is not the JSON object Claude Code sends (%v)", err)
	}
	if ev.Name == "" {
		return nil, fmt.Errorf("the hook input has no hook_event_name; is this Claude Code's hook input?")
	}
	return &ev, nil
}

// target is the file the tool call writes: absolute, as Claude Code gives it, or
// relative to the event's cwd.
func (ev *Event) target() string {
	p := ev.ToolInput.FilePath
	if p == "" {
		p = ev.ToolInput.NotebookPath
	}
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) && ev.Cwd != "" {
		p = filepath.Join(ev.Cwd, p)
	}
	return filepath.Clean(p)
}

func (ev *Event) response() response {
	var r response
	_ = json.Unmarshal(ev.ToolResponse, &r) // absent or not an object: nothing staged
	return r
}

// ConversationID is the history conversation of one Claude Code prompt: the same for
// every write made while answering it (every hook process computes it alone, so
// concurrent ones agree), different for the next prompt. Both parts are hashes: the
// first names the session, so a session's prompts look alike in `mcpdiff status`.
// Without a prompt_id (older CLIs) a session is one conversation; without either,
// each write is its own.
func ConversationID(session, prompt string) string {
	if session == "" && prompt == "" {
		return history.NewConversationID()
	}
	s := sha256.Sum256([]byte(session))
	p := sha256.Sum256([]byte(session + "\x00" + prompt))
	return "claude_" + hex.EncodeToString(s[:4]) + "_" + hex.EncodeToString(p[:4])
}
