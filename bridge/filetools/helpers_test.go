package filetools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// testClient is an in-process MCP client of a Server, as the agent sees it.
type testClient struct {
	t *testing.T
	c *client.Client
}

// serve starts a server with cfg and connects a client to it.
func serve(t *testing.T, cfg Config) *testClient {
	t.Helper()
	c, _ := serveServer(t, cfg)
	return c
}

// serveServer is serve that also returns the server.
func serveServer(t *testing.T, cfg Config) (*testClient, *Server) {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv.mcp)
	if err != nil {
		t.Fatal(err)
	}
	return initialize(t, c, false), srv
}

// initialize starts c and completes the handshake, declaring the roots capability
// when roots is set; c is closed when the test ends.
func initialize(t *testing.T, c *client.Client, roots bool) *testClient {
	t.Helper()
	if err := testenv.Handshake(t.Context(), c, "bridge-test", roots); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &testClient{t: t, c: c}
}

// call runs a tool and returns its text and whether it is an error.
func (c *testClient) call(tool string, args map[string]any) (string, bool) {
	c.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.c.CallTool(c.t.Context(), req)
	if err != nil {
		c.t.Fatalf("%s: %v", tool, err)
	}
	var text strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), res.IsError
}

func (c *testClient) ok(tool string, args map[string]any) string {
	c.t.Helper()
	text, isErr := c.call(tool, args)
	if isErr {
		c.t.Fatalf("%s failed: %s", tool, text)
	}
	return text
}

// fails runs a call that must fail with a text holding every want.
func (c *testClient) fails(tool string, args map[string]any, want ...string) string {
	c.t.Helper()
	text, isErr := c.call(tool, args)
	if !isErr {
		c.t.Fatalf("%s succeeded, want an error: %s", tool, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			c.t.Errorf("%s's error lacks %q:\n%s", tool, w, text)
		}
	}
	return text
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// expectFile checks a file's content and mode.
func expectFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if string(got) != content {
		t.Errorf("%s holds %q, want %q", path, got, content)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode()&modeBits != mode {
		t.Errorf("%s has mode %v, want %v", path, fi.Mode()&modeBits, mode)
	}
}

func expectMissing(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("%s exists (err %v), want it gone", path, err)
	}
}

// sabotaged are the files of a commit with a sabotage after their Stage or Apply:
// it may break the disk for real, and its error fails the commit.
type sabotaged struct {
	history.Files
	afterStage, afterApply func() error
}

func (f *sabotaged) Stage() error {
	if err := f.Files.Stage(); err != nil || f.afterStage == nil {
		return err
	}
	return f.afterStage()
}

func (f *sabotaged) Apply() error {
	if err := f.Files.Apply(); err != nil || f.afterApply == nil {
		return err
	}
	return f.afterApply()
}

// sabotage makes srv's commits that change path run with f's sabotage.
func sabotage(srv *Server, path string, f sabotaged) {
	srv.recordAll = func(ctx context.Context, batches []history.Batch) ([][]*history.Entry, error) {
		for i, b := range batches {
			if changes(b, path) {
				s := f
				s.Files = b.Files
				batches[i].Files = &s
			}
		}
		return history.RecordAll(ctx, batches)
	}
}

// changes reports whether b changes path.
func changes(b history.Batch, path string) bool {
	for _, c := range b.Commits {
		for _, ch := range c.Changes {
			if ch.Path == path {
				return true
			}
		}
	}
	return false
}

// modeBits are the mode bits an undone change puts back.
const modeBits = os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky

// umask is the process's file mode creation mask.
func umask(t *testing.T) os.FileMode {
	t.Helper()
	path := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(path, nil, 0o777); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ fi.Mode().Perm()
}
