package ide

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestUpgradeWithoutTheRightTokenIsRefused(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
	}{
		{"missing header", http.Header{}},
		{"wrong token", authHeaders("0123456789abcdef0123456789abcdef")},
		{"token prefix", nil}, // filled in below: the real token minus its last character
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, nil, nil)
			header := tt.header
			if header == nil {
				header = authHeaders(s.Token()[:len(s.Token())-1])
			}
			_, resp, err := dialServer(s.Port(), header)
			if err == nil {
				t.Fatal("the upgrade succeeded")
			}
			if resp == nil || resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("got response %v, want 401", resp)
			}
			s.logs.waitFor(t, "refused WebSocket upgrade")
			if strings.Contains(s.logs.all(), s.Token()) {
				t.Error("the log contains the token")
			}
			if calls := s.editor.callLog(); len(calls) != 0 {
				t.Errorf("editor calls after a refused upgrade: %v", calls)
			}
			if got := s.Status().RefusedUpgrades; got != 1 {
				t.Errorf("Status().RefusedUpgrades = %d, want 1", got)
			}
		})
	}
}

func TestUpgradeWithAnOriginHeaderIsRefused(t *testing.T) {
	s := startServer(t, nil, nil)
	header := authHeaders(s.Token())
	header.Set("Origin", "https://evil.example")
	_, resp, err := dialServer(s.Port(), header)
	if err == nil {
		t.Fatal("the upgrade succeeded")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("got response %v, want 403", resp)
	}
	if calls := s.editor.callLog(); len(calls) != 0 {
		t.Errorf("editor calls after a refused upgrade: %v", calls)
	}
}

func TestUpgradeSelectsTheMCPSubprotocol(t *testing.T) {
	s := startServer(t, nil, nil)
	conn, resp, err := dialServer(s.Port(), authHeaders(s.Token()))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.CloseNow()
	if got := conn.Subprotocol(); got != "mcp" {
		t.Errorf("subprotocol %q, want mcp", got)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != "mcp" {
		t.Errorf("Sec-WebSocket-Protocol: %q, want mcp", got)
	}
}

func TestInitializeAnswersTheClientsProtocolVersion(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2024-11-05"} {
		t.Run(version, func(t *testing.T) {
			s := startServer(t, nil, nil)
			c := connect(t, s)
			ch := c.expect("0")
			c.send(strings.Replace(cliInitialize, "2025-11-25", version, 1))
			m := c.await(ch, "initialize")
			var result struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
				ServerInfo      struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"serverInfo"`
			}
			if err := json.Unmarshal(m.Result, &result); err != nil {
				t.Fatalf("decode %s: %v", m.Result, err)
			}
			if result.ProtocolVersion != version {
				t.Errorf("protocolVersion %q, want %q", result.ProtocolVersion, version)
			}
			if result.ServerInfo.Name != "mcpdiff-neovim" || result.ServerInfo.Version != "1.2.3" {
				t.Errorf("serverInfo %+v, want mcpdiff-neovim 1.2.3", result.ServerInfo)
			}
			if _, ok := result.Capabilities["tools"]; !ok {
				t.Errorf("capabilities %s lack tools", m.Result)
			}
			for _, absent := range []string{"prompts", "resources"} {
				if _, ok := result.Capabilities[absent]; ok {
					t.Errorf("capabilities advertise %s, which the CLI would then call: %s", absent, m.Result)
				}
			}
		})
	}
}

func TestHandshakeRecordsTheClaudePID(t *testing.T) {
	s := startServer(t, nil, nil)
	connectReady(t, s)
	clients := s.Status().Clients
	if len(clients) != 1 || clients[0].ClaudePID != 4242 || !clients[0].Ready {
		t.Fatalf("Status().Clients = %+v, want one ready client with claude pid 4242", clients)
	}
}

func TestKeepaliveDropsAClientThatStopsAnsweringPings(t *testing.T) {
	s := startServer(t, nil, func(s *Server) { s.pingInterval = 20 * time.Millisecond })
	// A client that never reads never answers pings.
	conn, _, err := dialServer(s.Port(), authHeaders(s.Token()))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.CloseNow()
	s.logs.waitFor(t, "keepalive timeout")
	s.logs.waitFor(t, "disconnected")
	if n := len(s.Status().Clients); n != 0 {
		t.Errorf("%d clients still connected after the keepalive timeout", n)
	}
}

func TestKeepaliveVerdict(t *testing.T) {
	const interval = 30 * time.Second
	base := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name                string
		sinceTick           time.Duration
		sincePong           time.Duration
		wantSlept, wantDead bool
	}{
		{"fresh pong", interval, interval, false, false},
		{"pong exactly two intervals old", interval, 2 * interval, false, false},
		{"pong older than two intervals", interval, 2*interval + time.Second, false, true},
		{"tick late after a sleep", 10 * time.Minute, 10 * time.Minute, true, false},
		{"tick slightly late", interval * 3 / 2, 3 * interval, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slept, dead := keepaliveVerdict(base, base.Add(-tt.sinceTick), base.Add(-tt.sincePong), interval)
			if slept != tt.wantSlept || dead != tt.wantDead {
				t.Errorf("keepaliveVerdict = slept %v, dead %v; want %v, %v", slept, dead, tt.wantSlept, tt.wantDead)
			}
		})
	}
}
