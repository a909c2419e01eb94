package nvim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpdiff/mcpdiff/bridge/ide"
	"github.com/mcpdiff/mcpdiff/nvim/neovims"
)

// Query answers the IDE tools that read editor state (and openFile), with the exact
// result texts Claude Code expects. Lua gathers the state; the JSON is built here
// so field names and order are fixed in one place.
func (e *Editor) Query(ctx context.Context, tool string, args map[string]any) (string, error) {
	switch tool {
	case "openFile":
		return e.openFile(ctx, args)
	case "getDiagnostics":
		return e.getDiagnostics(ctx, args)
	case "getCurrentSelection":
		return e.getSelection(ctx, true)
	case "getLatestSelection":
		return e.getSelection(ctx, false)
	case "getOpenEditors":
		return e.getOpenEditors(ctx)
	case "getWorkspaceFolders":
		return e.getWorkspaceFolders(ctx)
	case "checkDocumentDirty":
		return e.checkDocumentDirty(ctx, args)
	case "saveDocument":
		return e.saveDocument(ctx, args)
	}
	return "", &ide.ToolError{Code: -32601, Message: "Method not found", Data: "Tool not found: " + tool}
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode result: %w", err)
	}
	return string(b), nil
}

// failure is the answer of a tool that could not do its work: {"success":false,"message":…}.
func failure(msg string) (string, error) {
	return jsonText(struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}{false, msg})
}

// fileAnswer opens a successful answer about one file.
type fileAnswer struct {
	Success  bool   `json:"success"`
	FilePath string `json:"filePath"`
}

func missingParam(name string) error {
	return &ide.ToolError{Code: -32602, Message: "Invalid params", Data: "Missing required parameter: " + name}
}

// requiredString returns a non-empty string argument.
func requiredString(args map[string]any, name string) (string, error) {
	s, ok := args[name].(string)
	if !ok || s == "" {
		return "", missingParam(name)
	}
	return s, nil
}

// expandHome expands a leading ~ only: paths may contain $ and the like.
func expandHome(path string) string {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return filepath.Join(home, path[1:])
}

// optional copies the JSON argument name (if present and of the JSON type of want)
// into the Lua arguments, numbers as integers.
func optional(lua map[string]any, args map[string]any, name string, want any) {
	v, ok := args[name]
	if !ok || v == nil {
		return
	}
	switch want.(type) {
	case int:
		if f, ok := v.(float64); ok {
			lua[name] = int(f)
		}
	case bool:
		if b, ok := v.(bool); ok {
			lua[name] = b
		}
	case string:
		if s, ok := v.(string); ok {
			lua[name] = s
		}
	}
}

type openFileAnswer struct {
	NotFound   bool   `msgpack:"not_found"`
	Message    string `msgpack:"message"`
	LanguageID string `msgpack:"languageId"`
	LineCount  int    `msgpack:"lineCount"`
}

func (e *Editor) openFile(ctx context.Context, args map[string]any) (string, error) {
	path, err := requiredString(args, "filePath")
	if err != nil {
		return "", err
	}
	path = expandHome(path)
	frontmost := true
	if b, ok := args["makeFrontmost"].(bool); ok {
		frontmost = b
	}
	lua := map[string]any{"filePath": path, "makeFrontmost": frontmost}
	optional(lua, args, "startLine", 0)
	optional(lua, args, "endLine", 0)
	optional(lua, args, "startText", "")
	optional(lua, args, "endText", "")
	optional(lua, args, "selectToEndOfLine", false)
	var ans openFileAnswer
	err = neovims.CallLua(ctx, e.v, "openFile", "query.open_file", &ans, lua)
	if err != nil {
		return "", err
	}
	if ans.NotFound {
		return "", &ide.ToolError{Code: -32000, Message: "File operation error", Data: "File not found: " + path}
	}
	if frontmost {
		return ans.Message, nil
	}
	return jsonText(struct {
		fileAnswer
		LanguageID string `json:"languageId"`
		LineCount  int    `json:"lineCount"`
	}{fileAnswer{true, path}, ans.LanguageID, ans.LineCount})
}

type position struct {
	Line      int `json:"line" msgpack:"line"`
	Character int `json:"character" msgpack:"character"`
}

type textRange struct {
	Start position `json:"start" msgpack:"start"`
	End   position `json:"end" msgpack:"end"`
}

type diagnostic struct {
	Message  string    `json:"message" msgpack:"message"`
	Severity string    `json:"severity" msgpack:"severity"`
	Range    textRange `json:"range" msgpack:"range"`
	Source   string    `json:"source,omitempty" msgpack:"source"`
	Code     string    `json:"code,omitempty" msgpack:"code"`
}

type fileDiagnostics struct {
	Path        string       `json:"-" msgpack:"path"`
	URI         string       `json:"uri" msgpack:"-"`
	Diagnostics []diagnostic `json:"diagnostics" msgpack:"diagnostics"`
}

type diagnosticsAnswer struct {
	NotOpen bool              `msgpack:"not_open"`
	Files   []fileDiagnostics `msgpack:"files"`
}

// getDiagnostics answers from Neovim's diagnostics at hand (vim.diagnostic), never
// waiting for a language server: the CLI gives the baseline call 500 ms.
func (e *Editor) getDiagnostics(ctx context.Context, args map[string]any) (string, error) {
	uri, _ := args["uri"].(string)
	path := strings.TrimPrefix(uri, "file://")
	var luaArgs []any // no argument (not nil, which Lua sees as vim.NIL) means every file
	if path != "" {
		luaArgs = append(luaArgs, path)
	}
	var ans diagnosticsAnswer
	if err := neovims.CallLua(ctx, e.v, "getDiagnostics", "query.diagnostics", &ans, luaArgs...); err != nil {
		return "", err
	}
	if ans.NotOpen {
		return "", &ide.ToolError{Code: -32001, Message: "File not open", Data: "File must be open to retrieve diagnostics: " + path}
	}
	files := make([]fileDiagnostics, 0, len(ans.Files))
	for _, f := range ans.Files {
		f.URI = "file://" + f.Path
		if f.Diagnostics == nil {
			f.Diagnostics = []diagnostic{}
		}
		files = append(files, f)
	}
	return jsonText(files)
}

// selection is a tracked selection as Lua keeps it (and selection_changed sends it).
type selection struct {
	Text      string `json:"text" msgpack:"text"`
	FilePath  string `json:"filePath" msgpack:"filePath"`
	FileURL   string `json:"fileUrl" msgpack:"fileUrl"`
	Selection struct {
		Start   position `json:"start" msgpack:"start"`
		End     position `json:"end" msgpack:"end"`
		IsEmpty bool     `json:"isEmpty" msgpack:"isEmpty"`
	} `json:"selection" msgpack:"selection"`
}

type selectionAnswer struct {
	Latest      *selection `msgpack:"latest"`
	CurrentPath string     `msgpack:"current_path"`
}

func (e *Editor) getSelection(ctx context.Context, current bool) (string, error) {
	var ans selectionAnswer
	if err := neovims.CallLua(ctx, e.v, "read the selection", "query.selection", &ans); err != nil {
		return "", err
	}
	if !current {
		if ans.Latest == nil {
			return failure("No selection available")
		}
		return jsonText(ans.Latest)
	}
	sel := ans.Latest
	if sel == nil {
		if ans.CurrentPath == "" {
			return failure("No active editor found")
		}
		sel = &selection{FilePath: ans.CurrentPath, FileURL: "file://" + ans.CurrentPath}
		sel.Selection.IsEmpty = true
	}
	return jsonText(struct {
		Success bool `json:"success"`
		*selection
	}{true, sel})
}

type openEditor struct {
	Path       string `msgpack:"path"`
	Active     bool   `msgpack:"active"`
	Dirty      bool   `msgpack:"dirty"`
	Label      string `msgpack:"label"`
	Tab        int    `msgpack:"tab"`
	LanguageID string `msgpack:"languageId"`
	LineCount  int    `msgpack:"lineCount"`
	Untitled   bool   `msgpack:"untitled"`
	Selection  *struct {
		Start position `msgpack:"start"`
		End   position `msgpack:"end"`
	} `msgpack:"selection"`
}

type editorSelection struct {
	Start      position `json:"start"`
	End        position `json:"end"`
	IsReversed bool     `json:"isReversed"`
}

type editorTab struct {
	URI           string           `json:"uri"`
	IsActive      bool             `json:"isActive"`
	IsPinned      bool             `json:"isPinned"`
	IsPreview     bool             `json:"isPreview"`
	IsDirty       bool             `json:"isDirty"`
	Label         string           `json:"label"`
	GroupIndex    int              `json:"groupIndex"`
	ViewColumn    int              `json:"viewColumn"`
	IsGroupActive bool             `json:"isGroupActive"`
	FileName      string           `json:"fileName"`
	LanguageID    string           `json:"languageId"`
	LineCount     int              `json:"lineCount"`
	IsUntitled    bool             `json:"isUntitled"`
	Selection     *editorSelection `json:"selection,omitempty"`
}

func (e *Editor) getOpenEditors(ctx context.Context) (string, error) {
	var list []openEditor
	if err := neovims.CallLua(ctx, e.v, "list open editors", "query.open_editors", &list); err != nil {
		return "", err
	}
	tabs := make([]editorTab, 0, len(list))
	for _, o := range list {
		t := editorTab{
			URI: "file://" + o.Path, IsActive: o.Active, IsDirty: o.Dirty, Label: o.Label,
			GroupIndex: o.Tab - 1, ViewColumn: o.Tab, IsGroupActive: true, FileName: o.Path,
			LanguageID: o.LanguageID, LineCount: o.LineCount, IsUntitled: o.Untitled,
		}
		if o.Selection != nil {
			t.Selection = &editorSelection{Start: o.Selection.Start, End: o.Selection.End}
		}
		tabs = append(tabs, t)
	}
	return jsonText(struct {
		Tabs []editorTab `json:"tabs"`
	}{tabs})
}

type workspaceFolder struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
	Path string `json:"path"`
}

func (e *Editor) getWorkspaceFolders(ctx context.Context) (string, error) {
	var cwd string
	if err := neovims.ExecLua(ctx, e.v, "read the cwd", `return vim.fn.getcwd()`, &cwd); err != nil {
		return "", err
	}
	return jsonText(struct {
		Success  bool              `json:"success"`
		Folders  []workspaceFolder `json:"folders"`
		RootPath string            `json:"rootPath"`
	}{true, []workspaceFolder{{Name: filepath.Base(cwd), URI: "file://" + cwd, Path: cwd}}, cwd})
}

type documentAnswer struct {
	Open     bool   `msgpack:"open"`
	Dirty    bool   `msgpack:"dirty"`
	Untitled bool   `msgpack:"untitled"`
	Saved    bool   `msgpack:"saved"`
	Error    string `msgpack:"error"`
}

// askDocument looks up (or with save, writes) the document that args name. A
// document not open in a buffer gets its whole answer here (answer != "").
func (e *Editor) askDocument(ctx context.Context, args map[string]any, what string, save bool) (path string, ans documentAnswer, answer string, err error) {
	if path, err = requiredString(args, "filePath"); err != nil {
		return "", ans, "", err
	}
	if err = neovims.CallLua(ctx, e.v, what, "query.document", &ans, expandHome(path), save); err != nil {
		return "", ans, "", err
	}
	if !ans.Open {
		answer, err = failure("Document not open: " + path)
	}
	return path, ans, answer, err
}

func (e *Editor) checkDocumentDirty(ctx context.Context, args map[string]any) (string, error) {
	path, ans, answer, err := e.askDocument(ctx, args, "checkDocumentDirty", false)
	if answer != "" || err != nil {
		return answer, err
	}
	return jsonText(struct {
		fileAnswer
		IsDirty    bool `json:"isDirty"`
		IsUntitled bool `json:"isUntitled"`
	}{fileAnswer{true, path}, ans.Dirty, ans.Untitled})
}

func (e *Editor) saveDocument(ctx context.Context, args map[string]any) (string, error) {
	path, ans, answer, err := e.askDocument(ctx, args, "saveDocument", true)
	if answer != "" || err != nil {
		return answer, err
	}
	if !ans.Saved {
		return jsonText(struct {
			Success  bool   `json:"success"`
			Message  string `json:"message"`
			FilePath string `json:"filePath"`
		}{false, "Failed to save file: " + ans.Error, path})
	}
	return jsonText(struct {
		fileAnswer
		Saved   bool   `json:"saved"`
		Message string `json:"message"`
	}{fileAnswer{true, path}, true, "Document saved successfully"})
}
