//go:build unix

package serve

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// rootsHandler answers roots/list with whatever folders it currently holds.
type rootsHandler struct {
	mu   sync.Mutex
	dirs []string
}

func (h *rootsHandler) set(dirs ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dirs = dirs
}

func (h *rootsHandler) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	res := &mcp.ListRootsResult{}
	for _, d := range h.dirs {
		res.Roots = append(res.Roots, mcp.Root{URI: "file://" + d, Name: filepath.Base(d)})
	}
	return res, nil
}

func TestClientRootsAreUsedAndRefreshed(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", mcp.LATEST_LEGACY_PROTOCOL_VERSION, "2025-06-18"} {
		t.Run("protocol "+version, func(t *testing.T) {
			one, two := testenv.TempDir(t), testenv.TempDir(t)
			os.WriteFile(filepath.Join(one, "a.txt"), []byte("one\n"), 0o644)
			os.WriteFile(filepath.Join(two, "b.txt"), []byte("two\n"), 0o644)
			roots := &rootsHandler{}
			roots.set(one)
			cwd := testenv.TempDir(t) // not a root: never used when the client has roots
			s := startWith(t, one, testenv.MCPServer{Roots: roots, Dir: cwd, ProtocolVersion: version})
			if got, isErr := s.call("read_files", map[string]any{"path": filepath.Join(one, "a.txt")}); isErr || got != "1 | one" {
				t.Fatalf("read in root one: %q\nserver log:\n%s", got, s.stderr.String())
			}
			s.fails("read_files", map[string]any{"path": filepath.Join(two, "b.txt")}, "outside")

			roots.set(two)
			if err := s.c.RootListChanges(t.Context()); err != nil {
				t.Fatal(err)
			}
			var text string
			if !testenv.Within(testenv.Scaled(10*time.Second), func() bool {
				var isErr bool
				text, isErr = s.call("read_files", map[string]any{"path": filepath.Join(two, "b.txt")})
				return !isErr && text == "1 | two"
			}) {
				t.Fatalf("the new root was never used: %q", text)
			}
			s.fails("read_files", map[string]any{"path": filepath.Join(one, "a.txt")}, "outside")
		})
	}
}

func TestWorkingDirectoryIsTheRootWithoutRootsOrFlags(t *testing.T) {
	t.Parallel()
	cwd := testenv.TempDir(t)
	os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("here\n"), 0o644)
	s := startWith(t, cwd, testenv.MCPServer{})
	if got := s.ok("read_files", map[string]any{"path": "a.txt"}); got != "1 | here" {
		t.Fatalf("%q", got)
	}
	s.fails("read_files", map[string]any{"path": "/etc/hostname"}, "outside")
}

func TestHTTPNeedsTheBearerToken(t *testing.T) {
	t.Parallel()
	dir := testenv.TempDir(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	state := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	cmd := exec.Command(testenv.Binary, "serve", "--root", dir, "--http", addr)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	token := waitForToken(t, stderr)

	_, port, _ := net.SplitHostPort(addr)
	tokenFile := filepath.Join(state, "mcpdiff", "http-"+port+".token")
	b, err := os.ReadFile(tokenFile)
	if err != nil || strings.TrimSpace(string(b)) != token {
		t.Fatalf("token file %s: %q %v", tokenFile, b, err)
	}
	if fi, _ := os.Stat(tokenFile); fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", fi.Mode().Perm())
	}
	// The user finds the file where the README says it is.
	readme, err := os.ReadFile("../../README.md")
	if err != nil || !strings.Contains(string(readme), "$XDG_STATE_HOME/mcpdiff/http-<port>.token") {
		t.Fatalf("README.md does not name the token file $XDG_STATE_HOME/mcpdiff/http-<port>.token (%v)", err)
	}

	resp, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: status %d, want 401", resp.StatusCode)
	}

	tr, err := transport.NewStreamableHTTP("http://"+addr+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(20*time.Second))
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "edit_file"
	req.Params.Arguments = map[string]any{"path": "a.txt", "old_string": "a", "new_string": "b"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("edit over HTTP: %v %+v", err, res)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "b\n" {
		t.Fatalf("a.txt = %q", got)
	}
}

func waitForToken(t *testing.T, stderr io.Reader) string {
	t.Helper()
	return testenv.FirstMatch(t, stderr, regexp.MustCompile(`bearer token: ([0-9a-f]+)`))
}

func TestHTTPRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	out, code := cli(t, t.TempDir(), "serve", "--http", "0.0.0.0:0")
	if code == 0 || !strings.Contains(out, "loopback") {
		t.Fatalf("exit %d: %q", code, out)
	}
}

// startHTTP starts `mcpdiff serve --http` on a free loopback port, with the serve
// flags given, and returns its address, its token and its process.
func startHTTP(t *testing.T, flags ...string) (addr, token string, proc *os.Process) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	token, cmd := startHTTPAt(t, addr, "", flags...)
	return addr, token, cmd.Process
}

// startHTTPAt starts `mcpdiff serve --http addr`, with MCPDIFF_HTTP_TOKEN=token
// unless token is "", and returns the token it serves with and its command.
func startHTTPAt(t *testing.T, addr, token string, flags ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(testenv.Binary, append([]string{"serve", "--root", testenv.TempDir(t), "--http", addr}, flags...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "MCPDIFF_HTTP_TOKEN="+token)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return waitForToken(t, stderr), cmd
}

// A web page the user has open can send requests to 127.0.0.1, and a name the page's
// site controls can be rebound to 127.0.0.1: with the token or not, a request whose
// Origin is not a loopback origin, or whose Host is not a loopback name, is refused
// (403) and does nothing; a local client's request (no Origin, or a loopback one) is
// served.
func TestHTTPRefusesWebPages(t *testing.T) {
	t.Parallel()
	addr, token, _ := startHTTP(t)
	_, port, _ := net.SplitHostPort(addr)
	ping := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		origin, host string
		want         int
	}{
		{"http://evil.example", "", http.StatusForbidden},
		{"null", "", http.StatusForbidden},
		{"https://127.0.0.1.evil.example", "", http.StatusForbidden},
		{"file://", "", http.StatusForbidden},
		{"", "evil.example:" + port, http.StatusForbidden},
		{"", "127.0.0.1.evil.example", http.StatusForbidden},
		{"", "", http.StatusOK},
		{"http://127.0.0.1:" + port, "", http.StatusOK},
		{"http://localhost:3000", "localhost:" + port, http.StatusOK},
		{"http://[::1]", "", http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(ping))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Origin %q, Host %q: status %d, want %d (%s)", c.origin, c.host, resp.StatusCode, c.want, body)
		}
		if c.want == http.StatusForbidden && !strings.Contains(string(body), "refused") {
			t.Errorf("Origin %q, Host %q: the refusal does not say why: %s", c.origin, c.host, body)
		}
	}
}
