package hooks

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// TestConcurrentHookProcesses: Claude Code runs subagents in parallel, each tool call
// with its own hook processes, and two Claude sessions may work in one workspace.
// Nothing is lost and each conversation's tool_call_index counts 0, 1, 2... with no
// gap and no repeat.
func TestConcurrentHookProcesses(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	sessions := map[string]int{"session-a": 16, "session-b": 6}
	for s, n := range sessions {
		for i := range n {
			w.Write(fmt.Sprintf("%s/f%d.txt", s, i), "a\n")
		}
	}
	var wg sync.WaitGroup
	for s, n := range sessions {
		for i := range n {
			wg.Go(func() {
				rel := fmt.Sprintf("%s/f%d.txt", s, i)
				w.edit(s, "prompt-1", fmt.Sprintf("toolu_%s_%d", s, i), rel, fmt.Sprintf("b %s %d\n", s, i))
			})
		}
	}
	wg.Wait()
	byConv := map[string][]*history.Entry{}
	for _, e := range w.entries() {
		byConv[e.ConversationID] = append(byConv[e.ConversationID], e)
		if want := testenv.SHA256(w.Read(w.rel(e.FilePath))); e.HashAfter == nil || *e.HashAfter != want {
			t.Errorf("%s: recorded hash_after does not match the file", e.FilePath)
		}
		if e.Source != "claude-code" || e.ToolName != "Edit" || e.HashBefore == nil || *e.HashBefore != testenv.SHA256("a\n") {
			t.Errorf("entry %+v", e)
		}
	}
	if len(byConv) != 2 {
		t.Fatalf("%d conversations, want one per session's prompt", len(byConv))
	}
	for conv, list := range byConv {
		var idx []int
		for _, e := range list {
			idx = append(idx, e.ToolCallIndex)
		}
		sort.Ints(idx)
		for i, n := range idx {
			if n != i {
				t.Fatalf("conversation %s: tool_call_index %v; want 0..%d once each", conv, idx, len(idx)-1)
			}
		}
		if len(list) != sessions["session-a"] && len(list) != sessions["session-b"] {
			t.Fatalf("conversation %s has %d entries", conv, len(list))
		}
	}
	if left, _ := os.ReadDir(w.Path(".mcp/edit_history/hooks")); len(left) != 0 {
		t.Fatalf("snapshots left behind: %v", left)
	}
}

func (w *ws) rel(abs string) string {
	r, err := filepath.Rel(w.dir, abs)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// TestHookKilledMidRecord: PostToolUse killed at any instant leaves a store that
// reads, and whose next record makes the history agree with the disk again.
func TestHookKilledMidRecord(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	w.Write("a.txt", "a\n")
	// A whole PostToolUse takes `full`; kills land anywhere in it.
	w.edit("s", "p0", "toolu_first", "a.txt", "0\n")
	start := time.Now()
	w.edit("s", "p0", "toolu_second", "a.txt", "00\n")
	full := time.Since(start) / 2
	killed := 0
	for i := range 20 {
		id := fmt.Sprintf("toolu_%d", i)
		if _, errOut, code := w.hook(w.event("PreToolUse", "s", "p1", id, "a.txt")); code != 0 {
			t.Fatalf("PreToolUse: %d %s", code, errOut)
		}
		w.Write("a.txt", fmt.Sprintf("%d\n", i+1))
		cmd := w.command(nil, "hook")
		cmd.Stdin = strings.NewReader(w.event("PostToolUse", "s", "p1", id, "a.txt"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(time.Duration(rand.Int64N(int64(full))), func() { cmd.Process.Kill() })
		if err := cmd.Wait(); err != nil {
			killed++
		}
		timer.Stop()
	}
	t.Logf("%d of 20 PostToolUse processes were killed (a whole one takes %v)", killed, full)
	out, errOut, code := testenv.Run(t, w.command(nil, "status", "--json"))
	var listed []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil {
		t.Fatalf("status after kills: exit %d %q %q", code, out, errOut)
	}
	for _, e := range listed {
		if d, ok := e["diff_file"].(string); ok {
			if _, err := os.Stat(w.Path(".mcp/edit_history/" + d)); err != nil {
				t.Fatalf("entry %v names a diff that is not there", e["edit_id"])
			}
		}
	}
	w.edit("s", "p2", "toolu_last", "a.txt", "last\n")
	drifts, err := w.store().Check()
	if err != nil || len(drifts) != 0 {
		t.Fatalf("after one more record the history and the disk disagree: %v %v", drifts, err)
	}
	all := w.entries()
	if last := all[len(all)-1]; *last.HashAfter != testenv.SHA256("last\n") || last.ToolName != "Edit" {
		t.Fatalf("last entry %+v", last)
	}
}

// TestLockedStoreAnswersInTime: a store locked by another process never holds
// Claude Code up: the hook answers within 2 s, the write stays, and the miss is
// reported (exit 1, a non-blocking error in Claude Code).
func TestLockedStoreAnswersInTime(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	w.Write("a.txt", "a\n")
	w.edit("s", "p", "toolu_0", "a.txt", "b\n") // makes the store
	fl := flock.New(w.Path(".mcp/edit_history/history.lock"))
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatal(err)
	}
	defer fl.Unlock()
	if out, errOut, code := w.hook(w.event("PreToolUse", "s", "p", "toolu_1", "a.txt")); code != 0 || out != "" {
		t.Fatalf("PreToolUse with the store locked: exit %d %q %q", code, out, errOut)
	}
	w.Write("a.txt", "c\n")
	limit := testenv.Promised(t, 2*time.Second)
	start := time.Now()
	out, errOut, code := w.hook(w.event("PostToolUse", "s", "p", "toolu_1", "a.txt"))
	if took := time.Since(start); took > limit {
		t.Fatalf("PostToolUse took %v with the store locked; Claude Code waits for it", took)
	}
	if code != 1 || out != "" || !strings.Contains(errOut, "a.txt was written but not recorded") || !strings.Contains(errOut, "locked") {
		t.Fatalf("PostToolUse with the store locked: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got := w.Read("a.txt"); got != "c\n" {
		t.Fatalf("the write was undone: %q", got)
	}
}

// TestReadOnlyWorkspace: no store can be made; the hooks say so at once and never
// block the write.
func TestReadOnlyWorkspace(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	w.Write("a.txt", "a\n")
	if err := exec.Command("chattr", "+i", w.dir).Run(); err != nil {
		t.Skip("cannot make the workspace read-only here (chattr):", err)
	}
	defer exec.Command("chattr", "-i", w.dir).Run()
	out, errOut, code := w.hook(w.event("PreToolUse", "s", "p", "toolu_1", "a.txt"))
	if code != 1 || out != "" || !strings.Contains(errOut, "will not be recorded") {
		t.Fatalf("PreToolUse in a read-only workspace: exit %d %q %q", code, out, errOut)
	}
	w.Write("a.txt", "b\n") // the file itself is writable
	out, errOut, code = w.hook(w.event("PostToolUse", "s", "p", "toolu_1", "a.txt"))
	if code != 1 || out != "" || !strings.Contains(errOut, "not recorded") {
		t.Fatalf("PostToolUse in a read-only workspace: exit %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(w.Path(".mcp")); err == nil {
		t.Fatal("a store appeared in a read-only workspace")
	}
}

// TestHookNeverExitsTwo: exit code 2 would block the tool; misuse gets 1 (and --help,
// which only a person types, its help and 0).
func TestHookNeverExitsTwo(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	if out, _, code := testenv.Run(t, w.command(nil, "hook", "--help")); code != 0 || !strings.Contains(out, "mcpdiff hook") {
		t.Fatalf("hook --help: exit %d %q", code, out)
	}
	for _, args := range [][]string{{"hook", "extra"}, {"hook", "--bogus"}} {
		cmd := w.command(nil, args...)
		cmd.Stdin = strings.NewReader(w.event("PreToolUse", "s", "p", "t", "a.txt"))
		if _, errOut, code := testenv.Run(t, cmd); code != 1 || errOut == "" {
			t.Fatalf("%v: exit %d %q; want 1 and a message", args, code, errOut)
		}
	}
	for _, input := range []string{"", "{", "null", `{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":7}}`} {
		if out, _, code := w.hook(input); code == 2 || out != "" {
			t.Fatalf("input %q: exit %d, stdout %q", input, code, out)
		}
	}
}
