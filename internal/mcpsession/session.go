// Package mcpsession holds what mcp-go asks of a client session, for the two
// transports that keep their own sessions: the file tools' stdio connection and the
// IDE server's WebSocket clients.
package mcpsession

import (
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// State is a session's handshake state and its queue of notifications. Embedded in
// a connection (which adds SessionID), it makes the connection an mcp-go
// server.SessionWithLogging.
type State struct {
	Notifications chan mcp.JSONRPCNotification // mcp-go puts them; the connection's writer sends them
	initialized   atomic.Bool
	logLevel      atomic.Value // mcp.LoggingLevel
}

func (s *State) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.Notifications }
func (s *State) Initialize()                                         { s.initialized.Store(true) }
func (s *State) Initialized() bool                                   { return s.initialized.Load() }
func (s *State) SetLogLevel(level mcp.LoggingLevel)                  { s.logLevel.Store(level) }

// GetLogLevel is the level the client set, or errors only until it sets one.
func (s *State) GetLogLevel() mcp.LoggingLevel {
	if level, ok := s.logLevel.Load().(mcp.LoggingLevel); ok {
		return level
	}
	return mcp.LoggingLevelError
}
