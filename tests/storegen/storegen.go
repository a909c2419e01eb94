// Package storegen writes big edit-history stores quickly for the tests and
// benchmarks that need thousands of entries (recording each through the history
// package would take minutes). The log lines are history.Entry values as the
// history writes them, with a small diff each; the stores are for listing, not for
// rebuilding files (they have no checkpoints).
package storegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpdiff/mcpdiff/history"
)

// Write makes ws/.mcp/edit_history with convs conversations of perConv edits each,
// spread over files file000.go... of ws. Every tenth edit is pending, the rest
// accepted. It returns the conversation ids in order.
func Write(ws string, convs, perConv int) ([]string, error) {
	store := filepath.Join(ws, filepath.FromSlash(history.Dir))
	for _, d := range []string{"logs", "diffs", "checkpoints", "tmp"} {
		if err := os.MkdirAll(filepath.Join(store, d), 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(store, "FORMAT"), []byte("mcpdiff-edit-history 1\n"), 0o600); err != nil {
		return nil, err
	}
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var ids []string
	seq := int64(0)
	one := 1
	for c := range convs {
		conv := fmt.Sprintf("conv_%d_%08x", start.UnixMilli()+int64(c), c)
		ids = append(ids, conv)
		if err := os.MkdirAll(filepath.Join(store, "diffs", conv), 0o700); err != nil {
			return nil, err
		}
		var log bytes.Buffer
		for i := range perConv {
			seq++
			file := fmt.Sprintf("file%03d.go", (c*perConv+i)%100)
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", seq, seq)
			diff := fmt.Sprintf("--- %s\n+++ %s\n@@ -%d,1 +%d,1 @@\n-\told%d()\n+\tnew%d()\n", file, file, i+1, i+1, i, i)
			rel := "diffs/" + conv + "/" + id + ".diff"
			if err := os.WriteFile(filepath.Join(store, filepath.FromSlash(rel)), []byte(diff), 0o600); err != nil {
				return nil, err
			}
			status := history.Accepted
			if seq%10 == 0 {
				status = history.Pending
			}
			before, after := fmt.Sprintf("%064x", 2*seq), fmt.Sprintf("%064x", 2*seq+1)
			e := history.Entry{
				EditID: id, ConversationID: conv, ToolCallIndex: i, Seq: seq,
				Timestamp: start.Add(time.Duration(seq) * time.Second).Format("2006-01-02T15:04:05.000Z"),
				Operation: history.Edit, FilePath: filepath.Join(ws, file), ToolName: "edit_file", Status: status,
				DiffFile: &rel, HashBefore: &before, HashAfter: &after, Source: history.SourceMCP, Added: &one, Removed: &one,
			}
			line, err := json.Marshal(e)
			if err != nil {
				return nil, err
			}
			log.Write(line)
			log.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(store, "logs", conv+".log"), log.Bytes(), 0o600); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
