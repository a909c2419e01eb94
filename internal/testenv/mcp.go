package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// MCPServer says how StartMCP runs an MCP server over stdio.
type MCPServer struct {
	Command string   // the program; "" is the binary under test
	Args    []string // its arguments
	Dir     string   // its working folder; "" is the test's
	Env     []string // added to the test's environment
	Client  string   // the client's name in the handshake (clientInfo)
	// Roots, when set, answers the server's roots/list, and the handshake declares
	// the roots capability as a client that supports roots does.
	Roots client.RootsHandler
	// ProtocolVersion is the version the client asks for; "" is mcp-go's default.
	ProtocolVersion string
}

// MCPClient is mark3labs/mcp-go's own client, connected to a server process.
type MCPClient struct {
	*client.Client
	Cmd    *exec.Cmd   // the server process
	Stderr *SyncBuffer // what the server wrote on stderr
}

// StartMCP starts the server, completes the MCP handshake, and closes the client
// (which ends the server) when the test ends. A server that does not start or does
// not answer the handshake fails the test, with what it wrote on stderr.
func StartMCP(tb testing.TB, s MCPServer) *MCPClient {
	tb.Helper()
	command := s.Command
	if command == "" {
		command = Binary
	}
	m := &MCPClient{Stderr: &SyncBuffer{}}
	// The server lives as long as the test, not as long as the context Start is
	// called with (exec.CommandContext would kill it when that ends).
	cmdFunc := func(_ context.Context, name string, env, args []string) (*exec.Cmd, error) {
		m.Cmd = exec.Command(name, args...)
		m.Cmd.Env = append(os.Environ(), append(env, s.Env...)...)
		m.Cmd.Dir = s.Dir
		return m.Cmd, nil
	}
	tr := transport.NewStdioWithOptions(command, nil, s.Args,
		transport.WithCommandFunc(cmdFunc), transport.WithCommandStderrWriter(m.Stderr))
	var opts []client.ClientOption
	if s.Roots != nil {
		opts = append(opts, client.WithRootsHandler(s.Roots))
	}
	if s.ProtocolVersion != "" {
		opts = append(opts, client.WithProtocolVersion(s.ProtocolVersion))
	}
	m.Client = client.NewClient(tr, opts...)
	tb.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), Scaled(30*time.Second))
	defer cancel()
	if err := Handshake(ctx, m.Client, s.Client, s.Roots != nil); err != nil {
		tb.Fatalf("start %s: %v\n%s", command, err, m.Stderr)
	}
	return m
}

// Handshake starts c and completes the MCP handshake within ctx, introducing the
// client as name; with roots, it declares the roots capability as a client that
// supports roots does.
func Handshake(ctx context.Context, c *client.Client, name string, roots bool) error {
	// Start's context also serves the server's requests (roots/list) later on.
	if err := c.Start(context.Background()); err != nil {
		return err
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if roots {
		req.Params.Capabilities.Roots = &struct {
			ListChanged bool `json:"listChanged,omitempty"`
		}{ListChanged: true}
	}
	if _, err := c.Initialize(ctx, req); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return nil
}

// Call calls tool with args.
func (m *MCPClient) Call(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	return m.CallTool(ctx, req)
}
