package ide

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// queuedMention is an at_mentioned waiting for a client to connect.
type queuedMention struct {
	frame []byte
	at    time.Time
}

// Broadcast sends a notification (selection_changed) to every client whose
// handshake is complete. It never blocks.
func (s *Server) Broadcast(method string, params any) {
	frame, err := notificationFrame(method, params)
	if err != nil {
		s.logf("ide: %s: encode params: %v", method, err)
		return
	}
	s.mu.Lock()
	ready := s.readyClientsLocked()
	s.mu.Unlock()
	for _, c := range ready {
		c.enqueue(frame)
	}
}

// AtMention sends at_mentioned to the connected clients. With none connected it is
// queued and sent after the next handshake, unless it is older than 10 s by then.
func (s *Server) AtMention(params any) {
	frame, err := notificationFrame("at_mentioned", params)
	if err != nil {
		s.logf("ide: at_mentioned: encode params: %v", err)
		return
	}
	s.mu.Lock()
	ready := s.readyClientsLocked()
	if len(ready) == 0 {
		s.mentions = append(s.freshMentionsLocked(), queuedMention{frame: frame, at: s.now()})
		if extra := len(s.mentions) - maxQueuedMentions; extra > 0 {
			s.mentions = s.mentions[extra:]
		}
		s.mu.Unlock()
		s.logf("ide: no Claude Code connected; at_mentioned queued for up to %v", mentionTTL)
		return
	}
	s.mu.Unlock()
	for _, c := range ready {
		c.enqueue(frame)
	}
}

func notificationFrame(method string, params any) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params})
}

func (s *Server) readyClientsLocked() []*client {
	var ready []*client
	for c := range s.clients {
		c.mu.Lock()
		if c.ready {
			ready = append(ready, c)
		}
		c.mu.Unlock()
	}
	return ready
}

// freshMentionsLocked is the queue without the mentions that waited too long.
func (s *Server) freshMentionsLocked() []queuedMention {
	now := s.now()
	var fresh []queuedMention
	for _, m := range s.mentions {
		if now.Sub(m.at) <= mentionTTL {
			fresh = append(fresh, m)
		}
	}
	return fresh
}

// onInitialized completes a client's handshake: from now on it gets notifications,
// first the queued at_mentions.
func (s *Server) onInitialized(ctx context.Context, _ mcp.JSONRPCNotification) {
	c, ok := server.ClientSessionFromContext(ctx).(*client)
	if !ok {
		return
	}
	s.mu.Lock()
	c.mu.Lock()
	c.ready = true
	c.mu.Unlock()
	queued := s.freshMentionsLocked()
	s.mentions = nil
	s.mu.Unlock()
	for _, m := range queued {
		c.enqueue(m.frame)
	}
}

// onIDEConnected remembers the claude process behind a client (for Status).
func (s *Server) onIDEConnected(ctx context.Context, n mcp.JSONRPCNotification) {
	c, ok := server.ClientSessionFromContext(ctx).(*client)
	if !ok {
		return
	}
	pid, ok := n.Params.AdditionalFields["pid"].(float64)
	if !ok {
		s.logf("ide: client %s sent ide_connected without a pid", c.id)
		return
	}
	c.claudePID.Store(int64(pid))
	s.logf("ide: client %s is Claude Code (pid %d)", c.id, int64(pid))
}
