package filetools

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpdiff/mcpdiff/internal/jsonscan"
	"github.com/mcpdiff/mcpdiff/internal/mcpsession"
)

// ServeStdio serves the tools to one client over in and out (JSON-RPC, a message a
// line) until in ends or ctx is done.
//
// A tool result's text from bigTextFrom bytes on is escaped as JSON by the tool, as
// it is made, and the result carries a short placeholder for it, which the writer of
// the answer swaps for the escaped text (stdioConn.toolAnswer).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, logger *log.Logger) error {
	s.bigTexts = &bigTexts{pending: map[string][]byte{}}
	return newStdioConn(s, in, out, logger).serve(ctx)
}

// bigTextFrom is the size from which a result's text is escaped by jsonscan.
const bigTextFrom = 32 << 10

// textResult is a tool's successful result: text, which may be big.
func (s *Server) textResult(text string) *mcp.CallToolResult {
	if s.bigTexts != nil && len(text) >= bigTextFrom {
		text = s.bigTexts.add(text)
	}
	return mcp.NewToolResultText(text)
}

// bigTexts are escaped texts waiting for their placeholder to be written.
type bigTexts struct {
	mu      sync.Mutex
	pending map[string][]byte // placeholder → the text as a JSON string, quotes left out
	order   []string          // oldest first, so texts of responses never written go
}

// placeholderPrefix starts every placeholder; the rest is 16 random hex digits. Only
// letters, digits and dashes: encoding/json writes it as it is.
const (
	placeholderPrefix = "mcpdiff-big-text-"
	placeholderLen    = len(placeholderPrefix) + 16
)

// maxPendingTexts bounds the texts kept for responses that are never written (a
// cancelled call): the oldest go first.
const maxPendingTexts = 64

func (b *bigTexts) add(text string) string {
	return b.addEscaped(jsonscan.AppendEscaped(make([]byte, 0, len(text)+len(text)/16), text))
}

// addEscaped is add for a text already escaped as the inside of a JSON string.
func (b *bigTexts) addEscaped(escaped []byte) string {
	var id [8]byte
	_, _ = rand.Read(id[:])
	key := placeholderPrefix + hex.EncodeToString(id[:])
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending[key] = escaped
	b.order = append(b.order, key)
	if len(b.order) > maxPendingTexts {
		delete(b.pending, b.order[0])
		b.order = b.order[1:]
	}
	return key
}

// escaped takes the escaped text of text when it is a placeholder.
func (b *bigTexts) escaped(text string) ([]byte, bool) {
	if b == nil || len(text) != placeholderLen || !strings.HasPrefix(text, placeholderPrefix) {
		return nil, false
	}
	return b.take(text)
}

// take returns and forgets the text of a placeholder.
func (b *bigTexts) take(key string) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	text, ok := b.pending[key]
	if ok {
		delete(b.pending, key)
		if i := indexOf(b.order, key); i >= 0 {
			b.order = append(b.order[:i], b.order[i+1:]...)
		}
	}
	return text, ok
}

func indexOf(keys []string, key string) int {
	for i, k := range keys {
		if k == key {
			return i
		}
	}
	return -1
}

// stdioConn is the session of the one client of ServeStdio, and its transport.
//
// mcp-go's own stdio server decodes each message six times (once to validate it,
// once for each kind of answer to a request of its own, once to route it, twice
// to handle it) and hands a tool call over three goroutines: the one that read the
// line, its loop, and a worker. Here a message is decoded once to route it and
// handled by mcp-go (HandleMessage) on the goroutine that read it. A lone read
// (quickTools) or a message that is not a tool call is handled before reading on:
// starting the next reader wakes a second thread, a tenth of a small read's round
// trip. Before any other call, or when more input has already arrived, another
// goroutine is started first to read on, so calls sent together run side by side
// (edits of one file then batch: enqueue, files.go) and a slow call holds up no other.
// Should a message handled first wait on the client (roots/list), it hands the
// reading over first (handOff).
type stdioConn struct {
	srv    *Server
	in     *bufio.Reader
	out    io.Writer
	outMu  sync.Mutex // a message goes out whole
	logger *log.Logger
	ended  chan error // the first read that fails: the input's end
	calls  inflight

	ctx         context.Context // the session's, for readers started by handOff
	readers     atomic.Uint64   // numbers the reading goroutines
	readingLate atomic.Uint64   // the reader handling a message before reading on; 0: none

	mcpsession.State
	clientInfo   atomic.Value // mcp.Implementation
	capabilities atomic.Value // mcp.ClientCapabilities
	protocol     atomic.Value // string

	lastID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan rootsAnswer // roots/list requests awaiting the client
}

type rootsAnswer struct {
	result *mcp.ListRootsResult
	err    error
}

func newStdioConn(s *Server, in io.Reader, out io.Writer, logger *log.Logger) *stdioConn {
	return &stdioConn{
		srv: s, in: bufio.NewReaderSize(in, 64<<10), out: out, logger: logger, ended: make(chan error, 1),
		State:   mcpsession.State{Notifications: make(chan mcp.JSONRPCNotification, 100)},
		pending: map[int64]chan rootsAnswer{},
	}
}

// serve runs until the input ends or ctx is done, then waits for the calls in flight.
func (c *stdioConn) serve(ctx context.Context) error {
	if err := c.srv.mcp.RegisterSession(ctx, c); err != nil {
		return fmt.Errorf("register the stdio session: %w", err)
	}
	defer c.srv.mcp.UnregisterSession(ctx, c.SessionID())
	ctx = c.srv.mcp.WithContext(ctx, c)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.ctx = ctx
	go c.forwardNotifications(ctx)
	go c.read(c.readers.Add(1))
	var err error
	select {
	case err = <-c.ended:
	case <-ctx.Done():
		err = ctx.Err()
	}
	cancel()               // calls still waiting on the client (roots/list) give up
	c.calls.closeAndWait() // (not a read blocked on the input, which ends with it)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// read reads and handles messages until it hands the reading to another reader;
// only one reads at a time.
func (c *stdioConn) read(reader uint64) {
	for {
		line, err := c.in.ReadBytes('\n')
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			c.ended <- err
			return
		}
		if !c.calls.begin() { // the session ended while this reader waited for input
			return
		}
		msg, ok := c.decode(line)
		switch {
		case err != nil: // a last line without its newline
			c.handle(msg, ok, line)
			c.ended <- io.EOF
		case c.in.Buffered() == 0 && quick(msg):
			c.readingLate.Store(reader)
			c.handle(msg, ok, line)
			if c.readingLate.CompareAndSwap(reader, 0) {
				c.calls.end()
				continue
			}
		default:
			go c.read(c.readers.Add(1))
			c.handle(msg, ok, line)
		}
		c.calls.end()
		return
	}
}

// inflight counts the calls being handled. Unlike a WaitGroup it may be asked for a
// new call while serve waits for the last ones (a reader that handOff started reads
// on after the input ended), and then says no.
type inflight struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{} // closed when n drops to 0 after close
}

// begin counts a new call, unless the session has ended.
func (f *inflight) begin() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.n++
	return true
}

func (f *inflight) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// closeAndWait refuses new calls and waits for those in flight.
func (f *inflight) closeAndWait() {
	f.mu.Lock()
	f.closed = true
	if f.n == 0 {
		f.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	f.idle = idle
	f.mu.Unlock()
	<-idle
}

// handOff starts a reader when the one reading is handling a message first, for
// the message that waits on the client (whose answer then has to be read).
func (c *stdioConn) handOff() {
	if reader := c.readingLate.Load(); reader != 0 && c.readingLate.CompareAndSwap(reader, 0) {
		go c.read(c.readers.Add(1))
	}
}

// message is what routing a message needs of it.
type message struct {
	ID     json.RawMessage  `json:"id"`
	Method string           `json:"method"`
	Result json.RawMessage  `json:"result"`
	Error  *json.RawMessage `json:"error"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// decode reports whether line is a JSON-RPC message. Params of the wrong shape are
// left for mcp-go to refuse, in its words.
func (c *stdioConn) decode(line []byte) (message, bool) {
	var msg message
	err := json.Unmarshal(line, &msg)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && strings.HasPrefix(typeErr.Field, "params") {
		msg.Params.Name, err = "", nil
	}
	return msg, err == nil
}

// quickTools are the tools whose calls are handled before reading on: they change
// no file and their work is bounded by the size of a file and of an answer
// (MaxFileSize, MaxRead). list_files is not one: a recursive listing walks the
// whole tree.
var quickTools = map[string]bool{"read_text_file": true, "read_files": true}

// quick reports whether msg is handled before reading on: anything but a tool call,
// or a call of one of quickTools.
func quick(msg message) bool {
	return msg.Method != string(mcp.MethodToolsCall) || quickTools[msg.Params.Name]
}

// handle answers one message: a request or notification through mcp-go, or the
// client's answer to a request of ours.
func (c *stdioConn) handle(msg message, decoded bool, line []byte) {
	if len(line) == 0 || (len(line) == 1 && line[0] == '\n') {
		return
	}
	if !decoded {
		c.write(errorAnswer(nil, mcp.PARSE_ERROR, "Parse error"))
		return
	}
	if msg.Method == "" && msg.ID != nil && (msg.Result != nil || msg.Error != nil) {
		c.answered(msg.ID, msg.Result, msg.Error)
		return
	}
	if res := c.handleMessage(c.ctx, msg.ID, line); res != nil {
		c.write(res)
	}
}

// handleMessage runs mcp-go's handler, answering a panic with an internal error.
func (c *stdioConn) handleMessage(ctx context.Context, id json.RawMessage, line []byte) (res mcp.JSONRPCMessage) {
	defer func() {
		if r := recover(); r != nil {
			c.logger.Printf("panic while handling a message: %v", r)
			if id != nil {
				var rid any
				_ = json.Unmarshal(id, &rid)
				res = errorAnswer(rid, mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r))
			}
		}
	}()
	return c.srv.mcp.HandleMessage(ctx, line)
}

func errorAnswer(id any, code int, message string) mcp.JSONRPCMessage {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Error: mcp.NewJSONRPCErrorDetails(code, message, nil)}
}

// write sends one message.
func (c *stdioConn) write(msg any) {
	parts, ok := c.toolAnswer(msg)
	if !ok {
		b, err := json.Marshal(msg)
		if err != nil {
			c.logger.Printf("encode an answer: %v", err)
			return
		}
		parts = [][]byte{append(b, '\n')}
	}
	c.outMu.Lock()
	err := writeParts(c.out, parts)
	c.outMu.Unlock()
	if err != nil {
		c.logger.Printf("write an answer: %v", err)
	}
}

// toolAnswer encodes msg, with its closing newline, when it is the answer to a tool
// call made of text only, which is every answer of the file tools, and reports
// whether it was. mcp-go encodes a tool's result through a map and encoding/json,
// then compacts it again: for a big read, that was passes over half a megabyte.
// Here the text is escaped once, and a big text, escaped ahead (bigTexts), is a part
// of its own: written as it is, never copied into the message.
func (c *stdioConn) toolAnswer(msg any) (parts [][]byte, ok bool) {
	res, ok := msg.(mcp.JSONRPCResponse)
	if !ok {
		return nil, false
	}
	r, ok := res.Result.(*mcp.CallToolResult)
	if !ok || r.Meta != nil || r.ResultType != "" || r.StructuredContent != nil || len(r.RawStructuredContent) > 0 ||
		len(r.InputRequests) > 0 || r.RequestState != "" {
		return nil, false
	}
	for _, content := range r.Content {
		if t, ok := content.(mcp.TextContent); !ok || t.Annotations != nil || t.Meta != nil || t.Type != "text" {
			return nil, false
		}
	}
	id, err := json.Marshal(res.ID)
	if err != nil {
		return nil, false
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(b, `,"result":{"content":[`...)
	for i, content := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":"`...)
		text := content.(mcp.TextContent).Text
		if escaped, ok := c.srv.bigTexts.escaped(text); ok {
			parts = append(parts, b, escaped)
			b = nil
		} else {
			b = jsonscan.AppendEscaped(b, text)
		}
		b = append(b, `"}`...)
	}
	b = append(b, ']')
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(parts, append(b, "}}\n"...)), true
}

func (c *stdioConn) forwardNotifications(ctx context.Context) {
	for {
		select {
		case n := <-c.Notifications:
			c.write(n)
		case <-ctx.Done():
			return
		}
	}
}

// ListRoots asks the client for its roots (mcp-go's RequestRoots calls it).
func (c *stdioConn) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	id := c.lastID.Add(1)
	answer := make(chan rootsAnswer, 1)
	c.mu.Lock()
	c.pending[id] = answer
	c.mu.Unlock()
	c.handOff()
	c.write(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "method": mcp.MethodListRoots})
	select {
	case a := <-answer:
		return a.result, a.err
	case <-ctx.Done():
		c.takePending(id) // an answer that still comes finds no one waiting
		return nil, ctx.Err()
	}
}

// takePending removes the request of ours that id names, so that it is answered
// once at most.
func (c *stdioConn) takePending(id int64) (chan rootsAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	answer, ok := c.pending[id]
	delete(c.pending, id)
	return answer, ok
}

// answered hands the client's answer to the request of ours it answers.
func (c *stdioConn) answered(rawID, result json.RawMessage, errObj *json.RawMessage) {
	var id int64
	if json.Unmarshal(rawID, &id) != nil {
		return
	}
	answer, ok := c.takePending(id)
	if !ok {
		return
	}
	var a rootsAnswer
	if errObj != nil {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(*errObj, &e)
		a.err = fmt.Errorf("the client's roots/list failed: %s", e.Message)
	} else {
		a.result = &mcp.ListRootsResult{}
		if err := json.Unmarshal(result, a.result); err != nil {
			a.result, a.err = nil, fmt.Errorf("the client's roots/list answer: %w", err)
		}
	}
	answer <- a
}

// The session, as mcp-go asks for it (the rest is mcpsession.State).

func (c *stdioConn) SessionID() string { return "stdio" }
func (c *stdioConn) GetClientInfo() mcp.Implementation {
	info, _ := c.clientInfo.Load().(mcp.Implementation)
	return info
}
func (c *stdioConn) SetClientInfo(info mcp.Implementation) { c.clientInfo.Store(info) }
func (c *stdioConn) GetClientCapabilities() mcp.ClientCapabilities {
	caps, _ := c.capabilities.Load().(mcp.ClientCapabilities)
	return caps
}
func (c *stdioConn) SetClientCapabilities(caps mcp.ClientCapabilities) { c.capabilities.Store(caps) }
func (c *stdioConn) ProtocolVersion() string {
	v, _ := c.protocol.Load().(string)
	return v
}
func (c *stdioConn) SetProtocolVersion(v string) { c.protocol.Store(v) }

var (
	_ server.SessionWithLogging         = (*stdioConn)(nil)
	_ server.SessionWithClientInfo      = (*stdioConn)(nil)
	_ server.SessionWithRoots           = (*stdioConn)(nil)
	_ server.SessionWithProtocolVersion = (*stdioConn)(nil)
)
