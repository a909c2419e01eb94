package agenthooks

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// BenchmarkEdit is the work of the two hooks of one Edit of a 1,000-line file, in
// process (tests/bench/history/hooks_test.go times the whole processes).
func BenchmarkEdit(b *testing.B) {
	ws := testenv.TempDir(b)
	path := filepath.Join(ws, "big.go")
	lines := strings.SplitAfter(string(testenv.CodeLines(1000)), "\n")
	testenv.WriteFile(b, path, strings.Join(lines, ""))
	o := Options{MaxFileSize: 32 << 20}
	ev := func(name string, n int) string {
		return `{"session_id":"s","prompt_id":"p","cwd":"` + ws + `","hook_event_name":"` + name + `","tool_name":"Edit","tool_use_id":"t` +
			strconv.Itoa(n) + `","tool_input":{"file_path":"` + path + `"},"tool_response":{"originalFile":"x"}}`
	}
	for n := 0; b.Loop(); n++ {
		if r := Handle(context.Background(), strings.NewReader(ev(PreToolUse, n)), o); r.Code != 0 {
			b.Fatal(r.Message)
		}
		// Each edit changes a line, however many rounds b.Loop runs.
		lines[n%1000] = strings.TrimSuffix(lines[n%1000], "\n") + " // edit " + strconv.Itoa(n) + "\n"
		testenv.WriteFile(b, path, strings.Join(lines, ""))
		if r := Handle(context.Background(), strings.NewReader(ev(PostToolUse, n)), o); r.Code != 0 {
			b.Fatal(r.Message)
		}
	}
}
