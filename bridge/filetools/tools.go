package filetools

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// serverTool is one tool and the toolset it belongs to.
type serverTool struct {
	toolset string
	def     mcp.Tool
	handler server.ToolHandlerFunc
}

// tools lists every tool, toolset by toolset (one file each: tools_hashline.go,
// tools_edit.go, tools_batch.go).
func (s *Server) tools() []serverTool {
	var out []serverTool
	out = append(out, s.hashlineTools()...)
	out = append(out, s.editTools()...)
	return append(out, s.batchTools()...)
}

func boolPtr(b bool) *bool { return &b }

// readOnly marks a tool that changes no file.
func readOnly() mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		ReadOnlyHint: boolPtr(true), DestructiveHint: boolPtr(false),
		IdempotentHint: boolPtr(true), OpenWorldHint: boolPtr(false),
	})
}

// writes marks a tool that changes files; destructive if it may overwrite or remove
// existing content.
func writes(destructive, idempotent bool) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		ReadOnlyHint: boolPtr(false), DestructiveHint: boolPtr(destructive),
		IdempotentHint: boolPtr(idempotent), OpenWorldHint: boolPtr(false),
	})
}

// withConversation adds the mcp_conversation_id parameter every changing tool takes.
func withConversation() mcp.ToolOption {
	return mcp.WithString("mcp_conversation_id", mcp.Description(
		"Groups this change with the others of your current turn in the edit history. "+
			"Omit it on your first file-changing call of a turn; the result then gives you a new id. "+
			"Pass that id on every later file-changing call of the same turn."))
}

// withPath adds a required path parameter.
func withPath(name, what string) mcp.ToolOption {
	return mcp.WithString(name, mcp.Required(), mcp.Description(what+
		" Absolute, or relative to the workspace (the first root, or the folder chosen with set_workspace)."))
}

// stringOrArray lets a parameter be one string or an array of strings.
func stringOrArray(desc string) mcp.PropertyOption {
	return func(m map[string]any) {
		m["oneOf"] = []any{
			map[string]any{"type": "string"},
			map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1},
		}
		m["description"] = desc
	}
}

// integerOrArray lets a parameter be one integer or an array of integers.
func integerOrArray(desc string, minimum *int) mcp.PropertyOption {
	return func(m map[string]any) {
		one := map[string]any{"type": "integer"}
		if minimum != nil {
			one["minimum"] = *minimum
		}
		m["oneOf"] = []any{one, map[string]any{"type": "array", "items": one, "minItems": 1}}
		m["description"] = desc
	}
}

func intPtr(i int) *int { return &i }
