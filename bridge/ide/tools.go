package ide

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// JSON-RPC error codes of the IDE protocol.
const (
	codeMethodNotFound = -32601 // also "Tool not found: X"
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeToolFailed     = -32000
)

// property is one input parameter of a tool (JSON Schema draft-07, as claudecode).
type property struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Default     any    `json:"default,omitempty"`
}

type inputSchema struct {
	Type                 string              `json:"type"`
	Properties           map[string]property `json:"properties,omitempty"`
	Required             []string            `json:"required,omitempty"`
	AdditionalProperties bool                `json:"additionalProperties"`
	Schema               string              `json:"$schema"`
}

// toolSpec is one tool as listed in tools/list and how it is answered.
type toolSpec struct {
	name        string
	description string
	properties  map[string]property
	required    []string
	run         toolFunc
}

// toolFunc answers one tools/call for client c. A *ToolError becomes a JSON-RPC error
// with its code, message and data.
type toolFunc func(ctx context.Context, c *client, args map[string]any) (*mcp.CallToolResult, error)

func (s *Server) toolSpecs() []toolSpec {
	filePath := property{Type: "string", Description: "Absolute path of the file"}
	return []toolSpec{
		{
			name:        "openDiff",
			description: "Open a diff view comparing old file content with new file content",
			properties: map[string]property{
				"old_file_path":     {Type: "string", Description: "Path to the old file to compare"},
				"new_file_path":     {Type: "string", Description: "Path to the new file to compare"},
				"new_file_contents": {Type: "string", Description: "Contents for the new file version"},
				"tab_name":          {Type: "string", Description: "Name for the diff tab/view"},
			},
			required: []string{"old_file_path", "new_file_path", "new_file_contents", "tab_name"},
			run:      s.openDiffTool,
		},
		{
			name:        "close_tab",
			description: "Close a tab (a diff view opened by openDiff) by its name",
			properties: map[string]property{
				"tab_name": {Type: "string", Description: "Name of the tab to close"},
			},
			required: []string{"tab_name"},
			run:      s.closeTab,
		},
		{
			name:        "closeAllDiffTabs",
			description: "Close all diff views opened by this server",
			run:         s.closeAllDiffTabs,
		},
		{
			name:        "openFile",
			description: "Open a file in the editor and optionally select a range of text",
			properties: map[string]property{
				"filePath":          {Type: "string", Description: "Path to the file to open"},
				"preview":           {Type: "boolean", Description: "Whether to open the file in preview mode", Default: false},
				"startLine":         {Type: "integer", Description: "Optional: line number (1-based) where the selection starts"},
				"endLine":           {Type: "integer", Description: "Optional: line number (1-based) where the selection ends"},
				"startText":         {Type: "string", Description: "Text pattern where the selection starts"},
				"endText":           {Type: "string", Description: "Text pattern where the selection ends (searched after startText)"},
				"selectToEndOfLine": {Type: "boolean", Description: "Extend the selection to the end of the line", Default: false},
				"makeFrontmost":     {Type: "boolean", Description: "Make the file the active editor and answer with a message (false: answer with file details, keep focus)", Default: true},
			},
			required: []string{"filePath"},
			run:      s.queryTool("openFile", "filePath"),
		},
		{
			name:        "getDiagnostics",
			description: "Get language diagnostics (errors, warnings) from the editor",
			properties: map[string]property{
				"uri": {Type: "string", Description: "Optional file URI (file://...) or path; without it, diagnostics of all open files"},
			},
			run: s.queryTool("getDiagnostics"),
		},
		{
			name:        "getCurrentSelection",
			description: "Get the current text selection in the active editor",
			run:         s.queryTool("getCurrentSelection"),
		},
		{
			name:        "getLatestSelection",
			description: "Get the most recent text selection, even if the editor is no longer active",
			run:         s.queryTool("getLatestSelection"),
		},
		{
			name:        "getOpenEditors",
			description: "Get the list of files currently open in the editor",
			run:         s.queryTool("getOpenEditors"),
		},
		{
			name:        "getWorkspaceFolders",
			description: "Get the workspace folders open in the editor",
			run:         s.queryTool("getWorkspaceFolders"),
		},
		{
			name:        "checkDocumentDirty",
			description: "Check whether a document has unsaved changes",
			properties:  map[string]property{"filePath": filePath},
			required:    []string{"filePath"},
			run:         s.queryTool("checkDocumentDirty", "filePath"),
		},
		{
			name:        "saveDocument",
			description: "Save a document that has unsaved changes",
			properties:  map[string]property{"filePath": filePath},
			required:    []string{"filePath"},
			run:         s.queryTool("saveDocument", "filePath"),
		},
	}
}

// registerTools adds every tool to the mcp-go server. executeCode is deliberately
// absent: it would let the model run code in the editor.
func (s *Server) registerTools() {
	s.tools = map[string]bool{}
	for _, spec := range s.toolSpecs() {
		// Marshal cannot fail: the schema holds only strings, bools and maps of them.
		schema, _ := json.Marshal(inputSchema{
			Type:                 "object",
			Properties:           spec.properties,
			Required:             spec.required,
			AdditionalProperties: false,
			Schema:               "http://json-schema.org/draft-07/schema#",
		})
		s.mcp.AddTool(mcp.NewToolWithRawSchema(spec.name, spec.description, schema), s.adapt(spec.run))
		s.tools[spec.name] = true
	}
}

// toolErrorKey holds, in a request's context, where a tool leaves the *ToolError it
// failed with: mcp-go answers every handler error with -32603, while the protocol
// needs -32602, -32000, -32001.
type toolErrorKey struct{}

type toolErrorSlot struct{ err *ToolError }

// adapt turns a toolFunc into an mcp-go handler.
func (s *Server) adapt(run toolFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, ok := server.ClientSessionFromContext(ctx).(*client)
		if !ok {
			return nil, errors.New("ide: tool called outside a WebSocket session")
		}
		args := req.GetArguments()
		if args == nil {
			args = map[string]any{}
		}
		result, err := run(ctx, c, args)
		var toolErr *ToolError
		if errors.As(err, &toolErr) {
			if slot, ok := ctx.Value(toolErrorKey{}).(*toolErrorSlot); ok {
				slot.err = toolErr
			}
		}
		return result, err
	}
}

// respond handles one incoming message with mcp-go and returns the response to send,
// or nil (notifications are never answered).
func (s *Server) respond(c *client, data []byte, env envelope) any {
	if name := env.Params.Name; env.Method == "tools/call" && env.hasID() && name != "" && !s.tools[name] {
		// mcp-go would answer -32602; the protocol (and claudecode) say -32601.
		return errorResponse(env.ID, &ToolError{Code: codeMethodNotFound, Message: "Tool not found: " + name})
	}
	slot := &toolErrorSlot{}
	ctx := context.WithValue(s.mcp.WithContext(c.ctx, c), toolErrorKey{}, slot)
	resp := s.mcp.HandleMessage(ctx, data)
	if slot.err != nil && env.hasID() {
		return errorResponse(env.ID, slot.err)
	}
	if resp == nil {
		return nil
	}
	return resp
}

type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func errorResponse(id json.RawMessage, e *ToolError) rpcErrorResponse {
	return rpcErrorResponse{
		JSONRPC: "2.0",
		ID:      id,
		Error:   rpcError{Code: e.Code, Message: e.Message, Data: e.Data},
	}
}

// queryTool answers a simple tool with the editor's text, checking the required
// string parameters first.
func (s *Server) queryTool(name string, required ...string) toolFunc {
	return func(ctx context.Context, c *client, args map[string]any) (*mcp.CallToolResult, error) {
		for _, param := range required {
			if _, err := stringParam(args, param); err != nil {
				return nil, err
			}
		}
		if name == "getDiagnostics" {
			// The CLI asks for diagnostics right before and right after writing an
			// accepted diff: a good moment to look for the write.
			s.pokeWatches()
		}
		text, err := s.editor.Query(ctx, name, args)
		if err != nil {
			return nil, asToolError(err, name+" failed")
		}
		return textResult(text), nil
	}
}

// stringParam returns a required string parameter or the protocol's -32602 error.
func stringParam(args map[string]any, name string) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return "", &ToolError{Code: codeInvalidParams, Message: "Invalid params", Data: "Missing required parameter: " + name}
	}
	str, ok := v.(string)
	if !ok {
		return "", &ToolError{Code: codeInvalidParams, Message: "Invalid params", Data: fmt.Sprintf("Parameter %s must be a string, got %T", name, v)}
	}
	return str, nil
}

// asToolError keeps an editor's *ToolError as it is and turns any other error into a
// -32000 tool failure.
func asToolError(err error, message string) *ToolError {
	var toolErr *ToolError
	if errors.As(err, &toolErr) {
		return toolErr
	}
	return &ToolError{Code: codeToolFailed, Message: message, Data: err.Error()}
}

func textResult(texts ...string) *mcp.CallToolResult {
	content := make([]mcp.Content, len(texts))
	for i, t := range texts {
		content[i] = mcp.NewTextContent(t)
	}
	return &mcp.CallToolResult{Content: content}
}
