package filetools

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// The edit toolset: exact-string edits, whole-file writes, moves, deletes and
// unified-diff edits.

func (s *Server) editTools() []serverTool {
	return []serverTool{
		{"edit", mcp.NewTool("edit_file",
			mcp.WithDescription("Replace an exact string in a file (old_string → new_string), keeping everything else, "+
				"indentation and line endings included. old_string must match exactly and be unique unless replace_all "+
				"is set; include surrounding lines to make it unique. dry_run returns the unified diff and writes nothing."),
			withPath("path", "The file to edit."),
			mcp.WithString("old_string", mcp.Required(), mcp.Description("The exact text to replace, whitespace included.")),
			mcp.WithString("new_string", mcp.Required(), mcp.Description("The replacement text.")),
			mcp.WithBoolean("replace_all", mcp.Description("Replace every occurrence instead of requiring one. Default false.")),
			mcp.WithBoolean("dry_run", mcp.Description("Only show the unified diff of the change. Default false.")),
			withConversation(),
			writes(true, false),
		), typed(s.editFile)},
		{"edit", mcp.NewTool("create_file",
			mcp.WithDescription("Create a new file with the given content (missing folders are created). Fails if the file exists: use write_file to replace a file."),
			withPath("path", "The file to create."),
			mcp.WithString("content", mcp.Required(), mcp.Description("The whole content of the new file.")),
			withConversation(),
			writes(false, false),
		), typed(s.createFile)},
		{"edit", mcp.NewTool("write_file",
			mcp.WithDescription("Write a file's whole content, creating it (and missing folders) or replacing it. An existing "+
				"file keeps its mode, UTF-8 BOM and CRLF line endings. Prefer edit_file or edit_text_file for small changes."),
			withPath("path", "The file to write."),
			mcp.WithString("content", mcp.Required(), mcp.Description("The whole new content.")),
			withConversation(),
			writes(true, true),
		), typed(s.writeFile)},
		{"edit", mcp.NewTool("move_file",
			mcp.WithDescription("Move or rename a file. Fails if the destination exists. Missing folders of the destination are created."),
			withPath("source", "The file to move."),
			withPath("destination", "Its new path."),
			withConversation(),
			writes(false, false),
		), typed(s.moveFile)},
		{"edit", mcp.NewTool("delete_file",
			mcp.WithDescription("Delete a file. The edit history keeps its content, so the user can restore it by rejecting this edit."),
			withPath("path", "The file to delete."),
			withConversation(),
			writes(true, false),
		), typed(s.deleteFile)},
		{"edit", mcp.NewTool("edit_file_diff",
			mcp.WithDescription("Apply a unified diff to a file (hunks starting with \"@@ -12,3 +12,4 @@\", lines prefixed by ' ', '-' "+
				"or '+'; \"---\"/\"+++\" headers optional). Every hunk's context and removed lines must match the file "+
				"exactly (line numbers may be off); otherwise nothing changes and the error shows what differs."),
			withPath("path", "The file to patch."),
			mcp.WithString("diff", mcp.Required(), mcp.Description("The unified diff.")),
			withConversation(),
			writes(true, false),
		), typed(s.editFileDiff)},
	}
}

// editArgs are edit_file's parameters.
type editArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
	DryRun     bool   `json:"dry_run"`
}

// fileContent are the parameters of create_file and write_file.
type fileContent struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// moveArgs are move_file's parameters.
type moveArgs struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
}

// pathArg is delete_file's parameter.
type pathArg struct {
	Path string `json:"path"`
}

// diffArgs are edit_file_diff's parameters.
type diffArgs struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
}

func (s *Server) editFile(ctx context.Context, req mcp.CallToolRequest, a editArgs) (*mcp.CallToolResult, error) {
	if a.DryRun {
		t, err := s.readText(ctx, a.Path)
		if err != nil {
			return fail(err), nil
		}
		f, content := t.file, t.Content
		after, count, err := edit.ReplaceString(content, a.OldString, a.NewString, a.ReplaceAll)
		if err != nil {
			return fail(err), nil
		}
		name := filepath.ToSlash(f.Rel)
		diff := udiff.Unified(name, name, content, after, 3)
		return mcp.NewToolResultText(fmt.Sprintf("Dry run: would replace %d occurrence(s) in %s; nothing was written.\n\n%s", count, a.Path, diff)), nil
	}
	return s.modify(ctx, req, "edit_file", []string{a.Path}, readOpts{private: true}, func(ts []*target) ([]fileChange, string, error) {
		after, count, err := edit.ReplaceStringInto(ts[0].reuse, ts[0].Content, a.OldString, a.NewString, a.ReplaceAll)
		if err != nil {
			return nil, "", err
		}
		return []fileChange{{op: history.Edit, t: ts[0], after: after}}, edit.ReplaceMessage(a.Path, count), nil
	})
}

func (s *Server) createFile(ctx context.Context, req mcp.CallToolRequest, a fileContent) (*mcp.CallToolResult, error) {
	return s.modify(ctx, req, "create_file", []string{a.Path}, readOpts{mayBeMissing: true, binaryOK: true}, func(ts []*target) ([]fileChange, string, error) {
		if ts[0].Exists {
			return nil, "", errorf("%s already exists; use write_file to replace it, or edit_file / edit_text_file to change it", a.Path)
		}
		msg := fmt.Sprintf("Created %s (%d lines)", a.Path, edit.CountLines(a.Content))
		return []fileChange{{op: history.Create, t: ts[0], after: []byte(a.Content)}}, msg, nil
	})
}

func (s *Server) writeFile(ctx context.Context, req mcp.CallToolRequest, a fileContent) (*mcp.CallToolResult, error) {
	return s.modify(ctx, req, "write_file", []string{a.Path}, readOpts{mayBeMissing: true}, func(ts []*target) ([]fileChange, string, error) {
		c := writeChange(ts[0], a.Content)
		if c.op == history.Replace && bytes.Equal(c.after, ts[0].Content) {
			// Rewriting the same bytes would only add an empty entry to the history.
			return nil, fmt.Sprintf("%s is unchanged: it already holds this content (nothing was written or recorded)", a.Path), nil
		}
		return []fileChange{c}, fmt.Sprintf("Wrote %s (%d lines)", a.Path, edit.CountLines(a.Content)), nil
	})
}

// writeChange replaces a file's content, or creates it.
func writeChange(t *target, content string) fileChange {
	if !t.Exists {
		return fileChange{op: history.Create, t: t, after: []byte(content)}
	}
	return fileChange{op: history.Replace, t: t, after: edit.Overwrite(t.Content, content)}
}

func (s *Server) moveFile(ctx context.Context, req mcp.CallToolRequest, a moveArgs) (*mcp.CallToolResult, error) {
	return s.modify(ctx, req, "move_file", []string{a.Source, a.Destination}, readOpts{mayBeMissing: true, binaryOK: true, linkItself: true}, func(ts []*target) ([]fileChange, string, error) {
		src, dst := ts[0], ts[1]
		switch {
		case !src.Exists:
			return nil, "", errorf("file not found: %s", a.Source)
		case src.file.Abs == dst.file.Abs:
			return nil, "", errorf("source and destination are the same file (%s)", src.file.Abs)
		case dst.Exists:
			return nil, "", errorf("destination %s already exists; move_file never overwrites: delete it first or choose another name", a.Destination)
		case src.file.Root != dst.file.Root:
			return nil, "", errorf("cannot move between workspace roots (%s → %s): each root has its own edit history; use create_file and delete_file", src.file.Root.Path(), dst.file.Root.Path())
		}
		return []fileChange{{op: history.Move, t: src, dest: dst.file}}, fmt.Sprintf("Moved %s to %s", a.Source, a.Destination), nil
	})
}

func (s *Server) deleteFile(ctx context.Context, req mcp.CallToolRequest, a pathArg) (*mcp.CallToolResult, error) {
	return s.modify(ctx, req, "delete_file", []string{a.Path}, readOpts{binaryOK: true, linkItself: true}, func(ts []*target) ([]fileChange, string, error) {
		return []fileChange{{op: history.Delete, t: ts[0]}}, fmt.Sprintf("Deleted %s", a.Path), nil
	})
}

func (s *Server) editFileDiff(ctx context.Context, req mcp.CallToolRequest, a diffArgs) (*mcp.CallToolResult, error) {
	return s.modify(ctx, req, "edit_file_diff", []string{a.Path}, readOpts{}, func(ts []*target) ([]fileChange, string, error) {
		after, err := edit.ApplyPatch(ts[0].Content, a.Diff)
		if err != nil {
			return nil, "", err
		}
		return []fileChange{{op: history.Edit, t: ts[0], after: after}}, fmt.Sprintf("Applied the diff to %s", a.Path), nil
	})
}
