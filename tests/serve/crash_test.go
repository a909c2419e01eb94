//go:build unix

package serve

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Kill -9 the server at random moments during a stream of pipelined edits. After
// each kill: every log parses, every file equals the before or the after of its last
// logged change, and once a server runs again no temp file is left anywhere.
func TestKillNineDuringEdits(t *testing.T) {
	t.Parallel()
	// 30: the store grows with every run, and under the -race binary make test uses
	// 60 runs took three minutes; MCPDIFF_KILL_TRIALS asks for more.
	runs := 30
	if n, err := strconv.Atoi(os.Getenv("MCPDIFF_KILL_TRIALS")); err == nil && n > 0 {
		runs = n
	}
	if testing.Short() {
		runs = 10
	}
	dir := testenv.TempDir(t)
	for i := 0; i < 5; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte("start\n"), 0o644)
	}
	rng := rand.New(rand.NewSource(7))
	interrupted := 0
	for run := 0; run < runs; run++ {
		crashOnce(t, dir, rng, run)
		interrupted += checkAfterCrash(t, dir, run)
	}
	t.Logf("%d runs; %d logged changes were cut off before their file was written", runs, interrupted)
	// A new server sweeps what the killed ones left behind.
	s := startIn(t, dir)
	s.ok("insert_contents", map[string]any{"path": "f0.txt", "line": 0, "content": "after the crashes"})
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Fatalf("temp files left after restart: %v", left)
	}
}

// crashOnce pipes a burst of calls into a fresh server and kills it after a random
// number of answers.
func crashOnce(t *testing.T, dir string, rng *rand.Rand, run int) {
	t.Helper()
	cmd := exec.Command(testenv.Binary, "serve", "--root", dir)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	w := bufio.NewWriter(stdin)
	send := func(id int, method string, params any) {
		msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
		if id > 0 {
			msg["id"] = id
		}
		b, _ := json.Marshal(msg)
		w.Write(append(b, '\n'))
	}
	send(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "crash", "version": "1"}})
	send(0, "notifications/initialized", nil)
	big := strings.Repeat(fmt.Sprintf("run %d: a long line to make the write take a while\n", run), 12000)
	calls := 2
	for i := 0; i < 30; i++ {
		f := fmt.Sprintf("f%d.txt", rng.Intn(5))
		var name string
		var args map[string]any
		switch rng.Intn(6) {
		case 0:
			name, args = "write_file", map[string]any{"path": f, "content": big}
		case 1:
			name, args = "write_file", map[string]any{"path": f, "content": fmt.Sprintf("small %d %d\n", run, i)}
		case 2:
			name, args = "create_file", map[string]any{"path": fmt.Sprintf("new/%d-%d.txt", run, i), "content": "new\n"}
		case 3:
			name, args = "move_file", map[string]any{"source": fmt.Sprintf("new/%d-%d.txt", run, i-1), "destination": fmt.Sprintf("moved/%d-%d.txt", run, i)}
		case 4:
			name, args = "delete_file", map[string]any{"path": fmt.Sprintf("moved/%d-%d.txt", run, i-1)}
		default:
			name, args = "insert_contents", map[string]any{"path": f, "line": 0, "content": fmt.Sprintf("line %d %d", run, i)}
		}
		send(calls, "tools/call", map[string]any{"name": name, "arguments": args})
		calls++
	}
	w.Flush()
	// Kill after a random number of answers: the server is then mid-way through the rest.
	killAfter := rng.Intn(12)
	r := bufio.NewReader(stdout)
	for n := 0; n < killAfter; n++ {
		if _, err := r.ReadBytes('\n'); err != nil {
			break
		}
	}
	cmd.Process.Kill()
	io.Copy(io.Discard, r)
}

// checkAfterCrash returns how many paths were found in the state before their last
// logged change (the kill fell between logging and writing): before the last entry,
// or before an earlier entry of the batch it ended (calls batched on one file are
// logged together, at one instant, and written once).
func checkAfterCrash(t *testing.T, dir string, run int) (interrupted int) {
	t.Helper()
	store := testenv.OpenStore(t, dir)
	list, err := store.List(history.Filter{})
	if err != nil {
		t.Fatalf("run %d: %v", run, err)
	}
	if len(list.Warnings) > 0 {
		t.Fatalf("run %d: a log did not parse: %v", run, list.Warnings)
	}
	byPath := map[string][]*history.Entry{} // in the order logged
	for _, e := range list.Entries {
		byPath[e.FilePath] = append(byPath[e.FilePath], e)
		if e.SourcePath != nil {
			byPath[*e.SourcePath] = append(byPath[*e.SourcePath], e)
		}
	}
	for path, entries := range byPath {
		e := entries[len(entries)-1]
		got, exists := fileHash(path)
		if got == stateAfter(e, path) {
			continue
		}
		cut := false
		for i := len(entries) - 1; i >= 0 && !cut; i-- {
			b := entries[i]
			if i < len(entries)-1 && (b.Timestamp != e.Timestamp || stateAfter(b, path) != stateBefore(entries[i+1], path)) {
				break // not logged in the last batch
			}
			cut = got == stateBefore(b, path)
		}
		if !cut {
			t.Fatalf("run %d: %s is neither before nor after its last logged change %s (%s) or its batch: exists=%v hash %s, before %s, after %s",
				run, path, e.EditID, e.Operation, exists, got, stateBefore(e, path), stateAfter(e, path))
		}
		interrupted++
	}
	return interrupted
}

// stateBefore/After describe a path around an entry: "absent" or the content hash.
func stateBefore(e *history.Entry, path string) string {
	if e.Operation == history.Move && path == e.FilePath {
		return "absent"
	}
	if e.HashBefore == nil {
		return "absent"
	}
	return *e.HashBefore
}

func stateAfter(e *history.Entry, path string) string {
	if e.Operation == history.Move && e.SourcePath != nil && path == *e.SourcePath {
		return "absent"
	}
	if e.HashAfter == nil {
		return "absent"
	}
	return *e.HashAfter
}

func fileHash(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "absent", false
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), true
}

// tempFiles lists temp files anywhere in the workspace, the history's staging folder
// included.
func tempFiles(t *testing.T, dir string) []string {
	var found []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		inStaging := strings.Contains(path, filepath.Join(".mcp", "edit_history", "tmp")+string(filepath.Separator))
		if !d.IsDir() && (inStaging || strings.HasSuffix(name, ".tmp") || strings.Contains(name, ".mcpdiff-")) {
			found = append(found, path)
		}
		return nil
	})
	return found
}
