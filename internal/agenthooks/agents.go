package agenthooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/history"
)

// Agent is one coding agent whose hooks run `mcpdiff hook --agent Name`.
type Agent struct {
	Name   string // as --agent takes it; also the start of its conversation ids
	Label  string // for people
	Source string // the history's source of its entries
	// failCode is the exit status of a failure to record: Claude Code shows 1 as a
	// non-blocking hook error. The others get 0 and the message on stderr: Copilot CLI
	// refuses the edit when a hook fails, and the rest need not see it as a failure.
	failCode int
	// turnIDs: the agent names each prompt in every event (no prompt marker needed).
	turnIDs bool
	parse   func(data []byte, event string) (*Call, error)
	// deny is the agent's own answer that refuses a call, for stdout.
	deny func(reason string) []byte
}

var (
	Claude = &Agent{Name: "claude", Label: "Claude Code", Source: history.SourceClaude, failCode: 1, turnIDs: true,
		parse: parseClaude, deny: denyLikeClaude}
	Codex = &Agent{Name: "codex", Label: "Codex", Source: history.SourceCodex, turnIDs: true,
		parse: parseCodex, deny: denyLikeClaude}
	Gemini = &Agent{Name: "gemini", Label: "Gemini CLI", Source: history.SourceGemini,
		parse: parseGemini, deny: func(reason string) []byte { return jsonLine(map[string]any{"decision": "deny", "reason": reason}) }}
	OpenCode = &Agent{Name: "opencode", Label: "OpenCode", Source: history.SourceOpenCode, turnIDs: true,
		parse: parseOpenCode, deny: func(reason string) []byte { return jsonLine(map[string]any{"decision": "deny", "reason": reason}) }}
	Copilot = &Agent{Name: "copilot", Label: "Copilot CLI", Source: history.SourceCopilot,
		parse: parseCopilot, deny: func(reason string) []byte {
			return jsonLine(map[string]any{"permissionDecision": "deny", "permissionDecisionReason": reason})
		}}
	// Cursor's documented answer is permission/user_message/agent_message; the
	// decision/reason pair is the form of its newer preToolUse documentation.
	Cursor = &Agent{Name: "cursor", Label: "Cursor", Source: history.SourceCursor, turnIDs: true,
		parse: parseCursor, deny: func(reason string) []byte {
			return jsonLine(map[string]any{"permission": "deny", "user_message": reason, "agent_message": reason, "decision": "deny", "reason": reason})
		}}
)

// Agents are the agents `mcpdiff hook --agent` knows, Claude Code first (the default).
var Agents = []*Agent{Claude, Codex, Gemini, OpenCode, Copilot, Cursor}

// AgentNames lists their names, for messages.
func AgentNames() string {
	var names []string
	for _, a := range Agents {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

// AgentNamed finds an agent by its --agent name.
func AgentNamed(name string) (*Agent, error) {
	for _, a := range Agents {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("unknown agent %q: use one of %s", name, AgentNames())
}

func jsonLine(v any) []byte {
	b, _ := json.Marshal(v)
	return append(b, '\n')
}

// denyLikeClaude is Claude Code's PreToolUse decision (Codex reads the same).
func denyLikeClaude(reason string) []byte {
	return jsonLine(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            PreToolUse,
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}})
}

func ignored(event, why string) *Call { return &Call{Phase: Ignored, Event: event, Why: why} }

// --- Claude Code ---

// Event is the part of Claude Code's hook input this package reads.
type Event struct {
	SessionID string `json:"session_id"`
	PromptID  string `json:"prompt_id"`
	Cwd       string `json:"cwd"`
	Name      string `json:"hook_event_name"`
	Prompt    string `json:"prompt"`
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

// ParseEvent decodes one Claude Code hook input.
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
	return abs(p, ev.Cwd)
}

func parseClaude(data []byte, _ string) (*Call, error) {
	ev, err := ParseEvent(data)
	if err != nil {
		return nil, err
	}
	c := &Call{Event: ev.Name, Session: ev.SessionID, Turn: ev.PromptID, CallID: ev.ToolUseID, Cwd: ev.Cwd, Tool: ev.ToolName}
	switch ev.Name {
	case UserPromptSubmit:
		c.Phase, c.Prompt = Prompt, ev.Prompt
		return c, nil
	case PreToolUse:
		c.Phase = Before
	case PostToolUse:
		c.Phase = After
	default:
		return ignored(ev.Name, ev.Name+" events are not used; ignored (the hooks need PreToolUse, PostToolUse and UserPromptSubmit only)"), nil
	}
	if !slices.Contains(WriteTools, ev.ToolName) {
		return ignored(ev.Name, ev.ToolName+" does not write files; ignored"), nil
	}
	if ev.target() == "" {
		return nil, fmt.Errorf("%s call without a file_path", ev.ToolName)
	}
	c.Files = []Target{{Path: ev.target(), Whole: ev.ToolName == "Write"}}
	if c.Phase == After {
		var r struct {
			Type   string `json:"type"`   // Write: "create" or "update"
			Staged bool   `json:"staged"` // held for review, the file was not written
		}
		_ = json.Unmarshal(ev.ToolResponse, &r) // absent or not an object: nothing staged
		c.NotWritten, c.Created = r.Staged, r.Type == "create"
	}
	return c, nil
}

// decodeObject decodes the agent's JSON object into v, saying whose input it is not.
func decodeObject(data []byte, v any, who string) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("the hook input is not the JSON object %s sends (%v)", who, err)
	}
	return nil
}

// agentEvents names an agent's hook events: the one that brings the user's prompt
// (none: "") and those before and after a tool call; missing is the error for an
// input without an event.
type agentEvents struct{ prompt, before, after, missing string }

// phase sets c.Phase from the event's name; for an event the hooks do not use it
// returns the ignored call to answer with instead.
func (e agentEvents) phase(c *Call, name string) (*Call, error) {
	switch {
	case name == "":
		return nil, errors.New(e.missing)
	case name == e.prompt:
		c.Phase = Prompt
	case name == e.before:
		c.Phase = Before
	case name == e.after:
		c.Phase = After
	default:
		return ignored(name, name+" events are not used; ignored"), nil
	}
	return nil, nil
}

// --- Codex ---

var codexEvents = agentEvents{UserPromptSubmit, PreToolUse, PostToolUse,
	"the hook input has no hook_event_name; is this Codex's hook input?"}

func parseCodex(data []byte, _ string) (*Call, error) {
	var ev struct {
		SessionID string          `json:"session_id"`
		TurnID    string          `json:"turn_id"`
		Cwd       string          `json:"cwd"`
		Name      string          `json:"hook_event_name"`
		Prompt    string          `json:"prompt"`
		ToolName  string          `json:"tool_name"`
		ToolUseID string          `json:"tool_use_id"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if err := decodeObject(data, &ev, "Codex"); err != nil {
		return nil, err
	}
	c := &Call{Event: ev.Name, Session: ev.SessionID, Turn: ev.TurnID, CallID: ev.ToolUseID, Cwd: ev.Cwd, Tool: ev.ToolName}
	if other, err := codexEvents.phase(c, ev.Name); other != nil || err != nil {
		return other, err
	}
	if c.Phase == Prompt {
		c.Prompt = ev.Prompt
		return c, nil
	}
	if ev.ToolName != "apply_patch" {
		return ignored(ev.Name, ev.ToolName+" does not write files through a patch; ignored"), nil
	}
	files, err := patchTargets(ev.ToolInput, ev.Cwd)
	if err != nil {
		return nil, err
	}
	c.Files = files
	return c, nil
}

// --- Gemini CLI ---

var geminiEvents = agentEvents{"BeforeAgent", "BeforeTool", "AfterTool",
	"the hook input has no hook_event_name; is this Gemini CLI's hook input?"}

func parseGemini(data []byte, _ string) (*Call, error) {
	var ev struct {
		SessionID string          `json:"session_id"`
		Cwd       string          `json:"cwd"`
		Name      string          `json:"hook_event_name"`
		Prompt    string          `json:"prompt"`
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if err := decodeObject(data, &ev, "Gemini CLI"); err != nil {
		return nil, err
	}
	c := &Call{Event: ev.Name, Session: ev.SessionID, Cwd: ev.Cwd, Tool: ev.ToolName}
	if other, err := geminiEvents.phase(c, ev.Name); other != nil || err != nil {
		return other, err
	}
	if c.Phase == Prompt {
		c.Prompt = ev.Prompt
		return c, nil
	}
	if ev.ToolName != "write_file" && ev.ToolName != "replace" {
		return ignored(ev.Name, ev.ToolName+" does not write files; ignored"), nil
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(ev.ToolInput, &in) != nil || in.FilePath == "" {
		return nil, fmt.Errorf("%s call without a file_path", ev.ToolName)
	}
	c.Files = []Target{{Path: abs(in.FilePath, ev.Cwd), Whole: ev.ToolName == "write_file"}}
	c.PairWith = pairing(ev.SessionID, ev.ToolName, ev.ToolInput)
	return c, nil
}

// --- OpenCode (the events its mcpdiff plugin sends) ---

// The plugin sends the prompt with each tool call: it has no event of its own.
var openCodeEvents = agentEvents{"", "tool.execute.before", "tool.execute.after",
	"the hook input has no hook_event_name; is this mcpdiff's OpenCode plugin?"}

func parseOpenCode(data []byte, _ string) (*Call, error) {
	var ev struct {
		Name      string          `json:"hook_event_name"`
		SessionID string          `json:"sessionID"`
		CallID    string          `json:"callID"`
		Tool      string          `json:"tool"`
		Directory string          `json:"directory"`
		Args      json.RawMessage `json:"args"`
		Prompt    struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		} `json:"prompt"`
	}
	if err := decodeObject(data, &ev, "mcpdiff's OpenCode plugin"); err != nil {
		return nil, err
	}
	c := &Call{Event: ev.Name, Session: ev.SessionID, Turn: ev.Prompt.ID, CallID: ev.CallID, Cwd: ev.Directory, Tool: ev.Tool}
	if ev.Prompt.Text != "" {
		c.Title = Title(ev.Prompt.Text)
	}
	if other, err := openCodeEvents.phase(c, ev.Name); other != nil || err != nil {
		return other, err
	}
	switch ev.Tool {
	case "edit", "write", "multiedit":
		var in struct {
			FilePath string `json:"filePath"`
		}
		if json.Unmarshal(ev.Args, &in) != nil || in.FilePath == "" {
			return nil, fmt.Errorf("%s call without a filePath", ev.Tool)
		}
		c.Files = []Target{{Path: abs(in.FilePath, ev.Directory), Whole: ev.Tool == "write"}}
	case "apply_patch", "patch":
		files, err := patchTargets(ev.Args, ev.Directory)
		if err != nil {
			return nil, err
		}
		c.Files = files
	default:
		return ignored(ev.Name, ev.Tool+" does not write files; ignored"), nil
	}
	return c, nil
}

// --- Copilot CLI (its input names no event: the installed command line does) ---

var copilotEvents = agentEvents{"userPromptSubmitted", "preToolUse", "postToolUse",
	"the hook input is no Copilot CLI event (pass --event)"}

func parseCopilot(data []byte, event string) (*Call, error) {
	var ev struct {
		SessionID  string          `json:"sessionId"`
		Cwd        string          `json:"cwd"`
		Prompt     *string         `json:"prompt"`
		ToolName   string          `json:"toolName"`
		ToolArgs   json.RawMessage `json:"toolArgs"`
		ToolResult json.RawMessage `json:"toolResult"`
	}
	if err := decodeObject(data, &ev, "Copilot CLI"); err != nil {
		return nil, err
	}
	if event == "" { // an older install: tell the events apart by their fields
		switch {
		case ev.Prompt != nil:
			event = "userPromptSubmitted"
		case ev.ToolResult != nil:
			event = "postToolUse"
		case ev.ToolName != "":
			event = "preToolUse"
		}
	}
	c := &Call{Event: event, Session: ev.SessionID, Cwd: ev.Cwd, Tool: ev.ToolName}
	if other, err := copilotEvents.phase(c, event); other != nil || err != nil {
		return other, err
	}
	if c.Phase == Prompt {
		if ev.Prompt != nil {
			c.Prompt = *ev.Prompt
		}
		return c, nil
	}
	if ev.ToolName != "edit" && ev.ToolName != "create" {
		return ignored(event, ev.ToolName+" does not write files; ignored"), nil
	}
	// Copilot CLI's documentation gives toolArgs as a string of JSON; 1.0.102 sends
	// the object itself.
	var encoded string
	if json.Unmarshal(ev.ToolArgs, &encoded) == nil {
		ev.ToolArgs = json.RawMessage(encoded)
	}
	var in struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(ev.ToolArgs, &in) != nil || in.Path == "" {
		return nil, fmt.Errorf("%s call without a path", ev.ToolName)
	}
	c.Files = []Target{{Path: abs(in.Path, ev.Cwd), Whole: ev.ToolName == "create"}}
	c.PairWith = pairing(ev.SessionID, ev.ToolName, ev.ToolArgs)
	return c, nil
}

// --- Cursor ---

// cursorTools are Cursor's tools that write files.
var cursorTools = map[string]bool{"Write": true, "StrReplace": true, "Edit": true, "MultiEdit": true, "Delete": true}

func parseCursor(data []byte, _ string) (*Call, error) {
	var ev struct {
		Name           string          `json:"hook_event_name"`
		ConversationID string          `json:"conversation_id"`
		GenerationID   string          `json:"generation_id"`
		Roots          []string        `json:"workspace_roots"`
		Cwd            string          `json:"cwd"`
		Prompt         string          `json:"prompt"`
		ToolName       string          `json:"tool_name"`
		ToolInput      json.RawMessage `json:"tool_input"`
		FilePath       string          `json:"file_path"`
		Edits          []struct {
			Old string `json:"old_string"`
			New string `json:"new_string"`
		} `json:"edits"`
	}
	if err := decodeObject(data, &ev, "Cursor"); err != nil {
		return nil, err
	}
	cwd := ev.Cwd
	if cwd == "" && len(ev.Roots) > 0 {
		cwd = ev.Roots[0]
	}
	c := &Call{Event: ev.Name, Session: ev.ConversationID, Turn: ev.GenerationID, Cwd: cwd, Tool: ev.ToolName}
	switch ev.Name {
	case "beforeSubmitPrompt":
		c.Phase, c.Prompt = Prompt, ev.Prompt
		return c, nil
	case "preToolUse":
		c.Phase = Before
	case "postToolUse":
		c.Phase = After
	case "afterFileEdit":
		c.Phase, c.Tool = After, "Edit"
		if ev.FilePath == "" {
			return nil, errors.New("afterFileEdit without a file_path")
		}
		c.Files = []Target{{Path: abs(ev.FilePath, cwd)}}
		edits := ev.Edits
		c.Undo = func(after []byte) ([]byte, bool) {
			s := string(after)
			for i := len(edits) - 1; i >= 0; i-- {
				e := edits[i]
				if e.New == "" || !strings.Contains(s, e.New) {
					return nil, false
				}
				s = strings.Replace(s, e.New, e.Old, 1)
			}
			return []byte(s), len(edits) > 0
		}
	case "":
		return nil, errors.New("the hook input has no hook_event_name; is this Cursor's hook input?")
	default:
		return ignored(ev.Name, ev.Name+" events are not used; ignored"), nil
	}
	if ev.Name != "afterFileEdit" {
		if !cursorTools[ev.ToolName] {
			return ignored(ev.Name, ev.ToolName+" does not write files; ignored"), nil
		}
		var in struct {
			FilePath   string `json:"file_path"`
			Path       string `json:"path"`
			TargetFile string `json:"target_file"`
		}
		_ = json.Unmarshal(ev.ToolInput, &in)
		p := in.FilePath
		for _, alt := range []string{in.Path, in.TargetFile} {
			if p == "" {
				p = alt
			}
		}
		if p == "" {
			return nil, fmt.Errorf("%s call without a file_path", ev.ToolName)
		}
		c.Files = []Target{{Path: abs(p, cwd), Whole: ev.ToolName == "Write", Delete: ev.ToolName == "Delete"}}
	}
	// Cursor's afterFileEdit has no tool call id: every event of a file pairs by the
	// conversation, the prompt and the path, so that it finds preToolUse's snapshot.
	c.PairWith = pairing(ev.ConversationID, ev.GenerationID, c.Files[0].Path)
	return c, nil
}
