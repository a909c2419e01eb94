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
	ClientWrites                   // accepted: the client writes the text (the server waits for it, then calls View.Written)
	Replaced                       // a newer openDiff of its tab name took its place before an answer; nothing will be written
)

// Answer is the user's answer to a proposal.
type Answer struct {
	Accepted bool
	// AsProposed: accepted untouched. The text is the proposal's exact bytes, which
	// the server holds; the editor need not send them back.
	AsProposed bool
	Text       string // the text to save, when accepted and not AsProposed
}

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
	// Show draws the proposal and returns its view once it is shown (or fails, e.g.
	// with a *ToolError when the file's buffer has unsaved changes). A failed Show
	// leaves nothing drawn.
	Show(ctx context.Context, req DiffRequest) (View, error)
	// Query runs one of the simple tools (openFile, getDiagnostics,
	// getCurrentSelection, getLatestSelection, getOpenEditors, getWorkspaceFolders,
	// checkDocumentDirty, saveDocument) and returns the text of its one result item,
	// exactly as Claude Code expects it.
	Query(ctx context.Context, tool string, args map[string]any) (string, error)
}

// View is one proposal the editor shows. The server keeps the diff it belongs to
// (Server.diffs) and calls Close once, when the diff is over.
type View interface {
	// Answer delivers the user's answer, at most one.
	Answer() <-chan Answer
	// Close tears this view down (and no other, whatever its tab name).
	Close(ctx context.Context, how Teardown) error
	// Written tells the editor that the client wrote the accepted file: it reloads
	// the file's buffers that have no unsaved changes. It comes after Close.
	Written(ctx context.Context) error
}
