// Package serve holds the end-to-end tests of `mcpdiff serve`: the binary runs as a
// subprocess and is driven through mark3labs/mcp-go's own client, over stdio and
// streamable HTTP, with real files in temp folders.
package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Suite{}) }

// session is one client connected to one `mcpdiff serve`.
type session struct {
	testenv.Dir
	t      *testing.T
	c      *testenv.MCPClient
	dir    string // the workspace (real path)
	stderr *testenv.SyncBuffer
}

// start runs `mcpdiff serve --root <fresh temp dir>` (plus args) and connects.
func start(t *testing.T, args ...string) *session {
	t.Helper()
	return startIn(t, testenv.TempDir(t), args...)
}

// startIn runs `mcpdiff serve --root dir` (plus args) and connects.
func startIn(t *testing.T, dir string, args ...string) *session {
	t.Helper()
	return startWith(t, dir, testenv.MCPServer{Args: append([]string{"--root", dir}, args...)})
}

// startWith runs `mcpdiff serve` (plus srv.Args) for the workspace dir, in srv.Dir
// (dir when not set), and connects.
func startWith(t *testing.T, dir string, srv testenv.MCPServer) *session {
	t.Helper()
	srv.Args = append([]string{"serve"}, srv.Args...)
	if srv.Dir == "" {
		srv.Dir = dir
	}
	srv.Client = "mcpdiff-e2e"
	c := testenv.StartMCP(t, srv)
	return &session{Dir: testenv.Dir{TB: t, Root: dir}, t: t, c: c, dir: dir, stderr: c.Stderr}
}

// call calls a tool and returns its text and whether it is an error result.
func (s *session) call(tool string, args map[string]any) (string, bool) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(60*time.Second))
	defer cancel()
	res, err := s.c.Call(ctx, tool, args)
	if err != nil {
		s.t.Fatalf("%s: %v\nserver stderr:\n%s", tool, err, s.stderr.String())
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

// ok calls a tool that must succeed.
func (s *session) ok(tool string, args map[string]any) string {
	s.t.Helper()
	text, isErr := s.call(tool, args)
	if isErr {
		s.t.Fatalf("%s %v failed: %s", tool, args, text)
	}
	return text
}

// fails calls a tool that must fail, and checks its message mentions every want.
func (s *session) fails(tool string, args map[string]any, want ...string) string {
	s.t.Helper()
	text, isErr := s.call(tool, args)
	if !isErr {
		s.t.Fatalf("%s %v succeeded, want an error: %s", tool, args, text)
	}
	if !strings.HasPrefix(text, "Error: ") {
		s.t.Fatalf("%s error does not start with \"Error: \": %q", tool, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			s.t.Fatalf("%s error %q does not mention %q", tool, text, w)
		}
	}
	return text
}

func (s *session) expect(rel, want string) {
	s.t.Helper()
	if got := s.Read(rel); got != want {
		s.t.Fatalf("%s:\n got %q\nwant %q", rel, got, want)
	}
}

func (s *session) missing(rel string) {
	s.t.Helper()
	if _, err := os.Lstat(s.Path(rel)); err == nil {
		s.t.Fatalf("%s exists, want it missing", rel)
	}
}

// entries runs `mcpdiff status --json` in the workspace.
func (s *session) entries() []map[string]any {
	s.t.Helper()
	out, code := cli(s.t, s.dir, "status", "--json")
	if code != 0 {
		s.t.Fatalf("status failed (%d): %s", code, out)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		s.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return list
}

// cli runs the mcpdiff CLI in dir and returns stdout then stderr, and the exit code.
func cli(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	out, errOut, code := cliSplit(t, dir, args...)
	return out + errOut, code
}

// convOf extracts the conversation id a first call returned.
func convOf(t *testing.T, text string) string {
	t.Helper()
	i := strings.Index(text, "mcp_conversation_id: ")
	if i < 0 {
		t.Fatalf("no new conversation id in %q", text)
	}
	return strings.Fields(text[i+len("mcp_conversation_id: "):])[0]
}

// numberedLines is "line 1\n" to "line n\n", with the lines of edit in place of theirs.
func numberedLines(n int, edit map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := edit[i]; ok {
			b.WriteString(s)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}
