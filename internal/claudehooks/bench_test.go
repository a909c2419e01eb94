package claudehooks

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// BenchmarkEdit is the work of the two hooks of one Edit of a 1,000-line file, in
// process (tests/bench/hooks times the whole processes).
func BenchmarkEdit(b *testing.B) {
	ws := testenv.TempDir(b)
	path := filepath.Join(ws, "big.go")
	var lines []string
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("\tvalue%04d := compute(%d, \"some text on line %d\") // comment", i, i, i))
	}
	content := strings.Join(lines, "\n") + "\n"
	testenv.WriteFile(b, path, content)
	o := Options{MaxFileSize: 32 << 20}
	ev := func(name string, n int) string {
		return `{"session_id":"s","prompt_id":"p","cwd":"` + ws + `","hook_event_name":"` + name + `","tool_name":"Edit","tool_use_id":"t` +
			fmt.Sprint(n) + `","tool_input":{"file_path":"` + path + `"},"tool_response":{"originalFile":"x"}}`
	}
	for n := 0; b.Loop(); n++ {
		if r := Handle(context.Background(), strings.NewReader(ev(PreToolUse, n)), o); r.Code != 0 {
			b.Fatal(r.Message)
		}
		content = strings.Replace(content, "comment", "c", 1)
		testenv.WriteFile(b, path, content)
		if r := Handle(context.Background(), strings.NewReader(ev(PostToolUse, n)), o); r.Code != 0 {
			b.Fatal(r.Message)
		}
	}
}
