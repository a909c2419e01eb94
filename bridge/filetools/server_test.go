package filetools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// rootsList answers roots/list with fixed folders.
type rootsList []string

func (r rootsList) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	res := &mcp.ListRootsResult{}
	for _, d := range r {
		res.Roots = append(res.Roots, mcp.Root{URI: "file://" + d, Name: filepath.Base(d)})
	}
	return res, nil
}

// The client's first root is the base for relative paths, whatever the names sort to:
// in process, and over stdio, where the server's roots/list request and the client's
// answer cross the wire between the client's calls.
func TestClientRootsKeepTheClientsOrder(t *testing.T) {
	for _, overStdio := range []bool{false, true} {
		t.Run(map[bool]string{false: "in process", true: "stdio"}[overStdio], func(t *testing.T) {
			parent := testenv.TempDir(t)
			first, second := filepath.Join(parent, "zz-first"), filepath.Join(parent, "aa-second")
			writeFile(t, filepath.Join(first, "x.txt"), "first\n", 0o644)
			writeFile(t, filepath.Join(second, "x.txt"), "second\n", 0o644)
			srv, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			roots := client.WithRootsHandler(rootsList{first, second})
			var mc *client.Client
			if overStdio {
				toServer, clientOut := io.Pipe()
				clientIn, fromServer := io.Pipe()
				served := make(chan error, 1)
				go func() {
					served <- srv.ServeStdio(context.Background(), toServer, fromServer, log.New(io.Discard, "", 0))
				}()
				t.Cleanup(func() {
					clientOut.Close() // the input ends: the server returns
					if err := testenv.Receive(t, served, "ServeStdio to return"); err != nil {
						t.Errorf("ServeStdio: %v", err)
					}
				})
				mc = client.NewClient(transport.NewIO(clientIn, clientOut, nil), roots)
			} else if mc, err = client.NewInProcessClientWithOptions(srv.mcp, roots); err != nil {
				t.Fatal(err)
			}
			c := initialize(t, mc, true)
			if got := c.ok("read_files", map[string]any{"path": "x.txt"}); got != "1 | first" {
				t.Fatalf("x.txt resolved in the wrong root: %q", got)
			}
			if got := c.ok("read_files", map[string]any{"path": filepath.Join(second, "x.txt")}); got != "1 | second" {
				t.Fatalf("the second root is not allowed: %q", got)
			}
		})
	}
}

// A line that is not JSON gets JSON-RPC's parse error, and the session goes on.
func TestStdioAnswersAParseError(t *testing.T) {
	srv, err := New(Config{Roots: []string{testenv.TempDir(t)}})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader("not json\n" + `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n")
	var out strings.Builder
	if err := srv.ServeStdio(context.Background(), in, &out, log.New(io.Discard, "", 0)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(out.String(), `"code":-32700`) || !strings.Contains(out.String(), `{"jsonrpc":"2.0","id":7,"result":{}}`) {
		t.Fatalf("answers:\n%s", out.String())
	}
}

// Params of the wrong shape are refused by mcp-go, naming the request, and are not
// taken for a line that is not JSON.
func TestStdioRefusesParamsOfTheWrongShape(t *testing.T) {
	srv, err := New(Config{Roots: []string{testenv.TempDir(t)}})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"ping","params":"x"}` + "\n")
	var out strings.Builder
	if err := srv.ServeStdio(context.Background(), in, &out, log.New(io.Discard, "", 0)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"unparsable tools/call request: `,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"unparsable tools/call request: `,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"unparsable ping request: `,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no answer starting %s in:\n%s", want, out.String())
		}
	}
}

// silentRoots declares roots but never answers roots/list (until the test ends).
type silentRoots struct{ release chan struct{} }

func (r silentRoots) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	<-r.release
	return nil, fmt.Errorf("released")
}

// A client that declares roots but never answers roots/list gets the working
// directory as its root once rootsTimeout passes, and the server warns about it.
// Over stdio, as a real client: the server waits for an answer on the wire.
func TestRootsListWithoutAnswerFallsBackToTheWorkingDirectory(t *testing.T) {
	cwd := testenv.TempDir(t)
	writeFile(t, filepath.Join(cwd, "here.txt"), "here\n", 0o644)
	t.Chdir(cwd)
	old := rootsTimeout
	rootsTimeout = 100 * time.Millisecond
	t.Cleanup(func() { rootsTimeout = old })

	var mu sync.Mutex
	var logged []string
	srv, err := New(Config{Logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}})
	if err != nil {
		t.Fatal(err)
	}
	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.ServeStdio(ctx, toServer, fromServer, log.New(io.Discard, "", 0)) // the pipes closing at the end
	}()
	roots := silentRoots{release: make(chan struct{})}
	out := &signalWriter{WriteCloser: clientOut}
	mc := client.NewClient(transport.NewIO(clientIn, out, nil), client.WithRootsHandler(roots))
	c := initialize(t, mc, true)
	t.Cleanup(func() { // before the client closes: the late answer must find the pipe open
		written := out.next()
		close(roots.release)
		<-written
		cancel()
		fromServer.Close()
		<-served
	})

	start := time.Now()
	if got := c.ok("read_files", map[string]any{"path": "here.txt"}); got != "1 | here" {
		t.Fatalf("read in the working directory: %q", got)
	}
	if waited := time.Since(start); waited < rootsTimeout {
		t.Errorf("answered after %v, before the roots timeout", waited)
	}
	mu.Lock()
	log := strings.Join(logged, "\n")
	mu.Unlock()
	if !strings.Contains(log, "warning: the client's roots/list failed (no answer within 100ms); using the working directory") {
		t.Errorf("no warning logged: %q", log)
	}
	// The fallback holds for the session: the next call does not wait again.
	c.ok("read_files", map[string]any{"path": "here.txt"})
	if _, err := os.Stat(filepath.Join(cwd, "here.txt")); err != nil {
		t.Fatal(err)
	}
}

// signalWriter tells when a write has gone through.
type signalWriter struct {
	io.WriteCloser
	mu     sync.Mutex
	notify chan struct{}
}

// next returns a channel closed once the next write is done.
func (w *signalWriter) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.notify = make(chan struct{})
	return w.notify
}

func (w *signalWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	w.mu.Lock()
	if w.notify != nil {
		close(w.notify)
		w.notify = nil
	}
	w.mu.Unlock()
	return n, err
}

// Tool answers made of text are written without mcp-go's encoder, as the same
// JSON; any other answer goes through it.
func TestToolAnswersAreTheJSONMcpGoWrites(t *testing.T) {
	srv, err := New(Config{Roots: []string{testenv.TempDir(t)}})
	if err != nil {
		t.Fatal(err)
	}
	srv.bigTexts = &bigTexts{pending: map[string][]byte{}}
	c := newStdioConn(srv, nil, io.Discard, log.New(io.Discard, "", 0))
	big := strings.Repeat("line \"quoted\"\t\\ é \x01 \xff <html>\n", 4000)
	for _, tc := range []struct {
		name  string
		msg   any
		plain bool
	}{
		{"text", mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(7)), mcp.NewToolResultText("1:ab|x\n\"q\"\tz")), true},
		{"string id, error", mcp.NewJSONRPCResultResponse(mcp.NewRequestId("s3"), mcp.NewToolResultError("Error: no")), true},
		{"two texts", mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(1)), &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewTextContent("b")}}), true},
		{"big text", mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(2)), srv.textResult(big)), true},
		{"structured", mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(3)), &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a")}, StructuredContent: map[string]any{"k": 1}}), false},
		{"tools list", mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(4)), mcp.ListToolsResult{}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts, plain := c.toolAnswer(tc.msg)
			got := bytes.Join(parts, nil)
			if bytes.IndexByte(got, '\n') != len(got)-1 {
				t.Fatalf("not one line ended by a newline: %q", got)
			}
			if plain != tc.plain {
				t.Fatalf("written directly: %v, want %v", plain, tc.plain)
			}
			if !plain {
				return
			}
			if tc.name == "big text" { // mcp-go would write the placeholder: compare with the text
				tc.msg = mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(2)), mcp.NewToolResultText(big))
			}
			want, err := json.Marshal(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, got)
			}
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// The tools handled before reading on over stdio exist and change no file.
func TestQuickToolsAreReadOnlyTools(t *testing.T) {
	srv, err := New(Config{Roots: []string{testenv.TempDir(t)}})
	if err != nil {
		t.Fatal(err)
	}
	for name := range quickTools {
		tool := srv.mcp.GetTool(name)
		if tool == nil {
			t.Errorf("%s is not a tool", name)
			continue
		}
		if ro := tool.Tool.Annotations.ReadOnlyHint; ro == nil || !*ro {
			t.Errorf("%s may change files", name)
		}
	}
}
