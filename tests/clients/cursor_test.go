//go:build unix

package clients

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// cursorEntry is one server of Cursor's mcp.json, as Cursor's documentation has it:
// `command`, `args` and `env` start a stdio server; `url` and `headers` reach an HTTP
// one; `${env:NAME}` in a value is the variable's value.
type cursorEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// checkCursor uses the Cursor entry of docs/clients.md as Cursor does, with this test's MCP
// client: starts the command in the project, or connects to the URL with the headers,
// and lists the tools. Cursor's CLI is not on npm, so it cannot run here.
func checkCursor(t *testing.T, c config) {
	var file struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(c.body), &file); err != nil {
		t.Fatalf("docs/clients.md's %s is not valid JSON: %v\n%s", c.file, err, c.body)
	}
	var entry cursorEntry
	dec := json.NewDecoder(strings.NewReader(string(file.MCPServers["mcpdiff"])))
	dec.DisallowUnknownFields() // only the keys Cursor's documentation names
	if err := dec.Decode(&entry); err != nil {
		t.Fatalf("docs/clients.md's %s: mcpServers.mcpdiff: %v\n%s", c.file, err, c.body)
	}
	p := newProject(t, t.TempDir())
	env := map[string]string{}
	for _, kv := range p.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	expand := func(s string) string {
		return regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`).ReplaceAllStringFunc(s, func(m string) string {
			return env[m[len("${env:"):len(m)-1]]
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()

	if !c.http {
		if entry.Command == "" || entry.URL != "" {
			t.Fatalf("docs/clients.md's stdio entry for Cursor needs command and no url: %+v", entry)
		}
		command, err := testenv.LookPath(entry.Command, env["PATH"])
		if err != nil {
			t.Fatal(err)
		}
		var extra []string
		for k, v := range entry.Env {
			extra = append(extra, k+"="+expand(v))
		}
		cmdFunc := func(_ context.Context, name string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.Command(name, args...)
			cmd.Env, cmd.Dir = append(append([]string{}, p.env...), extra...), p.dir
			return cmd, nil
		}
		listTools(t, ctx, transport.NewStdioWithOptions(command, nil, entry.Args, transport.WithCommandFunc(cmdFunc)), true)
		return
	}

	if entry.URL != httpURL || entry.Command != "" {
		t.Fatalf("docs/clients.md's HTTP entry for Cursor needs url %s and no command: %+v", httpURL, entry)
	}
	// The page's port may be taken on this machine: the server listens on a free
	// one, and the URL is changed to it.
	for _, tc := range []struct {
		serverToken string
		want        bool
	}{{p.token, true}, {"not-" + p.token, false}} {
		addr := startHTTPServer(t, p, tc.serverToken)
		headers := map[string]string{}
		for k, v := range entry.Headers {
			headers[k] = expand(v)
		}
		tr, err := transport.NewStreamableHTTP(strings.Replace(entry.URL, "127.0.0.1:8123", addr, 1), transport.WithHTTPHeaders(headers))
		if err != nil {
			t.Fatal(err)
		}
		listTools(t, ctx, tr, tc.want)
	}
}

// listTools connects over tr and checks that mcpdiff's tools are listed (want), or
// that the connection is refused (!want).
func listTools(t *testing.T, ctx context.Context, tr transport.Interface, want bool) {
	t.Helper()
	c := client.NewClient(tr)
	defer c.Close()
	err := c.Start(ctx)
	if err == nil {
		req := mcp.InitializeRequest{}
		req.Params.ClientInfo = mcp.Implementation{Name: "cursor-config-check", Version: "1"}
		_, err = c.Initialize(ctx, req)
	}
	if !want {
		if err == nil {
			t.Fatal("a server with another token accepted the Cursor entry of docs/clients.md")
		}
		return
	}
	if err != nil {
		t.Fatalf("connect with the Cursor entry of docs/clients.md: %v", err)
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
	}
	for _, name := range []string{"read_text_file", "edit_file", "write_file"} {
		if !names[name] {
			t.Fatalf("tools/list lacks %s: %v", name, names)
		}
	}
}

// startHTTPServer starts `mcpdiff serve --http` on a free loopback port, in the
// project, with the given token, and returns its address.
func startHTTPServer(t *testing.T, p *project, token string) string {
	t.Helper()
	cmd := exec.Command(testenv.Binary, "serve", "--http", "127.0.0.1:0")
	cmd.Env, cmd.Dir = append(append([]string{}, p.env...), "MCPDIFF_HTTP_TOKEN="+token), p.dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return testenv.FirstMatch(t, stderr, regexp.MustCompile(`serving MCP on http://(127\.0\.0\.1:\d+)/mcp`))
}
