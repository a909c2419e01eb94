package ide

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/mcpsession"
	"github.com/mcpdiff/mcpdiff/internal/neovims"
)

const (
	authHeader = "X-Claude-Code-Ide-Authorization"
	// outgoingQueue bounds notifications waiting for a slow client; beyond it they
	// are dropped rather than blocking the editor.
	outgoingQueue = 4096
)

// client is one WebSocket connection from Claude Code. It is also the connection's
// mcp-go session (server.ClientSession and server.SessionWithLogging).
type client struct {
	server      *Server
	conn        *websocket.Conn
	id          string
	seq         int
	connectedAt time.Time

	ctx    context.Context // ends when the connection ends; request contexts derive from it
	cancel context.CancelFunc
	done   chan struct{} // closed once every goroutine of this client has finished

	frames     chan []byte    // notifications we send (selection_changed, ...)
	background sync.WaitGroup // notification writer, keepalive, pings

	mcpsession.State // mcp-go's: initialize answered, log level, its notifications
	claudePID        atomic.Int64
	lastPong         atomic.Int64 // wall-clock unix nanoseconds
	dropReason       atomic.Value // why we closed it, when we did
	gone             atomic.Bool  // disconnected: its saved diffs are orphans

	mu       sync.Mutex
	ready    bool // notifications/initialized received: the handshake is complete
	closing  bool // no new requests start
	handlers sync.WaitGroup
	inflight map[string]context.CancelFunc // openDiff requests served by serveOpenDiff, by id
	conv     string                        // the conversation of the client's current turn, made lazily
}

// serveHTTP authenticates the upgrade, accepts the WebSocket and serves it until it
// ends.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == neovims.ClaimsPath {
		s.serveClaims(w, r)
		return
	}
	if status, reason := s.checkAuth(r); status != 0 {
		s.mu.Lock()
		s.refused++
		s.mu.Unlock()
		s.logf("ide: refused WebSocket upgrade from %s: %s", r.RemoteAddr, reason)
		http.Error(w, reason, status)
		return
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// The CLI drops the socket when the 101 does not select "mcp".
		Subprotocols: []string{"mcp"},
		// Declining permessage-deflate is what claudecode does; the CLI accepts it.
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		s.logf("ide: WebSocket upgrade from %s failed: %v", r.RemoteAddr, err)
		return
	}
	conn.SetReadLimit(maxMessageBytes)
	c, ok := s.addClient(conn)
	if !ok {
		conn.Close(websocket.StatusGoingAway, "Server shutting down")
		return
	}
	s.serveClient(c)
}

// checkAuth refuses a request (a handshake, a hook's claims question) without our
// token (401) or from a browser (403: browsers always send Origin, the CLI and the
// hooks never do). The token is never logged.
func (s *Server) checkAuth(r *http.Request) (status int, reason string) {
	got := r.Header.Get(authHeader)
	switch {
	case got == "":
		return http.StatusUnauthorized, "missing " + authHeader + " header"
	case subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1:
		return http.StatusUnauthorized, "wrong " + authHeader + " token (is the lock file stale?)"
	case r.Header.Get("Origin") != "":
		return http.StatusForbidden, fmt.Sprintf("request has an Origin header (%q); browsers may not connect", r.Header.Get("Origin"))
	}
	return 0, ""
}

func (s *Server) addClient(conn *websocket.Conn) (*client, bool) {
	s.mu.Lock()
	if s.state != stateRunning {
		s.mu.Unlock()
		return nil, false
	}
	s.clientN++
	ctx, cancel := context.WithCancel(s.life)
	c := &client{
		server:      s,
		conn:        conn,
		id:          fmt.Sprintf("client-%d", s.clientN),
		seq:         s.clientN,
		connectedAt: s.now(),
		ctx:         ctx,
		cancel:      cancel,
		done:        make(chan struct{}),
		frames:      make(chan []byte, outgoingQueue),
		State:       mcpsession.State{Notifications: make(chan mcp.JSONRPCNotification, outgoingQueue)},
	}
	c.lastPong.Store(wallNow().UnixNano())
	s.clients[c] = struct{}{}
	s.mu.Unlock()
	s.clientsDidChange()

	if err := s.mcp.RegisterSession(ctx, c); err != nil {
		s.logf("ide: register MCP session %s: %v", c.id, err)
	}
	s.logf("ide: client %s connected", c.id)
	return c, true
}

// serveClient runs the read loop, then cleans up exactly once: the client's pending
// diffs are rejected and torn down (saved ones stay until the file is written).
func (s *Server) serveClient(c *client) {
	defer close(c.done)
	c.background.Add(2)
	go c.writeNotifications()
	go c.keepAlive(s.pingInterval)

	err := c.readLoop()

	c.cancel()
	c.conn.CloseNow()
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	s.forgetClient(c)
	c.handlers.Wait()
	c.background.Wait()
	s.logf("ide: client %s disconnected: %s", c.id, c.disconnectReason(err))
}

func (s *Server) forgetClient(c *client) {
	c.gone.Store(true)
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
	s.clientsDidChange()
	s.mcp.UnregisterSession(context.Background(), c.id)
	// A saved diff waits for the client to write the file, unless that is settled.
	s.closeDiffs(s.takeDiffs(func(d *diff) bool { return d.owner == c && d.watch == nil }))
}

func (c *client) disconnectReason(err error) string {
	if reason, ok := c.dropReason.Load().(string); ok {
		return reason
	}
	if status := websocket.CloseStatus(err); status != -1 {
		return fmt.Sprintf("closed with status %d", status)
	}
	return err.Error()
}

// shutdown lets in-flight answers (openDiffs just rejected by Stop) reach the client,
// then closes it with 1001 and waits until it is cleaned up.
func (c *client) shutdown(grace time.Duration) {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	waitGroupTimeout(&c.handlers, grace)
	c.dropReason.Store("server shutting down")
	c.conn.Close(websocket.StatusGoingAway, "Server shutting down")
	c.cancel()
	<-c.done
}

func (c *client) readLoop() error {
	for {
		_, data, err := c.conn.Read(c.ctx)
		if err != nil {
			return err
		}
		c.dispatch(data)
	}
}

// dispatch handles initialize and notifications inline, in read order (a tools/call
// must never overtake initialize), and every other request in its own goroutine:
// openDiff blocks for minutes while the client keeps sending.
func (c *client) dispatch(data []byte) {
	env, parsed := readEnvelope(data)
	if parsed && env.Method == "notifications/cancelled" {
		c.cancelRequest(env.Params.RequestID) // an openDiff served here; mcp-go hears it too
	}
	switch {
	case parsed && env.Method == "" && env.hasID():
		// A response to a request of ours; we send none, and HandleMessage would
		// answer it as an unknown method.
		c.server.logf("ide: client %s: ignoring a response with id %s", c.id, env.ID)
	case !parsed || env.Method == "initialize" || !env.hasID():
		c.handle(data, env)
	default:
		c.mu.Lock()
		if c.closing {
			c.mu.Unlock()
			return
		}
		c.handlers.Add(1)
		c.mu.Unlock()
		go func() {
			defer c.handlers.Done()
			switch {
			case !c.Initialized(): // mcp-go answers that
			case env.diff != nil || env.diffErr != nil:
				c.serveOpenDiff(env)
				return
			case env.closeTab != nil:
				c.serveCloseTab(env)
				return
			}
			c.handle(data, env)
		}()
	}
}

func (c *client) handle(data []byte, env envelope) {
	defer func() {
		// A bug in one request must not take the editor's bridge down.
		if r := recover(); r != nil {
			c.server.logf("ide: client %s: panic while handling %q: %v", c.id, env.Method, r)
			if env.hasID() {
				c.write(errorResponse(env.ID, &ToolError{Code: codeInternalError, Message: "Internal error"}))
			}
		}
	}()
	if resp := c.server.respond(c, data, env); resp != nil {
		c.write(resp)
	}
}

// write sends one JSON-RPC message as one text frame. coder/websocket serialises
// concurrent writers, so each message goes out whole.
func (c *client) write(msg any) {
	data, err := json.Marshal(msg)
	if err != nil {
		c.server.logf("ide: client %s: encode message: %v", c.id, err)
		return
	}
	c.writeFrame(data)
}

func (c *client) writeFrame(data []byte) {
	if err := c.conn.Write(c.ctx, websocket.MessageText, data); err != nil && c.ctx.Err() == nil {
		c.server.logf("ide: client %s: write: %v", c.id, err)
		c.conn.CloseNow()
	}
}

// enqueue queues a notification without ever blocking the caller (the editor).
func (c *client) enqueue(frame []byte) {
	select {
	case c.frames <- frame:
	default:
		c.server.logf("ide: client %s is not reading; dropped a notification", c.id)
	}
}

// writeNotifications is the one goroutine that sends notifications, ours and
// mcp-go's, so a slow client never blocks their senders.
func (c *client) writeNotifications() {
	defer c.background.Done()
	for {
		select {
		case <-c.ctx.Done():
			return
		case frame := <-c.frames:
			c.writeFrame(frame)
		case n := <-c.Notifications:
			c.write(n)
		}
	}
}

// keepAlive pings every interval and closes a client whose last pong is older than
// two intervals. The clock is the wall clock: after a laptop sleep the timer fires
// late, and then pong times are reset instead of dropping every client.
func (c *client) keepAlive(interval time.Duration) {
	defer c.background.Done()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	lastTick := wallNow()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-ticker.C:
		}
		now := wallNow()
		slept, dead := keepaliveVerdict(now, lastTick, time.Unix(0, c.lastPong.Load()), interval)
		lastTick = now
		if slept {
			c.lastPong.Store(now.UnixNano())
		}
		if dead {
			c.dropReason.Store(fmt.Sprintf("keepalive timeout (no pong for %v)", 2*interval))
			c.conn.CloseNow()
			return
		}
		c.background.Add(1)
		go c.ping(interval)
	}
}

func (c *client) ping(interval time.Duration) {
	defer c.background.Done()
	ctx, cancel := context.WithTimeout(c.ctx, 2*interval)
	defer cancel()
	if c.conn.Ping(ctx) == nil {
		c.lastPong.Store(wallNow().UnixNano())
	}
}

// keepaliveVerdict decides one keepalive tick: slept when the tick came more than
// 1.5 intervals after the previous one (the machine was asleep), dead when the last
// pong is older than two intervals.
func keepaliveVerdict(now, lastTick, lastPong time.Time, interval time.Duration) (slept, dead bool) {
	if now.Sub(lastTick) > interval*3/2 {
		return true, false
	}
	return false, now.Sub(lastPong) > 2*interval
}

// wallNow is the current time without its monotonic reading: the monotonic clock
// stops while the machine sleeps, and the keepalive must notice sleeps.
func wallNow() time.Time { return time.Now().Round(0) }

func (c *client) status() ClientStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ClientStatus{
		ID:           c.id,
		ClaudePID:    int(c.claudePID.Load()),
		ConnectedAt:  c.connectedAt,
		Ready:        c.ready,
		Conversation: c.conv,
	}
}

// conversation is the history conversation of the client's current turn.
func (c *client) conversation() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conv == "" {
		c.conv = history.NewConversationID()
	}
	return c.conv
}

// startNewTurn makes the next recorded edit start a new conversation; the CLI calls
// closeAllDiffTabs once at the start of every prompt.
func (c *client) startNewTurn() {
	c.mu.Lock()
	c.conv = ""
	c.mu.Unlock()
}

// The session, as mcp-go asks for it (the rest is mcpsession.State).

func (c *client) SessionID() string { return c.id }

// waitGroupTimeout waits for wg, at most d.
func waitGroupTimeout(wg *sync.WaitGroup, d time.Duration) {
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-finished:
	case <-timer.C:
	}
}
