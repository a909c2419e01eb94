package ide

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

func TestMalformedJSONIsAParseError(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	ch := c.expect("null")
	c.send(`{"jsonrpc":"2.0","id":7,"method":`)
	wantError(t, c.await(ch, "malformed frame"), -32700, "")
}

func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	wantError(t, c.call("resources/list", nil), -32601, "")
	wantError(t, c.call("no/such/method", map[string]any{}), -32601, "")
}

func TestUnknownToolIsToolNotFound(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	m := c.callTool("noSuchTool", map[string]any{})()
	wantError(t, m, -32601, "")
	if m.Error.Message != "Tool not found: noSuchTool" {
		t.Errorf("message %q, want %q", m.Error.Message, "Tool not found: noSuchTool")
	}
}

func TestExecuteCodeIsNeitherListedNorCallable(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	if names := toolNames(t, c.call("tools/list", nil)); contains(names, "executeCode") {
		t.Errorf("tools/list offers executeCode: %v", names)
	}
	wantError(t, c.callTool("executeCode", map[string]any{"code": "print(1)"})(), -32601, "")
	if calls := s.editor.callLog(); len(calls) != 0 {
		t.Errorf("editor calls: %v", calls)
	}
}

// toolCall is a call of one of the tools and a string its test expects of it.
type toolCall struct {
	tool string
	args map[string]any
	want string
}

func TestMissingRequiredParameterIsInvalidParams(t *testing.T) {
	tests := []toolCall{
		{"openDiff", map[string]any{"old_file_path": "/a", "new_file_path": "/a", "new_file_contents": ""}, "tab_name"},
		{"openDiff", map[string]any{}, "old_file_path"},
		{"close_tab", map[string]any{}, "tab_name"},
		{"openFile", map[string]any{"preview": false}, "filePath"},
		{"checkDocumentDirty", map[string]any{}, "filePath"},
		{"saveDocument", nil, "filePath"},
	}
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	for _, tt := range tests {
		t.Run(tt.tool+" without "+tt.want, func(t *testing.T) {
			m := c.callTool(tt.tool, tt.args)()
			wantError(t, m, -32602, "Missing required parameter: "+tt.want)
			if m.Error.Message != "Invalid params" {
				t.Errorf("message %q, want Invalid params", m.Error.Message)
			}
		})
	}
	if calls := s.editor.callLog(); len(calls) != 0 {
		t.Errorf("editor calls for invalid requests: %v", calls)
	}
}

func TestPingAnswersAnEmptyObject(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	m := c.call("ping", nil)
	if m.Error != nil || string(m.Result) != "{}" {
		t.Fatalf("ping answered %s, want {}", m.raw)
	}
}

func TestLoggingSetLevelIsAccepted(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	if m := c.call("logging/setLevel", map[string]any{"level": "debug"}); m.Error != nil || string(m.Result) != "{}" {
		t.Fatalf("logging/setLevel answered %s, want {}", m.raw)
	}
}

func TestNotificationsAreNeverAnswered(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	c.send(`{"jsonrpc":"2.0","method":"some/future/notification","params":{}}`)
	c.send(`{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":1}}`)
	// A response from the client (we never ask it anything) is not answered either.
	c.send(`{"jsonrpc":"2.0","id":500,"result":{}}`)
	// The ping's answer is the next message; anything else is caught as unexpected.
	if m := c.call("ping", nil); m.Error != nil {
		t.Fatalf("ping: %+v", *m.Error)
	}
}

func TestToolsListSnapshot(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	m := c.call("tools/list", nil)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, m.Result, "", "  "); err != nil {
		t.Fatalf("indent %s: %v", m.Result, err)
	}
	pretty.WriteString("\n")
	testenv.Snapshot(t, filepath.Join("testdata", "tools_list.golden.json"), pretty.Bytes())
	names := toolNames(t, m)
	for _, name := range []string{"openDiff", "close_tab", "closeAllDiffTabs", "openFile", "getDiagnostics",
		"getCurrentSelection", "getLatestSelection", "getOpenEditors", "getWorkspaceFolders",
		"checkDocumentDirty", "saveDocument"} {
		if !contains(names, name) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
}

func TestSimpleToolsAnswerTheEditorsText(t *testing.T) {
	tests := []toolCall{
		{"openFile", map[string]any{"filePath": "/w/a.go", "makeFrontmost": false}, `{"success":true,"filePath":"/w/a.go","languageId":"go","lineCount":3}`},
		{"getDiagnostics", map[string]any{"uri": "file:///w/a.go"}, `[{"uri":"file:///w/a.go","diagnostics":[]}]`},
		{"getDiagnostics", map[string]any{}, `[]`},
		{"getCurrentSelection", nil, `{"success":false,"message":"No active editor found"}`},
		{"getLatestSelection", nil, `{"success":false,"message":"No selection available"}`},
		{"getOpenEditors", nil, `{"tabs":[]}`},
		{"getWorkspaceFolders", nil, `{"success":true,"folders":[],"rootPath":"/w"}`},
		{"checkDocumentDirty", map[string]any{"filePath": "/w/a.go"}, `{"success":true,"filePath":"/w/a.go","isDirty":false,"isUntitled":false}`},
		{"saveDocument", map[string]any{"filePath": "/w/a.go"}, `{"success":true,"filePath":"/w/a.go","saved":true,"message":"Document saved successfully"}`},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			s := startServer(t, nil, nil)
			var gotArgs map[string]any
			s.editor.setQuery(func(tool string, args map[string]any) (string, error) {
				if tool != tt.tool {
					t.Errorf("editor queried %s, want %s", tool, tt.tool)
				}
				gotArgs = args
				return tt.want, nil
			})
			c := connectReady(t, s)
			wantTexts(t, c.texts(c.callTool(tt.tool, tt.args)()), tt.want)
			for k, v := range tt.args {
				if gotArgs[k] != v {
					t.Errorf("editor got %s=%v, want %v", k, gotArgs[k], v)
				}
			}
		})
	}
}

func TestEditorToolErrorBecomesAJSONRPCError(t *testing.T) {
	s := startServer(t, nil, nil)
	s.editor.setQuery(func(string, map[string]any) (string, error) {
		return "", &ToolError{Code: -32001, Message: "File not open", Data: "File must be open to retrieve diagnostics: /w/x.go"}
	})
	c := connectReady(t, s)
	m := c.callTool("getDiagnostics", map[string]any{"uri": "file:///w/x.go"})()
	wantError(t, m, -32001, "File must be open to retrieve diagnostics: /w/x.go")
	if m.Error.Message != "File not open" {
		t.Errorf("message %q, want File not open", m.Error.Message)
	}
}

func TestAPanickingEditorDoesNotTakeTheServerDown(t *testing.T) {
	s := startServer(t, nil, nil)
	s.editor.setQuery(func(string, map[string]any) (string, error) { panic("editor bug") })
	c := connectReady(t, s)
	wantError(t, c.callTool("getOpenEditors", nil)(), -32603, "")
	if m := c.call("ping", nil); m.Error != nil {
		t.Fatalf("ping after the panic: %+v", *m.Error)
	}
}

func TestSlowOpenDiffDoesNotBlockOtherRequests(t *testing.T) {
	s := startServer(t, nil, nil)
	gate := make(chan struct{})
	s.editor.setOpenGate(gate) // OpenDiff hangs until the gate opens
	c := connectReady(t, s)
	path := filepath.Join(t.TempDir(), "a.txt")
	waitDiff := c.callTool("openDiff", diffArgs(path, "x\n", "✻ [Claude Code] a.txt (aaaaaa) ⧉"))

	wantTexts(t, c.texts(c.callTool("getDiagnostics", map[string]any{})()), "[]")
	wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": "other"})()), "TAB_CLOSED")

	close(gate)
	s.editor.waitOpened(t)
	s.Answer("✻ [Claude Code] a.txt (aaaaaa) ⧉", false, "")
	wantTexts(t, c.texts(waitDiff()), "DIFF_REJECTED", "✻ [Claude Code] a.txt (aaaaaa) ⧉")
}

func toolNames(t *testing.T, m rpcMessage) []string {
	t.Helper()
	var result struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m.Result, &result); err != nil {
		t.Fatalf("decode tools/list %s: %v", m.Result, err)
	}
	var names []string
	for _, tool := range result.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
