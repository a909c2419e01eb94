package ide

import "context"

// DiffRequest is one openDiff proposal.
type DiffRequest struct {
	TabName  string
	OldPath  string // absolute
	NewPath  string // absolute
	Contents string // the proposal, exact bytes
	NewFile  bool   // OldPath does not exist on disk
	Original []byte // OldPath's bytes when openDiff arrived (nil for a new file)
}

// Teardown is how a diff ended, as far as the editor's teardown cares.
type Teardown int

const (
	NothingWritten Teardown = iota // nothing will be written
	ClientWrites                   // accepted: the client writes the text (the server waits for it, then calls Reload)
)

// ToolError is a JSON-RPC error a tool answers with (code -32000 tool failure,
// -32001 file not open, -32602 invalid params, ...).
type ToolError struct {
	Code    int
	Message string
	Data    string
}

func (e *ToolError) Error() string {
	if e.Data == "" {
		return e.Message
	}
	return e.Message + ": " + e.Data
}

// Editor is the editor half of the IDE protocol. The Neovim implementation lives in
// package nvim. Implementations must be safe for concurrent use, and every call must
// return once its ctx is done (Server.Stop waits for calls in flight).
type Editor interface {
	// OpenDiff draws the proposal and returns once it is shown (or fails, e.g. with a
	// *ToolError when the file's buffer has unsaved changes). The user's answer comes
	// later through Server.Answer.
	OpenDiff(ctx context.Context, req DiffRequest) error
	// CloseDiff tears tabName's view down.
	CloseDiff(ctx context.Context, tabName string, outcome Teardown) error
	// Reload reloads the buffers of path that have no unsaved changes: the client
	// wrote the file of an accepted diff, and its view is closed.
	Reload(ctx context.Context, path string) error
	// Query runs one of the simple tools (openFile, getDiagnostics,
	// getCurrentSelection, getLatestSelection, getOpenEditors, getWorkspaceFolders,
	// checkDocumentDirty, saveDocument) and returns the text of its one result item,
	// exactly as Claude Code expects it.
	Query(ctx context.Context, tool string, args map[string]any) (string, error)
}
