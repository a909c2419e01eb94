package filetools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpdiff/mcpdiff/internal/testenv/timeouts"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// BenchmarkRecordingOverhead is what the edit history costs per edit: the same
// one-line edit_file call, timed on a server that records it and on one that only
// applies it (writeOnly), in one conversation as an agent makes them. The two are
// called in turn, so a busy machine slows both alike. Reported: the median of each
// (history-ns/op, plain-ns/op) and their ratio (overhead-x; goal under 1.3).
func BenchmarkRecordingOverhead(b *testing.B) {
	for _, size := range []struct {
		name string
		reps int
		file func() (head, tail string)
	}{
		{"1000-lines", 50, func() (string, string) { return string(testenv.CodeLines(500)), string(testenv.CodeLines(499)) }},
		{"1MB", 20, func() (string, string) {
			return string(testenv.CodeBytes(1<<19, 0)), string(testenv.CodeBytes(1<<19, 1<<20))
		}},
	} {
		b.Run(size.name, func(b *testing.B) {
			head, tail := size.file()
			content := func(k int) string { return head + benchTarget(k) + "\n" + tail }
			recorded := newBenchClient(b, false, content(0))
			plain := newBenchClient(b, true, content(0))
			var withHistory, without []time.Duration
			for k := 1; k <= 1+size.reps*b.N; k++ {
				h := recorded.edit(b, benchTarget(k-1), benchTarget(k), content(k))
				p := plain.edit(b, benchTarget(k-1), benchTarget(k), content(k))
				if k > 1 { // the first call opens the conversation (and its checkpoint)
					withHistory, without = append(withHistory, h), append(without, p)
				}
			}
			hm, pm := medianOf(withHistory), medianOf(without)
			b.ReportMetric(float64(hm.Nanoseconds()), "ns/op")
			b.ReportMetric(float64(hm.Nanoseconds()), "history-ns/op")
			b.ReportMetric(float64(pm.Nanoseconds()), "plain-ns/op")
			b.ReportMetric(float64(hm)/float64(pm), "overhead-x")
			b.Logf("recording overhead, one-line edit_file, %s: with history %v, without %v (medians of %d), ratio %.2fx (goal < 1.3x)",
				size.name, hm, pm, len(withHistory), float64(hm)/float64(pm))
		})
	}
}

// benchClient is an in-process client of a server rooted in a fresh folder holding
// one file.
type benchClient struct {
	c    *client.Client
	path string
	conv string
}

func newBenchClient(b *testing.B, noHistory bool, content string) *benchClient {
	b.Helper()
	dir := b.TempDir()
	path := filepath.Join(dir, "file.go")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Config{Roots: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	if noHistory {
		srv.recordAll = writeOnly
	}
	c, err := client.NewInProcessClient(srv.mcp)
	if err != nil {
		b.Fatal(err)
	}
	if err := testenv.Handshake(context.Background(), c, "bench", false); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &benchClient{c: c, path: path}
}

// writeOnly puts a call's files in place as history.RecordAll does, without logging
// anything.
func writeOnly(_ context.Context, batches []history.Batch) ([][]*history.Entry, error) {
	for _, b := range batches {
		f := b.Files
		err := f.Verify()
		if err == nil {
			err = f.Stage()
		}
		if err == nil {
			err = f.Apply()
		}
		if err != nil {
			return nil, f.Undo(err)
		}
	}
	return nil, nil
}

var benchConvLine = regexp.MustCompile(`mcp_conversation_id: (\S+)`)

// edit replaces old with new through edit_file, checks the file now holds want, and
// returns how long the call took.
func (e *benchClient) edit(b *testing.B, old, new, want string) time.Duration {
	b.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "edit_file"
	args := map[string]any{"path": e.path, "old_string": old, "new_string": new}
	if e.conv != "" {
		args["mcp_conversation_id"] = e.conv
	}
	req.Params.Arguments = args
	start := time.Now()
	res, err := e.c.CallTool(context.Background(), req)
	elapsed := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	text := ""
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			text += t.Text
		}
	}
	if res.IsError {
		b.Fatalf("edit_file: %s", text)
	}
	if m := benchConvLine.FindStringSubmatch(text); m != nil && e.conv == "" {
		e.conv = m[1]
	}
	got, err := os.ReadFile(e.path)
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Equal(got, []byte(want)) {
		b.Fatalf("the edit did not land: the file does not hold exactly the new line")
	}
	return elapsed
}

func medianOf(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchTarget is the edited line at version k.
func benchTarget(k int) string {
	return fmt.Sprintf("\tbenchTarget := \"version %d\" // the line the benchmark edits", k)
}

// BenchmarkReadTextFileKept is the server's own share of an agent's read of a
// 10,000-line file it read before: read_text_file's handler as stdio serves it, the
// file unchanged, so the kept reading answers (a stat, not a read). The client's
// share (moving and decoding the 700 KB answer) is what scripts/bench-ts adds.
func BenchmarkReadTextFileKept(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.go")
	if err := os.WriteFile(path, testenv.CodeLines(10000), 0o644); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Config{Roots: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	srv.bigTexts = &bigTexts{pending: map[string][]byte{}}
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_text_file"
	req.Params.Arguments = map[string]any{"path": path}
	read := func() {
		res, err := srv.readTextFile(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatalf("read_text_file: %v %v", err, res.Content)
		}
		if _, ok := srv.bigTexts.escaped(res.Content[0].(mcp.TextContent).Text); !ok {
			b.Fatal("the answer is not a kept big text")
		}
	}
	// A read is kept once the file's identity has settled, a tick after its write.
	deadline := time.Now().Add(timeouts.Scaled(5 * time.Second))
	for srv.readings.files == nil {
		if time.Now().After(deadline) {
			b.Fatal("the read of an unchanged file was never kept")
		}
		read()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		read()
	}
}
