package filetools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiff/mcpdiff/internal/jsonscan"
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
