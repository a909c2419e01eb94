package testenv

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

const (
	files        = 100 // file000.go ... file099.go
	linesPerFile = 200
)

// WriteStore makes ws/.mcp/edit_history with convs conversations of perConv edits each,
// spread over files file000.go... of ws, each edit changing one line. Every tenth
// edit is pending, the rest accepted. The store is signed with this test process's
// key (Adopt). It returns the conversation ids in order.
func WriteStore(ws string, convs, perConv int) ([]string, error) {
	store := filepath.Join(ws, filepath.FromSlash(history.Dir))
	for _, d := range []string{"logs", "diffs", "checkpoints", "tmp"} {
		if err := os.MkdirAll(filepath.Join(store, d), 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(store, "FORMAT"), []byte("mcpdiff-edit-history 1\n"), 0o600); err != nil {
		return nil, err
	}
	content := make([][]string, files)
	for f := range content {
		content[f] = make([]string, linesPerFile)
		for l := range content[f] {
			content[f][l] = fmt.Sprintf("\tline%03d_%03d()\n", f, l)
		}
	}
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var ids []string
	seq := int64(0)
	one := 1
	for c := range convs {
		conv := fmt.Sprintf("conv_%d_%08x", start.UnixMilli()+int64(c), c)
		ids = append(ids, conv)
		for _, d := range []string{"diffs", "checkpoints"} {
			if err := os.MkdirAll(filepath.Join(store, d, conv), 0o700); err != nil {
				return nil, err
			}
		}
		touched := map[int]bool{}
		var log bytes.Buffer
		for i := range perConv {
			seq++
			f := (c*perConv + i) % files
			name := fmt.Sprintf("file%03d.go", f)
			before := []byte(strings.Join(content[f], ""))
			content[f][(c+i)%linesPerFile] = fmt.Sprintf("\tedit%06d()\n", seq)
			after := []byte(strings.Join(content[f], ""))
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", seq, seq)
			rel := "diffs/" + conv + "/" + id + ".diff"
			if err := os.WriteFile(filepath.Join(store, filepath.FromSlash(rel)), []byte(udiff.Unified(name, name, before, after, 3)), 0o600); err != nil {
				return nil, err
			}
			status := history.Accepted
			if seq%10 == 0 {
				status = history.Pending
			}
			hb, ha := SHA256(before), SHA256(after)
			e := history.Entry{
				EditID: id, ConversationID: conv, ToolCallIndex: i, Seq: seq,
				Timestamp: start.Add(time.Duration(seq) * time.Second).Format("2006-01-02T15:04:05.000Z"),
				Operation: history.Edit, FilePath: filepath.Join(ws, name), ToolName: "edit_file", Status: status,
				DiffFile: &rel, HashBefore: &hb, HashAfter: &ha, Source: history.SourceMCP, Added: &one, Removed: &one,
			}
			if !touched[f] {
				touched[f] = true
				chk := "checkpoints/" + conv + "/" + name + ".chkpt"
				if err := os.WriteFile(filepath.Join(store, filepath.FromSlash(chk)), before, 0o600); err != nil {
					return nil, err
				}
				e.CheckpointFile = &chk
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
	for f := range content {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("file%03d.go", f)), []byte(strings.Join(content[f], "")), 0o644); err != nil {
			return nil, err
		}
	}
	return ids, Adopt(ws)
}

// SHA256 is the hex SHA-256 of s, as the history writes hashes.
func SHA256[T string | []byte](s T) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
