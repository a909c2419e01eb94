package ide

import (
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkOpenDiffRoundTrip measures one openDiff over the real WebSocket: request,
// the editor shown the proposal, the user's accept, and the FILE_SAVED answer.
func BenchmarkOpenDiffRoundTrip(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"1KB", 1 << 10}, {"100KB", 100 << 10}, {"5MB", 5 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			s := startServer(b, nil, nil)
			c := connectReady(b, s)
			contents := strings.Repeat("x", size.bytes-1) + "\n"
			path := filepath.Join(b.TempDir(), "a.txt")
			b.SetBytes(int64(size.bytes))
			b.ResetTimer()
			for range b.N {
				wait := c.openShown(s, path, contents, tabA)
				s.Answer(tabA, true, contents)
				if texts := c.texts(wait()); len(texts) != 2 || texts[0] != "FILE_SAVED" {
					b.Fatalf("answer %q", texts)
				}
				c.callTool("close_tab", map[string]any{"tab_name": tabA})()
			}
		})
	}
}
