package ide

import (
	"sync"
	"testing"
	"time"
)

// selection is a selection_changed payload as the Neovim side sends it.
var selection = map[string]any{
	"text":     "hello",
	"filePath": "/home/user/project/hello.txt",
	"fileUrl":  "file:///home/user/project/hello.txt",
	"selection": map[string]any{
		"start":   map[string]any{"line": 0, "character": 0},
		"end":     map[string]any{"line": 0, "character": 5},
		"isEmpty": false,
	},
}

const selectionFrame = `{"jsonrpc":"2.0","method":"selection_changed","params":{"filePath":"/home/user/project/hello.txt","fileUrl":"file:///home/user/project/hello.txt","selection":{"end":{"character":5,"line":0},"isEmpty":false,"start":{"character":0,"line":0}},"text":"hello"}}`

func TestBroadcastReachesEveryInitializedClient(t *testing.T) {
	s := startServer(t, nil, nil)
	c1 := connectReady(t, s)
	c2 := connectReady(t, s)
	s.Broadcast("selection_changed", selection)
	for _, c := range []*testClient{c1, c2} {
		if got := c.waitNote(); string(got.raw) != selectionFrame {
			t.Errorf("got %s\nwant %s", got.raw, selectionFrame)
		}
	}
}

func TestBroadcastSkipsClientsBeforeTheirHandshake(t *testing.T) {
	s := startServer(t, nil, nil)
	early := connect(t, s) // connected, no initialize yet
	s.Broadcast("selection_changed", selection)
	early.handshake(1)
	s.Broadcast("selection_changed", map[string]any{"text": "second"})
	if got := early.waitNote(); got.Method != "selection_changed" || string(got.Params) != `{"text":"second"}` {
		t.Errorf("first notification after the handshake is %s, want the second selection", got.raw)
	}
}

func TestAtMentionIsQueuedUntilAClientConnects(t *testing.T) {
	s := startServer(t, nil, nil)
	s.AtMention(map[string]any{"filePath": "/home/user/project/hello.txt", "lineStart": 0, "lineEnd": 1})
	if n := s.Status().QueuedMentions; n != 1 {
		t.Fatalf("%d queued mentions, want 1", n)
	}
	c := connectReady(t, s)
	const want = `{"jsonrpc":"2.0","method":"at_mentioned","params":{"filePath":"/home/user/project/hello.txt","lineEnd":1,"lineStart":0}}`
	if got := c.waitNote(); string(got.raw) != want {
		t.Errorf("got %s\nwant %s", got.raw, want)
	}
	if n := s.Status().QueuedMentions; n != 0 {
		t.Errorf("%d mentions still queued after the flush", n)
	}

	// With a client connected, mentions go out at once.
	s.AtMention(map[string]any{"filePath": "src/"})
	if got := c.waitNote(); string(got.Params) != `{"filePath":"src/"}` {
		t.Errorf("got %s, want the direct mention", got.raw)
	}
}

func TestQueuedAtMentionExpiresAfterTenSeconds(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	s := startServer(t, nil, func(s *Server) { s.now = clock.Now })
	s.AtMention(map[string]any{"filePath": "old.txt"})
	clock.Advance(10*time.Second + time.Millisecond)
	s.AtMention(map[string]any{"filePath": "new.txt"})
	c := connectReady(t, s)
	if got := c.waitNote(); string(got.Params) != `{"filePath":"new.txt"}` {
		t.Errorf("first mention delivered is %s, want only new.txt (old.txt expired)", got.raw)
	}
	s.Broadcast("selection_changed", map[string]any{"text": "marker"})
	if got := c.waitNote(); got.Method != "selection_changed" {
		t.Errorf("got %s after the flush, want nothing but the marker", got.raw)
	}
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
