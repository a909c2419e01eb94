package files

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
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
	reference = server{
		name:    "reference",
		command: func() (string, bool) { c, ok := peers["reference"]; return c, ok },
		args:    func(dir string) []string { return []string{dir} },
		read: func(path string) call {
			return call{"read_text_file", map[string]any{"path": path}}
		},
		edit: func(path, old, new string) call {
			return call{"edit_file", map[string]any{"path": path, "edits": []any{map[string]any{"oldText": old, "newText": new}}}}
		},
	}
	mark3labs = server{
		name:    "mark3labs",
		command: func() (string, bool) { c, ok := peers["mark3labs"]; return c, ok },
		args:    func(dir string) []string { return []string{dir} },
		read: func(path string) call {
			return call{"read_file", map[string]any{"path": path}}
		},
		edit: func(path, old, new string) call {
			return call{"modify_file", map[string]any{"path": path, "find": old, "replace": new}}
		},
	}
	servers = []server{mcpdiff, reference, mark3labs}
)

// readFiles is mcpdiff's batch-toolkit read, the other whole-file read it offers.
func readFiles(path string) call { return call{"read_files", map[string]any{"path": path}} }

// conn is one client connected to one running server.
type conn struct {
	srv    server
	c      *client.Client
	cmd    *exec.Cmd           // the server process, for its memory figures
	stderr *testenv.SyncBuffer // what the server printed on stderr, for error messages
	conv   string              // mcp_conversation_id to pass, once the server gave one
}

// connect starts srv on the workspace dir and completes the MCP handshake. A peer
// that is not installed skips the benchmark.
func connect(b *testing.B, srv server, dir string) *conn {
	b.Helper()
	command, ok := srv.command()
	if !ok {
		b.Skipf("%s is not installed, so it is left out (%s)", srv.name, orUnknown(peerProblem))
	}
	cn := &conn{srv: srv, stderr: &testenv.SyncBuffer{}}
	// The server must outlive the context Start is called with, so the command
	// ignores it (exec.CommandContext would kill the server when it ends).
	cmdFunc := func(_ context.Context, command string, env, args []string) (*exec.Cmd, error) {
		cn.cmd = exec.Command(command, args...)
		cn.cmd.Env = append(os.Environ(), env...)
		cn.cmd.Dir = dir
		return cn.cmd, nil
	}
	tr := transport.NewStdioWithOptions(command, nil, srv.args(dir),
		transport.WithCommandFunc(cmdFunc), transport.WithCommandStderrWriter(cn.stderr))
	// Every server is spoken to with the same handshake: the newest protocol version
	// that still uses initialize, which all three understand.
	cn.c = client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	if err := cn.c.Start(context.Background()); err != nil {
		b.Fatalf("start %s: %v\n%s", srv.name, err, cn.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "mcpdiff-bench", Version: "1"}
	if _, err := cn.c.Initialize(ctx, req); err != nil {
		cn.c.Close()
		b.Fatalf("initialize %s: %v\n%s", srv.name, err, cn.stderr)
	}
	return cn
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
	req := mcp.CallToolRequest{}
	req.Params.Name = c.tool
	req.Params.Arguments = c.args
	res, err := cn.c.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, cn.stderr)
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
	if cn.cmd == nil || cn.cmd.Process == nil {
		return 0
	}
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cn.cmd.Process.Pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

func (cn *conn) close() { cn.c.Close() }
