package filetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// The batch toolset: read_files, write_files, list_files, insert_contents and the
// other tools below. Tools that take several files change all of them or none.

// listLimit caps list_files output; the rest is counted, not shown.
const listLimit = 5000

func (s *Server) batchTools() []serverTool {
	return []serverTool{
		{"batch", mcp.NewTool("set_workspace",
			mcp.WithDescription("Choose the folder relative paths are resolved against. It must be inside the allowed roots "+
				"(it never widens them). Optional: by default relative paths start at the first root."),
			mcp.WithString("path", mcp.Required(), mcp.Description("A folder inside the allowed roots, absolute or relative to the current workspace.")),
			readOnly(),
		), s.setWorkspace},
		{"batch", mcp.NewTool("read_files",
			mcp.WithDescription("Read one or more files. Lines are numbered as `N | content` for reference in other tools. "+
				"line_range (\"start-end\", 1-based) reads part of a single file."),
			mcp.WithAny("path", mcp.Required(), stringOrArray("A file path, or an array of file paths.")),
			mcp.WithString("line_range", mcp.Description("Optional \"start-end\" range, e.g. \"1-50\" (single file only)."), mcp.Pattern(`^\d+-\d+$`)),
			readOnly(),
		), s.readFiles},
		{"batch", mcp.NewTool("write_files",
			mcp.WithDescription("Create or overwrite one or more files with their full content. line_count must equal the "+
				"number of lines of each content (a guard against truncated output); a mismatch writes nothing."),
			mcp.WithAny("path", mcp.Required(), stringOrArray("A file path, or an array of file paths.")),
			mcp.WithAny("content", mcp.Required(), stringOrArray("The full content, the same for every file, or one per file.")),
			mcp.WithAny("line_count", mcp.Required(), integerOrArray("Number of lines of the content (one per file for several contents).", intPtr(0))),
			withConversation(),
			writes(true, true),
		), s.writeFiles},
		{"batch", mcp.NewTool("list_files",
			mcp.WithDescription("List the files and folders in a folder, as `directory: name` and `file: name` lines."),
			mcp.WithString("path", mcp.Required(), mcp.Description("The folder to list.")),
			mcp.WithBoolean("recursive", mcp.Description("Also list the content of sub-folders. Default false.")),
			readOnly(),
		), s.listFiles},
		{"batch", mcp.NewTool("insert_contents",
			mcp.WithDescription("Insert content into one or more files. line N > 0 inserts before line N (the content becomes "+
				"line N); 0 appends at the end; negative numbers count from the end (-1 inserts before the last line)."),
			mcp.WithAny("path", mcp.Required(), stringOrArray("A file path, or an array of file paths.")),
			mcp.WithAny("line", mcp.Required(), integerOrArray("Where to insert, for all files or one per file.", nil)),
			mcp.WithAny("content", mcp.Required(), stringOrArray("The content to insert, for all files or one per file.")),
			withConversation(),
			writes(false, false),
		), s.insertContents},
		{"batch", mcp.NewTool("apply_diffs",
			mcp.WithDescription("Search-and-replace whole blocks of lines in one file. start_line is where each block is "+
				"expected, counted on the original file (offsets between blocks are handled); the nearest exact match is used. "+
				"atomic (default true): if any block is not found, nothing changes. trim: compare lines ignoring leading and "+
				"trailing whitespace (the replacement is inserted exactly)."),
			mcp.WithString("path", mcp.Required(), mcp.Description("The file to modify.")),
			mcp.WithAny("search_content", mcp.Required(), stringOrArray("The lines to find (or an array, one per block).")),
			mcp.WithAny("replace_content", mcp.Required(), stringOrArray("Their replacement (or an array, one per block).")),
			mcp.WithAny("start_line", mcp.Required(), integerOrArray("1-based line where each block starts in the original file.", intPtr(1))),
			mcp.WithBoolean("atomic", mcp.Description("All blocks or none. Default true."), mcp.DefaultBool(true)),
			mcp.WithBoolean("trim", mcp.Description("Ignore leading/trailing whitespace when matching lines. Default false."), mcp.DefaultBool(false)),
			withConversation(),
			writes(true, false),
		), s.applyDiffs},
		{"batch", mcp.NewTool("search_and_replace",
			mcp.WithDescription("Replace every occurrence of a text (or an RE2 regular expression with use_regex; $1 refers to "+
				"a group) in one file, optionally only within start_line..end_line. Finding nothing is an error."),
			mcp.WithString("path", mcp.Required(), mcp.Description("The file to modify.")),
			mcp.WithString("search", mcp.Required(), mcp.Description("The text or regular expression to find.")),
			mcp.WithString("replace", mcp.Required(), mcp.Description("The replacement.")),
			mcp.WithBoolean("use_regex", mcp.Description("Treat search as an RE2 regular expression. Default false.")),
			mcp.WithBoolean("ignore_case", mcp.Description("Match regardless of case. Default false.")),
			mcp.WithInteger("start_line", mcp.Min(1), mcp.Description("First line searched (1-based).")),
			mcp.WithInteger("end_line", mcp.Min(1), mcp.Description("Last line searched (inclusive).")),
			withConversation(),
			writes(true, false),
		), s.searchAndReplace},
	}
}

// resolveFolder resolves the folder a tool call names in the calling session's
// scope, which it returns too.
func (s *Server) resolveFolder(ctx context.Context, path string) (scope, workspace.File, error) {
	sc, err := s.scope(ctx)
	if err != nil {
		return scope{}, workspace.File{}, err
	}
	f, err := sc.resolve(path, false)
	return sc, f, err
}

func (s *Server) setWorkspace(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	path := req.GetString("path", "")
	sc, f, err := s.resolveFolder(ctx, path)
	if err != nil {
		return fail(err), nil
	}
	info, err := f.Root.Lstat(f.Rel)
	if err != nil || !info.IsDir() {
		return fail(errorf("Directory not found: %s (set_workspace needs an existing folder inside the allowed roots)", path)), nil
	}
	sc.sess.mu.Lock()
	sc.sess.base = f.Abs
	sc.sess.mu.Unlock()
	return mcp.NewToolResultText("Successfully set workspace root to: " + f.Abs), nil
}

func (s *Server) readFiles(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	paths, many, err := stringList(args["path"], "path")
	if err != nil {
		return fail(err), nil
	}
	lineRange := req.GetString("line_range", "")
	if many && lineRange != "" {
		return fail(errorf("line_range reads part of a single file; pass one path with it, or no line_range for several files")), nil
	}
	read := func(path string) (string, int, error) {
		t, err := s.readText(ctx, path)
		if err != nil {
			return "", 0, err
		}
		content := t.Content
		start, end := 0, 0
		if lineRange != "" {
			if start, end, err = edit.ParseLineRange(lineRange); err != nil {
				return "", 0, err
			}
		}
		return edit.ReadNumbered(content, start, end)
	}
	if !many {
		text, _, err := read(paths[0])
		if err != nil {
			return fail(err), nil
		}
		return s.capRead(text)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Successfully read %d file(s):", len(paths))
	failed := 0
	for _, p := range paths {
		text, n, err := read(p)
		if err != nil {
			failed++
			fmt.Fprintf(&b, "\n\n=== %s (error) ===\nError: %v", p, err)
			continue
		}
		fmt.Fprintf(&b, "\n\n=== %s (%d lines) ===\n%s", p, n, text)
	}
	if failed == len(paths) {
		return fail(errors.New(strings.TrimPrefix(b.String(), fmt.Sprintf("Successfully read %d file(s):\n\n", len(paths))))), nil
	}
	return s.capRead(b.String())
}

func (s *Server) capRead(text string) (*mcp.CallToolResult, error) {
	if len(text) > s.cfg.MaxRead {
		return fail(errorf("the result is too big (%d bytes, limit %d); read fewer files, or part of a file with line_range", len(text), s.cfg.MaxRead)), nil
	}
	return s.textResult(text), nil
}

func (s *Server) writeFiles(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	paths, _, contents, counts, err := contentArgs(req.GetArguments(), "line_count")
	if err != nil {
		return fail(err), nil
	}
	for i := range paths {
		if err := edit.CheckLineCount(contents[i], counts[i]); err != nil {
			return fail(fmt.Errorf("%s: %w", paths[i], err)), nil
		}
	}
	return s.modify(ctx, req, "write_files", paths, readOpts{mayBeMissing: true}, func(ts []*target) ([]fileChange, string, error) {
		var changes []fileChange
		var written []edit.WrittenFile
		for i, t := range ts {
			changes = append(changes, writeChange(t, contents[i]))
			written = append(written, edit.WrittenFile{Name: paths[i], Lines: counts[i]})
		}
		return changes, edit.WriteFilesMessage(written), nil
	})
}

func (s *Server) listFiles(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	path := req.GetString("path", "")
	_, f, err := s.resolveFolder(ctx, path)
	if err != nil {
		return fail(err), nil
	}
	entries, more, err := f.Root.ListLimit(f.Rel, req.GetBool("recursive", false), listLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return fail(errorf("Directory not found: %s", path)), nil
	}
	if err != nil {
		return fail(err), nil
	}
	var b strings.Builder
	for i, e := range entries {
		if i > 0 {
			b.WriteByte('\n')
		}
		kind := "file"
		switch {
		case e.IsDir:
			kind = "directory"
		case e.IsSymlink:
			kind = "symlink"
		}
		b.WriteString(kind + ": " + e.Rel)
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n(%d more entries not shown; list a sub-folder)", more)
	}
	if len(entries) == 0 {
		b.WriteString("(empty folder)")
	}
	return mcp.NewToolResultText(b.String()), nil
}

func (s *Server) insertContents(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	paths, many, contents, lines, err := contentArgs(req.GetArguments(), "line")
	if err != nil {
		return fail(err), nil
	}
	return s.modify(ctx, req, "insert_contents", paths, readOpts{}, func(ts []*target) ([]fileChange, string, error) {
		var changes []fileChange
		var report []string
		failed := false
		for i, t := range ts {
			in, err := edit.InsertContent(paths[i], t.Content, lines[i], contents[i])
			if err != nil {
				failed = true
				report = append(report, fmt.Sprintf("❌ %s: %v", paths[i], err))
				continue
			}
			report = append(report, fmt.Sprintf("✅ %s: %s", paths[i], in.Message))
			changes = append(changes, fileChange{op: history.Edit, t: t, after: in.Content})
			if !many {
				return changes, in.Message, nil
			}
		}
		if !many {
			return nil, "", errors.New(strings.TrimPrefix(report[0], "❌ "+paths[0]+": "))
		}
		if failed {
			return nil, "", errorf("Nothing was inserted: every file must succeed.\n\n%s", strings.Join(report, "\n"))
		}
		return changes, fmt.Sprintf("Successfully processed %d file(s):\n\n%s", len(paths), strings.Join(report, "\n")), nil
	})
}

func (s *Server) applyDiffs(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	path := req.GetString("path", "")
	search, _, err := stringList(args["search_content"], "search_content")
	if err != nil {
		return fail(err), nil
	}
	replace, err := perFile(args["replace_content"], "replace_content", len(search), stringList)
	if err != nil {
		return fail(err), nil
	}
	starts, err := perFile(args["start_line"], "start_line", len(search), intList)
	if err != nil {
		return fail(err), nil
	}
	diffs := make([]edit.Diff, len(search))
	for i := range search {
		diffs[i] = edit.Diff{Search: search[i], Replace: replace[i], StartLine: starts[i]}
	}
	atomic, trim := req.GetBool("atomic", true), req.GetBool("trim", false)
	return s.modify(ctx, req, "apply_diffs", []string{path}, readOpts{}, func(ts []*target) ([]fileChange, string, error) {
		res, err := edit.ApplyDiffs(path, ts[0].Content, diffs, atomic, trim)
		if err != nil {
			return nil, "", err
		}
		return []fileChange{{op: history.Edit, t: ts[0], after: res.Content}}, res.Message, nil
	})
}

func (s *Server) searchAndReplace(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	path := req.GetString("path", "")
	p := edit.SearchReplace{
		Search: req.GetString("search", ""), Replace: req.GetString("replace", ""),
		UseRegex: req.GetBool("use_regex", false), IgnoreCase: req.GetBool("ignore_case", false),
		StartLine: req.GetInt("start_line", 0), EndLine: req.GetInt("end_line", 0),
	}
	return s.modify(ctx, req, "search_and_replace", []string{path}, readOpts{}, func(ts []*target) ([]fileChange, string, error) {
		res, err := edit.SearchAndReplace(path, ts[0].Content, p)
		if err != nil {
			return nil, "", err
		}
		return []fileChange{{op: history.Edit, t: ts[0], after: res.Content}}, res.Message, nil
	})
}

// stringList reads a string-or-array parameter.
// contentArgs reads the arguments of a tool that writes content into one file or
// several: path (a string or a list; many when a list), content and the numbers
// named intKey, one of each per path.
func contentArgs(args map[string]any, intKey string) (paths []string, many bool, contents []string, ints []int, err error) {
	if paths, many, err = stringList(args["path"], "path"); err != nil {
		return nil, false, nil, nil, err
	}
	if ints, err = perFile(args[intKey], intKey, len(paths), intList); err != nil {
		return nil, false, nil, nil, err
	}
	if contents, err = perFile(args["content"], "content", len(paths), stringList); err != nil {
		return nil, false, nil, nil, err
	}
	return paths, many, contents, ints, nil
}

func stringList(v any, name string) ([]string, bool, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, false, nil
	case []any:
		if len(x) == 0 {
			return nil, true, errorf("%s is an empty array; give at least one value", name)
		}
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, true, errorf("%s[%d] must be a string", name, i)
			}
			out[i] = s
		}
		return out, true, nil
	}
	return nil, false, errorf("%s must be a string or an array of strings", name)
}

// intList reads an integer-or-array parameter.
func intList(v any, name string) ([]int, bool, error) {
	toInt := func(e any, what string) (int, error) {
		f, ok := e.(float64)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
			return 0, errorf("%s must be an integer", what)
		}
		return int(f), nil
	}
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil, true, errorf("%s is an empty array; give at least one value", name)
		}
		out := make([]int, len(x))
		for i, e := range x {
			n, err := toInt(e, fmt.Sprintf("%s[%d]", name, i))
			if err != nil {
				return nil, true, err
			}
			out[i] = n
		}
		return out, true, nil
	default:
		n, err := toInt(v, name)
		return []int{n}, false, err
	}
}

// perFile reads a parameter that is either one value for every item or an array with
// one value per item.
func perFile[T any](v any, name string, n int, read func(any, string) ([]T, bool, error)) ([]T, error) {
	vals, many, err := read(v, name)
	if err != nil {
		return nil, err
	}
	if !many {
		out := make([]T, n)
		for i := range out {
			out[i] = vals[0]
		}
		return out, nil
	}
	if len(vals) != n {
		return nil, errorf("%s has %d values but there are %d items; give one value, or one per item", name, len(vals), n)
	}
	return vals, nil
}
