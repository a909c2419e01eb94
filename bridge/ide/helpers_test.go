package ide

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/internal/testenv/ideclient"
)

// waitLimit bounds every wait in these tests; reaching it is a failure, never a pace.
var waitLimit = testenv.WaitLimit

// cliInitialize is the exact initialize request Claude Code 2.1.330 sends.
const cliInitialize = ideclient.CLIInitialize

// --- fake editor ---------------------------------------------------------------

type closeCall struct {
	tab     string
	outcome Teardown
}

// fakeEditor records every call and lets a test hold Show or fail it.
type fakeEditor struct {
	opened chan DiffRequest
	closed chan closeCall
	reload chan string   // paths View.Written was called with (kept out of the call log)
	called chan struct{} // a signal after every call, for waitForCall

	mu       sync.Mutex
	calls    []string
	views    map[string]*fakeView // tab name → the latest view shown under it
	openErr  error
	openGate chan struct{} // when set, Show waits until it is closed
	queryFn  func(tool string, args map[string]any) (string, error)
}

func newFakeEditor() *fakeEditor {
	return &fakeEditor{
		opened: make(chan DiffRequest, 100),
		closed: make(chan closeCall, 100),
		reload: make(chan string, 100),
		called: make(chan struct{}, 1),
		views:  map[string]*fakeView{},
	}
}

func (e *fakeEditor) setQuery(fn func(tool string, args map[string]any) (string, error)) {
	e.mu.Lock()
	e.queryFn = fn
	e.mu.Unlock()
}

func (e *fakeEditor) setOpenGate(gate chan struct{}) {
	e.mu.Lock()
	e.openGate = gate
	e.mu.Unlock()
}

func (e *fakeEditor) setOpenErr(err error) {
	e.mu.Lock()
	e.openErr = err
	e.mu.Unlock()
}

func (e *fakeEditor) record(call string) {
	e.mu.Lock()
	e.calls = append(e.calls, call)
	e.mu.Unlock()
	select {
	case e.called <- struct{}{}:
	default:
	}
}

func (e *fakeEditor) changed() <-chan struct{} { return e.called }

func (e *fakeEditor) callLog() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

func (e *fakeEditor) Show(ctx context.Context, req DiffRequest) (View, error) {
	e.record("Show " + req.TabName)
	e.mu.Lock()
	gate, openErr := e.openGate, e.openErr
	e.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if openErr != nil {
		return nil, openErr
	}
	v := &fakeView{e: e, req: req, answers: make(chan Answer, 1)}
	e.mu.Lock()
	e.views[req.TabName] = v
	e.mu.Unlock()
	e.opened <- req
	return v, nil
}

// answer is the user's answer in the latest view shown under tab; a second answer,
// or one to a tab never shown, goes nowhere.
func (e *fakeEditor) answer(tab string, a Answer) {
	e.mu.Lock()
	v := e.views[tab]
	e.mu.Unlock()
	if v != nil {
		select {
		case v.answers <- a:
		default:
		}
	}
}

type fakeView struct {
	e       *fakeEditor
	req     DiffRequest
	answers chan Answer
}

func (v *fakeView) Answer() <-chan Answer { return v.answers }

func (v *fakeView) Close(_ context.Context, how Teardown) error {
	v.e.record(fmt.Sprintf("Close %s %d", v.req.TabName, how))
	v.e.closed <- closeCall{tab: v.req.TabName, outcome: how}
	return nil
}

func (v *fakeView) Written(context.Context) error {
	v.e.reload <- v.req.NewPath
	return nil
}

func (e *fakeEditor) Query(_ context.Context, tool string, args map[string]any) (string, error) {
	e.record("Query " + tool)
	e.mu.Lock()
	fn := e.queryFn
	e.mu.Unlock()
	if fn != nil {
		return fn(tool, args)
	}
	return "[]", nil
}

// waitOpened waits for the editor to show a diff.
func (e *fakeEditor) waitOpened(t testing.TB) DiffRequest {
	t.Helper()
	return testenv.Receive(t, e.opened, "the editor to be asked to show a diff")
}

// waitClosed waits for the editor to be asked to close a diff.
func (e *fakeEditor) waitClosed(t testing.TB) closeCall {
	t.Helper()
	return testenv.Receive(t, e.closed, "the editor to be asked to close a diff")
}

// --- fake recorder ---------------------------------------------------------------

type recordCall struct {
	conv, path string
	before     []byte
	existed    bool
	after      []byte
}

type fakeRecorder struct{ calls chan recordCall }

func newFakeRecorder() *fakeRecorder { return &fakeRecorder{calls: make(chan recordCall, 100)} }

func (r *fakeRecorder) RecordAccepted(conv, path string, before []byte, existed bool, after []byte) (bool, error) {
	r.calls <- recordCall{conv: conv, path: path, before: before, existed: existed, after: after}
	return true, nil
}

// waitCall waits for the recorder to be called.
func (r *fakeRecorder) waitCall(t testing.TB) recordCall {
	t.Helper()
	return testenv.Receive(t, r.calls, "the recorder to be called")
}

// --- log sink ---------------------------------------------------------------------

// logSink collects the server's log lines and lets a test wait for one.
type logSink struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
}

func newLogSink() *logSink { return &logSink{changed: make(chan struct{}, 1)} }

func (l *logSink) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *logSink) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// waitFor waits for a log line containing substr.
func (l *logSink) waitFor(t testing.TB, substr string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for !strings.Contains(l.all(), substr) {
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("no log line contains %q; log:\n%s", substr, l.all())
		}
	}
}

// --- server ---------------------------------------------------------------------

type testServer struct {
	*Server
	editor *fakeEditor
	logs   *logSink
}

// Answer is the user's answer in the view of tab: accepted with the text to save,
// or rejected.
func (s *testServer) Answer(tab string, accepted bool, text string) {
	s.editor.answer(tab, Answer{Accepted: accepted, Text: text})
}

// startServer starts a server with a fake editor and its lock file in a temp dir.
// options may adjust the Options before NewServer, knobs the timing knobs before Start.
func startServer(t testing.TB, options func(*Options), knobs func(*Server)) *testServer {
	t.Helper()
	editor := newFakeEditor()
	logs := newLogSink()
	o := Options{
		Editor:    editor,
		LockDir:   t.TempDir(),
		PID:       os.Getpid(),
		Workspace: []string{t.TempDir()},
		Version:   "1.2.3",
		Logf:      logs.logf,
	}
	if options != nil {
		options(&o)
	}
	s := NewServer(o)
	if knobs != nil {
		knobs(s)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	return &testServer{Server: s, editor: editor, logs: logs}
}

// --- WebSocket client ---------------------------------------------------------------

// rpcMessage is any JSON-RPC message as the test client receives it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *testRPCError   `json:"error"`
	raw    []byte
}

type testRPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// testClient speaks to the server the way the claude CLI does.
type testClient struct {
	t       testing.TB
	conn    *websocket.Conn
	nextID  atomic.Int64
	notes   chan rpcMessage
	ended   chan struct{} // closed when the read loop ends; readErr is then set
	readErr error

	mu         sync.Mutex
	waiting    map[string]chan rpcMessage
	unexpected []string
}

func dialServer(port int, header http.Header) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	return websocket.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port), &websocket.DialOptions{
		HTTPHeader:   header,
		Subprotocols: []string{"mcp"},
	})
}

func authHeaders(token string) http.Header {
	h := http.Header{}
	h.Set("X-Claude-Code-Ide-Authorization", token)
	return h
}

// connect opens a client with the right token and starts reading.
func connect(t testing.TB, s *testServer) *testClient {
	t.Helper()
	conn, _, err := dialServer(s.Port(), authHeaders(s.Token()))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(256 << 20)
	c := &testClient{
		t:       t,
		conn:    conn,
		notes:   make(chan rpcMessage, 1000),
		ended:   make(chan struct{}),
		waiting: map[string]chan rpcMessage{},
	}
	go c.readLoop()
	t.Cleanup(func() {
		c.conn.CloseNow()
		<-c.ended
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.unexpected) > 0 {
			t.Errorf("messages nobody waited for: %v", c.unexpected)
		}
	})
	return c
}

// connectReady connects and performs the CLI's opening exchange.
func connectReady(t testing.TB, s *testServer) *testClient {
	t.Helper()
	c := connect(t, s)
	c.handshake(4242)
	return c
}

func (c *testClient) readLoop() {
	defer close(c.ended)
	for {
		_, data, err := c.conn.Read(context.Background())
		if err != nil {
			c.readErr = err
			return
		}
		var m rpcMessage
		if err := json.Unmarshal(data, &m); err != nil {
			c.mu.Lock()
			c.unexpected = append(c.unexpected, string(data))
			c.mu.Unlock()
			continue
		}
		m.raw = data
		if m.Method != "" {
			c.notes <- m
			continue
		}
		c.mu.Lock()
		ch, ok := c.waiting[string(m.ID)]
		delete(c.waiting, string(m.ID))
		if !ok {
			c.unexpected = append(c.unexpected, string(data))
		}
		c.mu.Unlock()
		if ok {
			ch <- m
		}
	}
}

// send writes one raw frame.
func (c *testClient) send(frame string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// expect registers interest in the response with this raw id.
func (c *testClient) expect(id string) <-chan rpcMessage {
	ch := make(chan rpcMessage, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	return ch
}

// start sends a request and returns a function that waits for its response.
func (c *testClient) start(method string, params any) func() rpcMessage {
	c.t.Helper()
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	ch := c.expect(id)
	frame, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	if err != nil {
		c.t.Fatalf("encode request: %v", err)
	}
	c.send(string(frame))
	return func() rpcMessage {
		c.t.Helper()
		return c.await(ch, method)
	}
}

func (c *testClient) await(ch <-chan rpcMessage, what string) rpcMessage {
	c.t.Helper()
	m, ok := testenv.ReceiveOrClosed(c.t, ch, c.ended, what)
	if !ok {
		c.t.Fatalf("%s: connection ended before the answer: %v", what, c.readErr)
	}
	return m
}

func (c *testClient) call(method string, params any) rpcMessage {
	c.t.Helper()
	return c.start(method, params)()
}

// callTool starts a tools/call the way the CLI sends it (with _meta.progressToken).
func (c *testClient) callTool(name string, args any) func() rpcMessage {
	c.t.Helper()
	return c.start("tools/call", map[string]any{
		"name":      name,
		"arguments": args,
		"_meta":     map[string]any{"progressToken": c.nextID.Load() + 1},
	})
}

// lastID is the raw id of the last request sent.
func (c *testClient) lastID() string { return strconv.FormatInt(c.nextID.Load(), 10) }

// texts returns the text items of a successful tools/call answer.
func (c *testClient) texts(m rpcMessage) []string {
	c.t.Helper()
	if m.Error != nil {
		c.t.Fatalf("got JSON-RPC error %+v, want a result", *m.Error)
	}
	var result struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(m.Result, &result); err != nil {
		c.t.Fatalf("decode result %s: %v", m.Result, err)
	}
	if result.IsError {
		c.t.Fatalf("result has isError: %s", m.Result)
	}
	var texts []string
	for _, item := range result.Content {
		if item.Type != "text" {
			c.t.Fatalf("content item of type %q: %s", item.Type, m.Result)
		}
		texts = append(texts, item.Text)
	}
	return texts
}

// handshake performs the CLI's exact opening exchange (initialize with id 0).
func (c *testClient) handshake(pid int) {
	c.t.Helper()
	ch := c.expect("0")
	c.send(cliInitialize)
	if m := c.await(ch, "initialize"); m.Error != nil {
		c.t.Fatalf("initialize: %+v", *m.Error)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":%d}}`, pid))
	if m := c.call("tools/list", nil); m.Error != nil {
		c.t.Fatalf("tools/list: %+v", *m.Error)
	}
}

// waitNote waits for the next notification.
func (c *testClient) waitNote() rpcMessage {
	c.t.Helper()
	return testenv.Receive(c.t, c.notes, "a notification")
}

// waitEnd waits until the server closed the connection and returns the read error.
func (c *testClient) waitEnd() error {
	c.t.Helper()
	select {
	case <-c.ended:
		return c.readErr
	case <-time.After(waitLimit):
		c.t.Fatal("the connection did not end")
		return nil
	}
}

// openShown sends openDiff and waits until s's editor is asked to show the diff.
func (c *testClient) openShown(s *testServer, path, contents, tab string) func() rpcMessage {
	c.t.Helper()
	wait := c.callTool("openDiff", diffArgs(path, contents, tab))
	s.editor.waitOpened(c.t)
	return wait
}

// diffArgs are openDiff arguments as the CLI sends them.
func diffArgs(path, contents, tab string) map[string]any {
	return map[string]any{"old_file_path": path, "new_file_path": path, "new_file_contents": contents, "tab_name": tab}
}

// wantTexts fails unless got equals want item by item.
func wantTexts(t testing.TB, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d text items %q, want %q", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("text item %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// wantError fails unless m is a JSON-RPC error with this code (and data, if given).
func wantError(t testing.TB, m rpcMessage, code int, data string) {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("got result %s, want JSON-RPC error %d", m.Result, code)
	}
	if m.Error.Code != code {
		t.Fatalf("error code %d (%q), want %d", m.Error.Code, m.Error.Message, code)
	}
	if data != "" && fmt.Sprint(m.Error.Data) != data {
		t.Fatalf("error data %q, want %q", m.Error.Data, data)
	}
}
