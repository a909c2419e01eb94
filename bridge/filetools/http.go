package filetools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// HTTP is the file tools' streamable HTTP transport (mcp-go's), at one endpoint path.
// A session its client ended with DELETE is answered 404 afterwards, whatever the
// method, as the MCP transport requires. A session id the server did not end is
// served, even one it never issued: a client of a server that restarted goes on
// (Claude Code, for one, keeps its session id and never initializes again after a
// 404). subscriptions/listen (protocol 2026-07-28) is "method not found": the tools
// never change and nothing else is sent, so there is nothing to subscribe to.
type HTTP struct {
	mcp   *server.StreamableHTTPServer
	ended *endedSessions
}

// HTTP returns the streamable HTTP transport of s, served at path.
func (s *Server) HTTP(path string) *HTTP {
	ended := &endedSessions{seen: map[string]struct{}{}, forget: s.sessions.Delete}
	return &HTTP{
		mcp:   server.NewStreamableHTTPServer(s.mcp, server.WithEndpointPath(path), server.WithSessionIdManager(ended)),
		ended: ended,
	}
}

// ServeHTTP serves one request of the transport.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// mcp-go checks a POST's session itself (endedSessions.Validate), but not a GET's
	// or a DELETE's. Requests of protocol 2026-07-28 have no sessions: mcp-go answers
	// them.
	if r.Method == http.MethodPost && refuseListen(w, r) {
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodDelete {
		if id := r.Header.Get(server.HeaderKeySessionID); id != "" && h.ended.has(id) &&
			!mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			http.Error(w, "Session terminated", http.StatusNotFound)
			return
		}
	}
	h.mcp.ServeHTTP(w, r)
}

// refuseListen answers a subscriptions/listen request with the error of a method the
// server does not have (-32601, HTTP 404 in protocol 2026-07-28), as it is for a
// server that declares no notifications (no listChanged, no resources): mcp-go would
// acknowledge an empty subscription and end the stream at once, and then its
// acknowledgment sometimes comes after the result or not at all (its notification
// forwarder loses the race to the response). A request whose Mcp-Method header and
// body disagree is left to mcp-go, which refuses it.
func refuseListen(w http.ResponseWriter, r *http.Request) bool {
	if strings.TrimSpace(r.Header.Get(mcp.HeaderMethod)) != string(mcp.MethodSubscriptionsListen) ||
		!mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err != nil || json.Unmarshal(body, &msg) != nil || msg.Method != string(mcp.MethodSubscriptionsListen) ||
		len(msg.ID) == 0 || string(msg.ID) == "null" {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"subscriptions/listen: mcpdiff sends no notifications to subscribe to (its tools never change)"}}`+"\n",
		msg.ID, mcp.METHOD_NOT_FOUND)
	return true
}

// Shutdown ends the sessions' open streams.
func (h *HTTP) Shutdown(ctx context.Context) error { return h.mcp.Shutdown(ctx) }

// endedSessions is mcp-go's session id manager for HTTP: ids made and checked as
// mcp-go's default does (its format only), plus the ids of sessions ended with
// DELETE, which are refused. It keeps the last maxEnded of those; a session ended
// before them would be served again.
type endedSessions struct {
	server.StatelessGeneratingSessionIdManager
	forget func(id any) // drops what the tools kept for the session

	mu   sync.Mutex
	seen map[string]struct{}
	ring []string // the ids in seen, in the order they ended, from next on
	next int
}

const maxEnded = 4096

func (e *endedSessions) has(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.seen[id]
	return ok
}

// Validate refuses a malformed id (mcp-go answers 404) and says whether the session
// was ended (404 too).
func (e *endedSessions) Validate(id string) (isTerminated bool, err error) {
	if _, err := e.StatelessGeneratingSessionIdManager.Validate(id); err != nil {
		return false, err
	}
	return e.has(id), nil
}

// Terminate records that the client ended the session (mcp-go then answers 200)
// and drops the session's roots and folder.
func (e *endedSessions) Terminate(id string) (isNotAllowed bool, err error) {
	if _, err := e.StatelessGeneratingSessionIdManager.Validate(id); err != nil {
		return false, nil // nothing to end; answered as mcp-go's default does
	}
	e.mu.Lock()
	if _, ok := e.seen[id]; !ok {
		if len(e.ring) < maxEnded {
			e.ring = append(e.ring, id)
		} else {
			delete(e.seen, e.ring[e.next])
			e.ring[e.next] = id
			e.next = (e.next + 1) % maxEnded
		}
		e.seen[id] = struct{}{}
	}
	e.mu.Unlock()
	e.forget(id)
	return false, nil
}
