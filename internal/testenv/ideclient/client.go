// Package ideclient is a test client of Claude Code's IDE protocol: it connects to
// an IDE server the way Claude Code 2.1.330 does (the auth header, the `mcp`
// subprotocol, the CLI's opening exchange, request ids from 0) and records what the
// server sends. The end-to-end tests and benchmarks of the Neovim bridge use it.
package ideclient

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// CLIInitialize is the exact initialize request Claude Code 2.1.330 sends
// (as the real CLI does).
const CLIInitialize = `{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"clientInfo":{"name":"claude-code","title":"Claude Code","version":"2.1.330","description":"Anthropic's agentic coding tool","websiteUrl":"https://claude.com/claude-code"}},"jsonrpc":"2.0","id":0}`

// Message is one JSON-RPC message the client received.
type Message struct {
	ID     *int64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	} `json:"error"`
	Raw      []byte    `json:"-"` // the frame as received
	Received time.Time `json:"-"` // when the frame arrived, before it was decoded
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// Client is one connection to an IDE server.
type Client struct {
	tb   testing.TB
	conn *websocket.Conn
	done chan struct{} // closed when the connection ends

	mu            sync.Mutex
	nextID        int64
	waiting       map[int64]chan Message
	notifications []Message
	closeErr      error
}

// Connect dials the server on 127.0.0.1:port and performs the CLI's handshake.
// The connection is closed when the test ends.
func Connect(tb testing.TB, port int, token string) *Client {
	tb.Helper()
	c, err := Dial(port, token)
	if err != nil {
		tb.Fatalf("connect to the IDE server: %v", err)
	}
	c.tb = tb
	tb.Cleanup(c.Close)
	c.handshake()
	return c
}

// Dial only opens the WebSocket (no handshake); call SetTB before using it.
func Dial(port int, token string) (*Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitLimit)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port), &websocket.DialOptions{
		HTTPHeader:   http.Header{"X-Claude-Code-Ide-Authorization": {token}},
		Subprotocols: []string{"mcp"},
	})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(256 << 20)
	c := &Client{conn: conn, done: make(chan struct{}), waiting: map[int64]chan Message{}}
	go c.readLoop()
	return c, nil
}

// SetTB makes failures go to tb (a subtest).
func (c *Client) SetTB(tb testing.TB) { c.tb = tb }

// Close drops the connection without a close handshake.
func (c *Client) Close() { c.conn.CloseNow() }

func (c *Client) readLoop() {
	defer close(c.done)
	for {
		_, data, err := c.conn.Read(context.Background())
		received := time.Now()
		if err != nil {
			c.mu.Lock()
			c.closeErr = err
			c.mu.Unlock()
			return
		}
		var m Message
		if err := json.Unmarshal(data, &m); err != nil {
			continue
		}
		m.Raw, m.Received = data, received
		c.mu.Lock()
		if m.ID != nil && m.Method == "" {
			if ch := c.waiting[*m.ID]; ch != nil {
				ch <- m
				delete(c.waiting, *m.ID)
			}
		} else {
			c.notifications = append(c.notifications, m)
		}
		c.mu.Unlock()
	}
}

// send writes one frame and returns when it was written.
func (c *Client) send(v any) time.Time {
	c.tb.Helper()
	data, ok := v.([]byte)
	if !ok {
		var err error
		if data, err = json.Marshal(v); err != nil {
			c.tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitLimit)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, data); err != nil {
		c.tb.Fatalf("send: %v", err)
	}
	return time.Now()
}

// Request sends a request and returns the channel its response arrives on.
func (c *Client) Request(method string, params any) <-chan Message {
	c.tb.Helper()
	ch, _ := c.RequestAt(method, params)
	return ch
}

// RequestAt is Request, also returning when the encoded request was written.
func (c *Client) RequestAt(method string, params any) (<-chan Message, time.Time) {
	c.tb.Helper()
	ch := make(chan Message, 1)
	c.mu.Lock()
	id := c.nextID
	c.nextID++
	c.waiting[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	return ch, c.send(msg)
}

func (c *Client) handshake() {
	c.tb.Helper()
	ch := make(chan Message, 1)
	c.mu.Lock()
	c.waiting[0] = ch
	c.nextID = 1
	c.mu.Unlock()
	c.send([]byte(CLIInitialize))
	if m := c.Await(ch, "initialize"); m.Error != nil {
		c.tb.Fatalf("initialize failed: %s", m.Raw)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "ide_connected", "params": map[string]any{"pid": os.Getpid()}})
	c.Await(c.Request("tools/list", nil), "tools/list")
}

// Await waits for a response.
func (c *Client) Await(ch <-chan Message, what string) Message {
	c.tb.Helper()
	m, ok := testenv.ReceiveOrClosed(c.tb, ch, c.done, what)
	if !ok {
		c.mu.Lock()
		err := c.closeErr
		c.mu.Unlock()
		c.tb.Fatalf("connection closed while waiting for %s: %v", what, err)
	}
	return m
}

// CallTool sends tools/call; the answer arrives on the returned channel.
func (c *Client) CallTool(name string, args map[string]any) <-chan Message {
	c.tb.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return c.Request("tools/call", map[string]any{"name": name, "arguments": args})
}

// Texts waits for a tools/call answer and returns its text items; an error answer
// fails the test.
func (c *Client) Texts(ch <-chan Message, what string) []string {
	c.tb.Helper()
	m := c.Await(ch, what)
	if m.Error != nil {
		c.tb.Fatalf("%s: JSON-RPC error %s", what, m.Raw)
	}
	var r toolResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		c.tb.Fatalf("%s: %v in %s", what, err, m.Raw)
	}
	if r.IsError {
		c.tb.Fatalf("%s: isError: %s", what, m.Raw)
	}
	var out []string
	for _, item := range r.Content {
		if item.Type != "text" {
			c.tb.Fatalf("%s: content item of type %q in %s", what, item.Type, m.Raw)
		}
		out = append(out, item.Text)
	}
	return out
}

// OpenDiff sends an openDiff the way the CLI does (old = new = the absolute path).
func (c *Client) OpenDiff(path, contents, tab string) <-chan Message {
	c.tb.Helper()
	ch, _ := c.OpenDiffAt(path, contents, tab)
	return ch
}

// OpenDiffAt is OpenDiff, also returning when the request was written.
func (c *Client) OpenDiffAt(path, contents, tab string) (<-chan Message, time.Time) {
	c.tb.Helper()
	return c.RequestAt("tools/call", map[string]any{"name": "openDiff", "arguments": map[string]any{
		"old_file_path":     path,
		"new_file_path":     path,
		"new_file_contents": contents,
		"tab_name":          tab,
	}})
}

// Notifications returns the notifications of one method received so far.
func (c *Client) Notifications(method string) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Message
	for _, m := range c.notifications {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}
