//go:build unix

package nvimtest

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// toolError waits for a tools/call that must fail and returns its JSON-RPC error.
func toolError(t *testing.T, c *ideClient, ch <-chan rpcMessage, what string) (int, string, any) {
	t.Helper()
	m := c.Await(ch, what)
	if m.Error == nil {
		t.Fatalf("%s succeeded: %s", what, m.Raw)
	}
	return m.Error.Code, m.Error.Message, m.Error.Data
}

func TestGetDiagnostics(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hello.txt", "print(foo)\n")
		uri := "file://" + path

		code, msg, data := toolError(t, c, c.CallTool("getDiagnostics", map[string]any{"uri": uri}), "getDiagnostics")
		if code != -32001 || msg != "File not open" || data != "File must be open to retrieve diagnostics: "+path {
			t.Fatalf("getDiagnostics of a file without a buffer: %d %q %v", code, msg, data)
		}

		s.cmd("edit " + path)
		texts := c.Texts(c.CallTool("getDiagnostics", map[string]any{"uri": uri}), "getDiagnostics")
		expectTexts(t, "getDiagnostics without diagnostics", texts, `[{"uri":"`+uri+`","diagnostics":[]}]`)

		s.lua(`vim.diagnostic.set(vim.api.nvim_create_namespace("fake-lsp"), 0, {
  { lnum = 0, col = 6, end_col = 9, message = 'undefined name "foo"', severity = 1, source = "fake-lsp", code = "E42" },
  { lnum = 0, col = 0, message = "style", severity = vim.diagnostic.severity.HINT },
})`, nil)
		want := `[{"uri":"` + uri + `","diagnostics":[` +
			`{"message":"undefined name \"foo\"","severity":"Error","range":{"start":{"line":0,"character":6},"end":{"line":0,"character":9}},"source":"fake-lsp","code":"E42"},` +
			`{"message":"style","severity":"Hint","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}]}]`
		expectTexts(t, "getDiagnostics {uri}", c.Texts(c.CallTool("getDiagnostics", map[string]any{"uri": uri}), "getDiagnostics"), want)
		expectTexts(t, "getDiagnostics {}", c.Texts(c.CallTool("getDiagnostics", nil), "getDiagnostics"), want)
	})
}

func TestDocumentTools(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hello.txt", "hello\n")
		missing := filepath.Join(s.ws, "missing.txt")

		expectTexts(t, "checkDocumentDirty (not open)",
			c.Texts(c.CallTool("checkDocumentDirty", map[string]any{"filePath": path}), "checkDocumentDirty"),
			`{"success":false,"message":"Document not open: `+path+`"}`)
		s.cmd("edit " + path)
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, -1, false, { "changed" })`, nil)
		expectTexts(t, "checkDocumentDirty",
			c.Texts(c.CallTool("checkDocumentDirty", map[string]any{"filePath": path}), "checkDocumentDirty"),
			`{"success":true,"filePath":"`+path+`","isDirty":true,"isUntitled":false}`)
		expectTexts(t, "saveDocument",
			c.Texts(c.CallTool("saveDocument", map[string]any{"filePath": path}), "saveDocument"),
			`{"success":true,"filePath":"`+path+`","saved":true,"message":"Document saved successfully"}`)
		if got := testenv.ReadFile(t, path); got != "changed\n" {
			t.Fatalf("saveDocument wrote %q", got)
		}
		expectTexts(t, "getWorkspaceFolders",
			c.Texts(c.CallTool("getWorkspaceFolders", nil), "getWorkspaceFolders"),
			`{"success":true,"folders":[{"name":"ws","uri":"file://`+s.ws+`","path":"`+s.ws+`"}],"rootPath":"`+s.ws+`"}`)

		var editors struct {
			Tabs []map[string]any `json:"tabs"`
		}
		text := c.Texts(c.CallTool("getOpenEditors", nil), "getOpenEditors")[0]
		if err := json.Unmarshal([]byte(text), &editors); err != nil || len(editors.Tabs) != 1 ||
			editors.Tabs[0]["fileName"] != path || editors.Tabs[0]["isActive"] != true || editors.Tabs[0]["label"] != "hello.txt" {
			t.Fatalf("getOpenEditors = %s", text)
		}

		code, msg, data := toolError(t, c, c.CallTool("openFile", map[string]any{"filePath": missing}), "openFile")
		if code != -32000 || msg != "File operation error" || data != "File not found: "+missing {
			t.Fatalf("openFile of a missing file: %d %q %v", code, msg, data)
		}
	})
}

func TestOpenFile(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("code.go", "package main\n\nfunc main() {\n\tprintln(1)\n}\n")
		tests := []struct {
			args map[string]any
			want string
		}{
			{map[string]any{}, "Opened file: " + path},
			{map[string]any{"startLine": 3, "endLine": 4}, "Opened file and selected lines 3 to 4"},
			{map[string]any{"startText": "func", "endText": ""}, `Opened file and selected text "func"`},
			{map[string]any{"startText": "func", "endText": "}"}, `Opened file and selected text from "func" to "}"`},
			{map[string]any{"startText": "func", "endText": "nope"}, `Opened file and positioned at "func" (end text "nope" not found)`},
			{map[string]any{"startText": "nope"}, `Opened file, but text "nope" not found`},
		}
		for _, tt := range tests {
			tt.args["filePath"] = path
			expectTexts(t, "openFile", c.Texts(c.CallTool("openFile", tt.args), "openFile"), tt.want)
			if s.currentBufName() != path {
				t.Fatalf("openFile %v: current buffer %q", tt.args, s.currentBufName())
			}
			s.input("<Esc>")
		}
		s.cmd("enew")
		background := c.Texts(c.CallTool("openFile", map[string]any{
			"filePath": path, "preview": false, "startText": "", "endText": "", "selectToEndOfLine": false, "makeFrontmost": false,
		}), "openFile")
		expectTexts(t, "openFile in the background", background,
			`{"success":true,"filePath":"`+path+`","languageId":"plaintext","lineCount":5}`)
		if s.currentBufName() != "" {
			t.Fatalf("openFile with makeFrontmost=false took the focus: %q", s.currentBufName())
		}
	})
}

// openFile opens a file whose name holds a newline, not another file: an Ex command
// cannot hold one (":edit two\<NL>rows.txt" opened an empty "tworows.txt").
func TestOpenFileWithANewlineInItsName(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("two\nrows.txt", "first\nsecond\n")
		expectTexts(t, "openFile", c.Texts(c.CallTool("openFile", map[string]any{"filePath": path}), "openFile"), "Opened file: "+path)
		if s.currentBufName() != path {
			t.Fatalf("openFile opened %q", s.currentBufName())
		}
		if lines := luaValue[[]string](s, `return vim.api.nvim_buf_get_lines(0, 0, -1, false)`); strings.Join(lines, "|") != "first|second" {
			t.Fatalf("openFile shows %q", lines)
		}
	})
}

// openFile in the background names the language of a file no buffer holds by its
// name, on every Neovim (0.7's vim.filetype.match has another signature).
func TestOpenFileInTheBackgroundNamesTheLanguage(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("script.lua", "x = 1\ny = 2\n")
		answer := c.Texts(c.CallTool("openFile", map[string]any{
			"filePath": path, "preview": false, "startText": "", "endText": "", "selectToEndOfLine": false, "makeFrontmost": false,
		}), "openFile")
		expectTexts(t, "openFile in the background", answer,
			`{"success":true,"filePath":"`+path+`","languageId":"lua","lineCount":2}`)
		if n := luaValue[int](s, `return #vim.api.nvim_list_bufs()`); n != 1 {
			t.Fatalf("openFile in the background left %d buffers", n)
		}
	})
}

// openFile never puts the file in a sidebar: with the cursor in a file tree, it
// uses the editor window beside it, as the diff view does.
func TestOpenFileLeavesASidebarAlone(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("code.go", "package main\n")
		var tree, editor int
		s.lua(`vim.cmd("topleft vnew")
vim.bo.buftype = "nofile"
vim.bo.filetype = "NvimTree"
vim.cmd("vertical resize 30")
local tree = vim.api.nvim_get_current_win()
local editor
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  if w ~= tree then editor = w end
end
return { tree, editor }`, &[]*int{&tree, &editor})
		expectTexts(t, "openFile", c.Texts(c.CallTool("openFile", map[string]any{"filePath": path}), "openFile"), "Opened file: "+path)
		var treeFT, shown string
		var current int
		s.lua(`local tree, editor = ...
return { vim.bo[vim.api.nvim_win_get_buf(tree)].filetype, vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(editor)), vim.api.nvim_get_current_win() }`,
			&[]any{&treeFT, &shown, &current}, tree, editor)
		if treeFT != "NvimTree" || shown != path || current != editor {
			t.Fatalf("after openFile the tree window shows %q, the editor window %q, the cursor is in window %d (tree %d, editor %d)",
				treeFT, shown, current, tree, editor)
		}
	})
}

func TestSelectionTools(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		expectTexts(t, "getLatestSelection", c.Texts(c.CallTool("getLatestSelection", nil), "getLatestSelection"),
			`{"success":false,"message":"No selection available"}`)
		expectTexts(t, "getCurrentSelection", c.Texts(c.CallTool("getCurrentSelection", nil), "getCurrentSelection"),
			`{"success":false,"message":"No active editor found"}`)
		path := s.writeFile("hello.txt", "hello world\n")
		s.cmd("edit " + path)
		s.input("wve")
		eventually(t, "the selection to be tracked", func() bool {
			for _, n := range c.Notifications("selection_changed") {
				var p selectionParams
				if json.Unmarshal(n.Params, &p) == nil && p.Text == "world" {
					return true
				}
			}
			return false
		})
		sel := `"text":"world","filePath":"` + path + `","fileUrl":"file://` + path +
			`","selection":{"start":{"line":0,"character":6},"end":{"line":0,"character":11},"isEmpty":false}}`
		expectTexts(t, "getLatestSelection", c.Texts(c.CallTool("getLatestSelection", nil), "getLatestSelection"), "{"+sel)
		expectTexts(t, "getCurrentSelection", c.Texts(c.CallTool("getCurrentSelection", nil), "getCurrentSelection"), `{"success":true,`+sel)
	})
}
