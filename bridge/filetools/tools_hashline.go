package filetools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// The hashline toolset: reads tag every line with a short hash of its
// content, and edits name lines by those anchors instead of repeating their text.

func (s *Server) hashlineTools() []serverTool {
	return []serverTool{
		{"hashline", mcp.NewTool("read_text_file",
			mcp.WithDescription("Read a text file with every line tagged as `N:hh|content` (N = 1-based line number, "+
				"hh = a 2-hex-digit hash of the line), followed by `file_hash: <sha256>`. Use the `N:hh` anchors "+
				"with edit_text_file. Read a range with start_line/end_line for big files."),
			withPath("path", "The file to read."),
			mcp.WithInteger("start_line", mcp.Min(1), mcp.Description("First line to show (1-based). Default: 1.")),
			mcp.WithInteger("end_line", mcp.Min(1), mcp.Description("Last line to show (inclusive). Default: the last line.")),
			readOnly(),
		), s.readTextFile},
		{"hashline", mcp.NewTool("edit_text_file",
			mcp.WithDescription("Edit a text file by the `N:hh` line anchors read_text_file showed. Operations: "+
				"replace {anchor, content}, replace_range {start, end, content}, insert_after {anchor, content}, "+
				"insert_before {anchor, content}, delete {anchor}, delete_range {start, end}. All anchors refer to the "+
				"file as you last read it; the whole call applies at once or not at all. content may hold several "+
				"lines. If the file changed, the call is refused and shows the current anchors. The result shows "+
				"fresh anchors around each change."),
			withPath("path", "The file to edit."),
			mcp.WithString("file_hash", mcp.Description("Optional: the file_hash from your last read; the edit is refused if the file changed since.")),
			mcp.WithArray("operations", mcp.Required(), mcp.MinItems(1), mcp.Description("The operations, applied together."),
				mcp.Items(map[string]any{
					"type": "object",
					"properties": map[string]any{
						"op":      map[string]any{"type": "string", "enum": []string{"replace", "replace_range", "insert_after", "insert_before", "delete", "delete_range"}},
						"anchor":  map[string]any{"type": "string", "description": "N:hh of the line (replace, insert_after, insert_before, delete)."},
						"start":   map[string]any{"type": "string", "description": "N:hh of the first line of the range (replace_range, delete_range)."},
						"end":     map[string]any{"type": "string", "description": "N:hh of the last line of the range (replace_range, delete_range)."},
						"content": map[string]any{"type": "string", "description": "The new line(s), without anchors. A final newline is optional."},
					},
					"required": []string{"op"},
				})),
			withConversation(),
			writes(true, false),
		), s.editTextFile},
	}
}

func (s *Server) readTextFile(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
	}
	if err := req.BindArguments(&a); err != nil {
		return fail(badArguments(req, err)), nil
	}
	f, r, kept, err := s.reading(ctx, a.Path)
	if err != nil {
		return fail(err), nil
	}
	// An end past the last line reads to the end, as models ask for "the next 100
	// lines" without knowing the length; a start past it stays an error.
	if n := len(r.Texts); a.EndLine > n && a.StartLine <= n {
		a.EndLine = n
	}
	if err := r.Select(a.StartLine, a.EndLine); err != nil {
		return fail(err), nil
	}
	n := r.Len() // a pass over every line shown: once
	if n > s.cfg.MaxRead {
		return fail(errorf("%s is too big to read at once (%d bytes of output, limit %d); read it in parts with start_line and end_line", a.Path, n, s.cfg.MaxRead)), nil
	}
	s.views.pushRead(viewKey(sessionID(ctx), f.Abs), r.Texts)
	if s.bigTexts != nil && n >= bigTextFrom {
		return mcp.NewToolResultText(s.bigTexts.addEscaped(s.readings.answer(kept, r))), nil
	}
	return mcp.NewToolResultText(r.String()), nil
}

// reading returns the lines of the file at path and what is kept of its reads.
// While the file keeps the identity its last read saw (readings.go), that read's
// lines serve again and the file is not read: a stat is enough.
func (s *Server) reading(ctx context.Context, path string) (workspace.File, *edit.Reading, *keptReading, error) {
	f, err := s.resolveOne(ctx, path)
	if err != nil {
		return f, nil, nil, err
	}
	if f.Rel != "." {
		if info, err := f.Root.Stat(f.Rel); err == nil {
			if r, kept := s.readings.get(f.Abs, info); r != nil {
				return f, r, kept, nil
			}
		}
	}
	ts, err := s.readTargets([]workspace.File{f}, readOpts{})
	if err != nil {
		return f, nil, nil, err
	}
	r, err := edit.NewReading(ts[0].Content)
	if err != nil {
		return f, nil, nil, err
	}
	return f, r, s.readings.put(f.Abs, ts[0].Info, ts[0].Settled, r, len(ts[0].Content)), nil
}

func (s *Server) editTextFile(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Path       string    `json:"path"`
		FileHash   string    `json:"file_hash"`
		Operations []edit.Op `json:"operations"`
	}
	if err := req.BindArguments(&a); err != nil {
		return fail(badArguments(req, err)), nil
	}
	var shown []string
	var key string
	res, err := s.modify(ctx, req, "edit_text_file", []string{a.Path}, readOpts{}, func(ts []*target) ([]fileChange, string, error) {
		key = viewKey(sessionID(ctx), ts[0].file.Abs)
		out, err := edit.EditTagged(ts[0].Content, a.FileHash, a.Operations, s.views.get(key))
		if err != nil {
			return nil, "", err
		}
		shown = out.Lines
		return []fileChange{{op: history.Edit, t: ts[0], after: out.Content}}, out.Summary, nil
	})
	if err == nil && !res.IsError {
		s.views.pushEdit(key, shown)
	}
	return res, err
}
