package files

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/tests/bench/benchtab"
)

// call is one tool call: the tool's name and its arguments.
type call struct {
	tool string
	args map[string]any
}

// server is how to run one MCP file server and call its tools.
type server struct {
	name string
	// command is the executable and args its arguments for a workspace folder.
	command func() (string, bool)
	args    func(dir string) []string
	// read reads a whole file; edit replaces one unique string in a file.
	read func(path string) call
	edit func(path, old, new string) call
	// conversations: the server groups changes by mcp_conversation_id, which an agent
	// passes on every call after its first.
	conversations bool
}

// The three servers. mcpdiff has two whole-file reads; the benchmarks measure both.
var (
	mcpdiff = server{
		name:    "mcpdiff",
		command: func() (string, bool) { return testenv.Binary, true },
		args:    func(dir string) []string { return []string{"serve", "--root", dir} },
		read: func(path string) call {
			return call{"read_text_file", map[string]any{"path": path}}
		},
		edit: func(path, old, new string) call {
			return call{"edit_file", map[string]any{"path": path, "old_string": old, "new_string": new}}
		},
		conversations: true,
	}
	reference = peer("reference", "read_text_file", func(path, old, new string) call {
		return call{"edit_file", map[string]any{"path": path, "edits": []any{map[string]any{"oldText": old, "newText": new}}}}
	})
	mark3labs = peer("mark3labs", "read_file", func(path, old, new string) call {
		return call{"modify_file", map[string]any{"path": path, "find": old, "replace": new}}
	})
	servers = []server{mcpdiff, reference, mark3labs}
)

// peer is a peer server that scripts/peers installed, serving the folder it is given:
// read is the tool that reads a whole file, edit the call that replaces a string.
func peer(name, read string, edit func(path, old, new string) call) server {
	return server{
		name:    name,
		command: func() (string, bool) { c, ok := peers[name]; return c, ok },
		args:    func(dir string) []string { return []string{dir} },
		read:    func(path string) call { return call{read, map[string]any{"path": path}} },
		edit:    edit,
	}
}

// readFiles is mcpdiff's batch-toolkit read, the other whole-file read it offers.
func readFiles(path string) call { return call{"read_files", map[string]any{"path": path}} }

// conn is one client connected to one running server.
type conn struct {
	srv  server
	c    *testenv.MCPClient
	conv string // mcp_conversation_id to pass, once the server gave one
}

// connect starts srv on the workspace dir and completes the MCP handshake. A peer
// that is not installed skips the benchmark.
func connect(b *testing.B, srv server, dir string) *conn {
	b.Helper()
	command, ok := srv.command()
	if !ok {
		b.Skipf("%s is not installed, so it is left out (%s)", srv.name, orUnknown(peerProblem))
	}
	// Every server is spoken to with the same handshake: the newest protocol version
	// that still uses initialize, which all three understand.
	c := testenv.StartMCP(b, testenv.MCPServer{Command: command, Args: srv.args(dir), Dir: dir,
		Client: "mcpdiff-bench", ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION})
	return &conn{srv: srv, c: c}
}

func orUnknown(s string) string {
	if s == "" {
		return "scripts/peers did not list it"
	}
	return s
}

// call runs one tool call and returns its text. A failed call ends the benchmark:
// a figure for work that was not done would be meaningless.
func (cn *conn) call(b *testing.B, c call) string {
	b.Helper()
	text, err := cn.try(c)
	if err != nil {
		b.Fatalf("%s %s: %v", cn.srv.name, c.tool, err)
	}
	return text
}

var convLine = regexp.MustCompile(`mcp_conversation_id: (\S+)`)

// edit is the call that replaces old with new in path. For mcpdiff it carries the
// conversation id the server handed out on the first change, as an agent passes it
// on every later change of its turn.
func (cn *conn) edit(path, old, new string) call {
	c := cn.srv.edit(path, old, new)
	if cn.srv.conversations && cn.conv != "" {
		c.args["mcp_conversation_id"] = cn.conv
	}
	return c
}

// try runs one tool call; safe for concurrent use once conv is set.
func (cn *conn) try(c call) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := cn.c.Call(ctx, c.tool, c.args)
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, cn.c.Stderr)
	}
	text := resultText(res)
	if res.IsError {
		return "", fmt.Errorf("tool error: %.500s", text)
	}
	if cn.srv.conversations && cn.conv == "" {
		if m := convLine.FindStringSubmatch(text); m != nil {
			cn.conv = m[1]
		}
	}
	return text, nil
}

// resultText joins a result's text, whether it came as text or as an embedded
// text resource (mark3labs answers reads with both).
func resultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			sb.WriteString(c.Text)
		case mcp.EmbeddedResource:
			if r, ok := c.Resource.(mcp.TextResourceContents); ok {
				sb.WriteString(r.Text)
			}
		}
	}
	return sb.String()
}

// peakRSS is the server process's peak resident memory in bytes (Linux; 0 elsewhere).
func (cn *conn) peakRSS() float64 {
	if cn.c.Cmd == nil || cn.c.Cmd.Process == nil {
		return 0
	}
	kb, err := benchtab.StatusKB(cn.c.Cmd.Process.Pid, "VmHWM")
	if err != nil {
		return 0
	}
	return float64(kb) * 1024
}

func (cn *conn) close() { cn.c.Close() }
