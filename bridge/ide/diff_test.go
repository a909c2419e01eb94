package ide

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const tabA = "✻ [Claude Code] a.txt (e1023f) ⧉"

// writeFile creates a file in a temp dir and returns its path.
// shownDiff is a server with a connected client whose openDiff of a.txt ("a\n") with
// the proposal "b\n", in tab tabA, the editor shows and nobody has answered yet.
func shownDiff(t *testing.T) (s *testServer, c *testClient, path string, wait func() rpcMessage) {
	t.Helper()
	s = startServer(t, nil, nil)
	c = connectReady(t, s)
	path = writeFile(t, "a.txt", "a\n")
	wait = c.openShown(s, path, "b\n", tabA)
	return s, c, path, wait
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenDiffAcceptAnswersTheExactText(t *testing.T) {
	tests := []struct {
		name, before, accepted string
	}{
		{"CRLF without final newline", "one\r\ntwo", "one\r\nTWO\r\nthree"},
		{"LF with final newline", "hello world\nsecond line\n", "hello edited\nsecond line\n"},
		{"user edited the proposal", "a\n", "a\nuser added line\n"},
		{"empty result", "x\n", ""},
		{"unicode and control bytes", "α\n", "β\t\"quoted\" <tag> & \\ \u0000\n"},
		// Written in pieces of 32 KB, some of which end inside a three-byte character.
		{"a long edited text", "a\n", strings.Repeat("€", 40_000) + "\"\\\n" + strings.Repeat("line é😀\t\x01\n", 3_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, nil, nil)
			c := connectReady(t, s)
			path := writeFile(t, "a.txt", tt.before)
			wait := c.callTool("openDiff", diffArgs(path, "proposal", tabA))
			req := s.editor.waitOpened(t)
			want := DiffRequest{TabName: tabA, OldPath: path, NewPath: path, Contents: "proposal", NewFile: false, Original: []byte(tt.before)}
			if !reflect.DeepEqual(req, want) {
				t.Fatalf("editor got %+v, want %+v", req, want)
			}
			s.Answer(tabA, true, tt.accepted)
			wantTexts(t, c.texts(wait()), "FILE_SAVED", tt.accepted)
			if got, _ := os.ReadFile(path); string(got) != tt.before {
				t.Errorf("the server wrote the file: %q", got)
			}
		})
	}
}

func TestOpenDiffRejectAnswersDiffRejected(t *testing.T) {
	s, c, _, wait := shownDiff(t)
	s.Answer(tabA, false, "")
	wantTexts(t, c.texts(wait()), "DIFF_REJECTED", tabA)
	if st := s.Status().Diffs; len(st) != 1 || st[0].Status != "rejected" {
		t.Errorf("Status().Diffs = %+v, want the rejected diff until close_tab", st)
	}
	wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": tabA})()), "TAB_CLOSED")
	if got := s.editor.waitClosed(t); got != (closeCall{tabA, NothingWritten}) {
		t.Errorf("Close %+v, want %s rejected", got, tabA)
	}
}

func TestOpenDiffOfAMissingFileIsANewFile(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	path := filepath.Join(t.TempDir(), "new.txt")
	wait := c.callTool("openDiff", diffArgs(path, "fresh\n", tabA))
	if req := s.editor.waitOpened(t); !req.NewFile || req.Original != nil {
		t.Errorf("DiffRequest of a missing file: NewFile %v, Original %q; want true, nil", req.NewFile, req.Original)
	}
	s.Answer(tabA, true, "fresh\n")
	wantTexts(t, c.texts(wait()), "FILE_SAVED", "fresh\n")
}

func TestCloseTabWhilePendingRejectsTheDiff(t *testing.T) {
	s, c, _, wait := shownDiff(t)

	// The CLI's terminal prompt answered first; close_tab is the only cancellation.
	wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": tabA})()), "TAB_CLOSED")
	wantTexts(t, c.texts(wait()), "DIFF_REJECTED", tabA)
	if got := s.editor.waitClosed(t); got != (closeCall{tabA, NothingWritten}) {
		t.Errorf("Close %+v, want %s rejected", got, tabA)
	}
	s.Answer(tabA, true, "too late") // a no-op now
	if n := len(s.Status().Diffs); n != 0 {
		t.Errorf("%d diffs left after close_tab", n)
	}
}

func TestCloseTabTwiceIsIdempotent(t *testing.T) {
	s, c, _, wait := shownDiff(t)
	s.Answer(tabA, true, "b\n")
	wantTexts(t, c.texts(wait()), "FILE_SAVED", "b\n")

	// As the CLI does: two close_tabs 1 ms apart, concurrently.
	first := c.callTool("close_tab", map[string]any{"tab_name": tabA})
	second := c.callTool("close_tab", map[string]any{"tab_name": tabA})
	wantTexts(t, c.texts(first()), "TAB_CLOSED")
	wantTexts(t, c.texts(second()), "TAB_CLOSED")
	if got := s.editor.waitClosed(t); got != (closeCall{tabA, ClientWrites}) {
		t.Errorf("Close %+v, want %s accepted", got, tabA)
	}
	wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": tabA})()), "TAB_CLOSED")
	if n := countCalls(s.editor, "Close "); n != 1 {
		t.Errorf("Close called %d times, want 1: %v", n, s.editor.callLog())
	}
}

// AfterDiffs is when `mcpdiff nvim` gives back what diffs used: once the last open
// diff is torn down, before the close_tab that closed it is answered.
func TestAfterDiffsRunsWhenTheLastOpenDiffCloses(t *testing.T) {
	var after atomic.Int32
	s := startServer(t, func(o *Options) { o.AfterDiffs = func() { after.Add(1) } }, nil)
	c := connectReady(t, s)
	const tabB = "✻ [Claude Code] b.txt (e1023f) ⧉"
	waitA := c.openShown(s, writeFile(t, "a.txt", "a\n"), "A\n", tabA)
	waitB := c.openShown(s, writeFile(t, "b.txt", "b\n"), "B\n", tabB)
	closeTab := func(tab string) {
		t.Helper()
		wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": tab})()), "TAB_CLOSED")
	}

	s.Answer(tabA, true, "A\n")
	wantTexts(t, c.texts(waitA()), "FILE_SAVED", "A\n")
	closeTab(tabA)
	if n := after.Load(); n != 0 {
		t.Fatalf("AfterDiffs ran %d times while %s was still open", n, tabB)
	}
	s.Answer(tabB, false, "")
	wantTexts(t, c.texts(waitB()), "DIFF_REJECTED", tabB)
	closeTab(tabB)
	if n := after.Load(); n != 1 {
		t.Fatalf("AfterDiffs ran %d times by the time the last close_tab was answered, want 1", n)
	}
	closeTab(tabB) // the CLI's second close_tab closes nothing
	if n := after.Load(); n != 1 {
		t.Errorf("AfterDiffs ran %d times after a close_tab that closed nothing, want 1", n)
	}
}

func TestSameTabNameReplacesAPendingDiff(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	path := writeFile(t, "a.txt", "a\n")
	first := c.openShown(s, path, "first\n", tabA)
	second := c.callTool("openDiff", diffArgs(path, "second\n", tabA))

	wantTexts(t, c.texts(first()), "DIFF_REJECTED", tabA)
	if got := s.editor.waitClosed(t); got != (closeCall{tabA, Replaced}) {
		t.Errorf("Close %+v, want the replaced diff torn down as replaced", got)
	}
	if req := s.editor.waitOpened(t); req.Contents != "second\n" {
		t.Fatalf("second diff shows %q", req.Contents)
	}
	s.Answer(tabA, true, "second\n")
	wantTexts(t, c.texts(second()), "FILE_SAVED", "second\n")
}

func TestCloseAllDiffTabsClosesOnlyOursAndStartsANewConversation(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	other := connectReady(t, s)
	dir := t.TempDir()
	pending := c.openShown(s, filepath.Join(dir, "p.txt"), "p\n", "✻ [Claude Code] p.txt (000001) ⧉")
	saved := c.openShown(s, filepath.Join(dir, "s.txt"), "s\n", "✻ [Claude Code] s.txt (000002) ⧉")
	s.Answer("✻ [Claude Code] s.txt (000002) ⧉", true, "s\n")
	wantTexts(t, c.texts(saved()), "FILE_SAVED", "s\n")
	othersDiff := other.openShown(s, filepath.Join(dir, "o.txt"), "o\n", "✻ [Claude Code] o.txt (000003) ⧉")
	convBefore := s.Status().Clients[0].Conversation

	wantTexts(t, c.texts(c.callTool("closeAllDiffTabs", map[string]any{})()), "CLOSED_2_DIFF_TABS")
	wantTexts(t, c.texts(pending()), "DIFF_REJECTED", "✻ [Claude Code] p.txt (000001) ⧉")
	closed := map[closeCall]bool{s.editor.waitClosed(t): true, s.editor.waitClosed(t): true}
	for _, want := range []closeCall{
		{"✻ [Claude Code] p.txt (000001) ⧉", NothingWritten},
		{"✻ [Claude Code] s.txt (000002) ⧉", ClientWrites},
	} {
		if !closed[want] {
			t.Errorf("Close calls %v lack %+v", closed, want)
		}
	}
	diffs := s.Status().Diffs
	if len(diffs) != 1 || diffs[0].TabName != "✻ [Claude Code] o.txt (000003) ⧉" || diffs[0].Status != "pending" {
		t.Errorf("Status().Diffs = %+v, want only the other client's pending diff", diffs)
	}
	if convBefore == "" || s.Status().Clients[0].Conversation != "" {
		t.Errorf("conversation %q → %q, want a new one started lazily", convBefore, s.Status().Clients[0].Conversation)
	}
	wantTexts(t, c.texts(c.callTool("closeAllDiffTabs", map[string]any{})()), "CLOSED_0_DIFF_TABS")

	s.Answer("✻ [Claude Code] o.txt (000003) ⧉", false, "")
	wantTexts(t, other.texts(othersDiff()), "DIFF_REJECTED", "✻ [Claude Code] o.txt (000003) ⧉")
}

func TestDisconnectRejectsPendingDiffsAndKeepsSavedOnes(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	dir := t.TempDir()
	c.openShown(s, filepath.Join(dir, "p.txt"), "p\n", "pending tab")
	saved := c.openShown(s, filepath.Join(dir, "s.txt"), "s\n", "saved tab")
	s.Answer("saved tab", true, "s\n")
	wantTexts(t, c.texts(saved()), "FILE_SAVED", "s\n")

	c.conn.CloseNow()
	if got := s.editor.waitClosed(t); got != (closeCall{"pending tab", NothingWritten}) {
		t.Errorf("Close %+v, want the pending diff rejected", got)
	}
	s.logs.waitFor(t, "disconnected")
	diffs := s.Status().Diffs
	if len(diffs) != 1 || diffs[0].TabName != "saved tab" || diffs[0].Status != "saved" {
		t.Errorf("Status().Diffs = %+v, want the saved diff kept until it is written", diffs)
	}
}

func TestTwoClientsGetTheirOwnAnswers(t *testing.T) {
	s := startServer(t, nil, nil)
	c1 := connectReady(t, s)
	c2 := connectReady(t, s)
	dir := t.TempDir()
	wait1 := c1.callTool("openDiff", diffArgs(filepath.Join(dir, "one.txt"), "1\n", "tab one"))
	wait2 := c2.callTool("openDiff", diffArgs(filepath.Join(dir, "two.txt"), "2\n", "tab two"))
	s.editor.waitOpened(t)
	s.editor.waitOpened(t)
	s.Answer("tab two", true, "two accepted\n")
	s.Answer("tab one", false, "")
	wantTexts(t, c2.texts(wait2()), "FILE_SAVED", "two accepted\n")
	wantTexts(t, c1.texts(wait1()), "DIFF_REJECTED", "tab one")
	if n := len(s.Status().Clients); n != 2 {
		t.Errorf("%d clients, want 2", n)
	}
}

func TestOpenDiffEditorFailureIsAToolErrorAndLeavesNothing(t *testing.T) {
	tests := []struct {
		name              string
		err               error
		wantMsg, wantData string
	}{
		{
			name:     "dirty buffer",
			err:      &ToolError{Code: -32000, Message: "Cannot create diff: file has unsaved changes", Data: "Please save (:w) or discard (:e!) changes"},
			wantMsg:  "Cannot create diff: file has unsaved changes",
			wantData: "Please save (:w) or discard (:e!) changes",
		},
		{name: "plain error", err: errors.New("no window for the diff"), wantMsg: "Diff setup failed", wantData: "no window for the diff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, nil, nil)
			s.editor.setOpenErr(tt.err)
			c := connectReady(t, s)
			m := c.callTool("openDiff", diffArgs(writeFile(t, "a.txt", "a\n"), "b\n", tabA))()
			wantError(t, m, -32000, tt.wantData)
			if m.Error.Message != tt.wantMsg {
				t.Errorf("message %q, want %q", m.Error.Message, tt.wantMsg)
			}
			if n := len(s.Status().Diffs); n != 0 {
				t.Errorf("%d diffs registered after a failed openDiff", n)
			}
			s.Answer(tabA, true, "b\n") // no-op
		})
	}
}

func TestOpenDiffRefusesAFolderAndRelativePaths(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	m := c.callTool("openDiff", diffArgs(t.TempDir(), "x", tabA))()
	wantError(t, m, -32000, "")
	if !strings.Contains(m.Error.Data.(string), "is a folder") {
		t.Errorf("error %+v does not say the path is a folder", *m.Error)
	}
	wantError(t, c.callTool("openDiff", diffArgs("relative/a.txt", "x", tabA))(), -32602,
		`old_file_path must be an absolute path, got "relative/a.txt"`)
	if calls := s.editor.callLog(); len(calls) != 0 {
		t.Errorf("editor calls: %v", calls)
	}
}

func TestAnswerForAnUnknownTabIsANoOp(t *testing.T) {
	s := startServer(t, nil, nil)
	s.Answer("never opened", true, "x")
	s.Answer("never opened", false, "")
	if calls := s.editor.callLog(); len(calls) != 0 {
		t.Errorf("editor calls: %v", calls)
	}
}

func TestOpenDiffCarriesAFiftyMegabyteFrame(t *testing.T) {
	// 50 MB, as Claude Code may send. The race detector makes encoding/json about 30 times
	// slower (95 s measured for this frame, nearly all of it decoding), so under
	// -race the same path runs with 4 MB: still far above the library's 32 KiB
	// default limit.
	size := 50 << 20
	if raceDetector {
		size = 4 << 20
	}
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	line := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
	lines := size / len(line+"\n")
	// The frame is built by hand: json.Marshal would cost the test more than the server.
	path := filepath.Join(t.TempDir(), "big.txt")
	id := c.nextID.Add(1)
	frame := fmt.Sprintf(`{"method":"tools/call","params":{"name":"openDiff","arguments":{"old_file_path":%q,"new_file_path":%q,"new_file_contents":"%s","tab_name":"big"}},"jsonrpc":"2.0","id":%d}`,
		path, path, strings.Repeat(line+`\n`, lines), id)
	if len(frame) < size {
		t.Fatalf("frame of %d bytes, want at least %d", len(frame), size)
	}
	answer := c.expect(strconv.FormatInt(id, 10))
	start := time.Now()
	c.send(frame)
	if req := s.editor.waitOpened(t); req.Contents != strings.Repeat(line+"\n", lines) {
		t.Fatalf("the editor got %d bytes of contents, want %d", len(req.Contents), lines*(len(line)+1))
	}
	t.Logf("a %d-byte openDiff frame reached the editor after %v", len(frame), time.Since(start))
	s.Answer("big", false, "")
	wantTexts(t, c.texts(c.await(answer, "openDiff")), "DIFF_REJECTED", "big")
}

func TestOpenDiffEndsWhenTheRequestIsCancelled(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	wait := c.openShown(s, writeFile(t, "a.txt", "a\n"), "b\n", tabA)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + c.lastID() + `}}`)
	if got := s.editor.waitClosed(t); got != (closeCall{tabA, NothingWritten}) {
		t.Errorf("Close %+v, want the cancelled diff rejected", got)
	}
	// mcp-go still answers a cancelled request; either answer is acceptable, as long
	// as it is never FILE_SAVED or TAB_CLOSED.
	if m := wait(); m.Error == nil {
		wantTexts(t, c.texts(m), "DIFF_REJECTED", tabA)
	}
}

func countCalls(e *fakeEditor, prefix string) int {
	n := 0
	for _, call := range e.callLog() {
		if strings.HasPrefix(call, prefix) {
			n++
		}
	}
	return n
}

func TestCloseTabWhileTheEditorIsStillDrawingClosesTheViewAfterwards(t *testing.T) {
	s := startServer(t, nil, nil)
	gate := make(chan struct{})
	s.editor.setOpenGate(gate)
	c := connectReady(t, s)
	wait := c.callTool("openDiff", diffArgs(writeFile(t, "a.txt", "a\n"), "b\n", tabA))
	waitForCall(t, s.editor, "Show "+tabA)

	wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": tabA})()), "TAB_CLOSED")
	if n := countCalls(s.editor, "Close "); n != 0 {
		t.Fatalf("Close called %d times before the view was drawn: %v", n, s.editor.callLog())
	}
	close(gate)
	wantTexts(t, c.texts(wait()), "DIFF_REJECTED", tabA)
	if got := s.editor.waitClosed(t); got != (closeCall{tabA, NothingWritten}) {
		t.Errorf("Close %+v, want the view closed once it was drawn", got)
	}
	if n := countCalls(s.editor, "Close "); n != 1 {
		t.Errorf("Close called %d times, want once: %v", n, s.editor.callLog())
	}
}

// waitForCall waits until the editor has received a call starting with prefix.
func waitForCall(t *testing.T, e *fakeEditor, prefix string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for countCalls(e, prefix) == 0 {
		select {
		case <-e.changed():
		case <-deadline:
			t.Fatalf("the editor never got %q; calls: %v", prefix, e.callLog())
		}
	}
}

// A message the one-pass reader declines (here a lone surrogate escape, which
// encoding/json turns into U+FFFD) is still served, through mcp-go.
func TestOpenDiffTheFastReaderDeclinesStillWorks(t *testing.T) {
	s := startServer(t, nil, nil)
	c := connectReady(t, s)
	path := writeFile(t, "a.txt", "a\n")
	ch := c.expect("77")
	c.send(`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"openDiff","arguments":{"old_file_path":` +
		strconv.Quote(path) + `,"new_file_path":` + strconv.Quote(path) + `,"new_file_contents":"x\ud800y","tab_name":"` + tabA + `"}}}`)
	req := s.editor.waitOpened(t)
	if req.Contents != "x\uFFFDy" {
		t.Fatalf("contents %q", req.Contents)
	}
	s.Answer(tabA, true, "done\n")
	wantTexts(t, c.texts(c.await(ch, "openDiff")), "FILE_SAVED", "done\n")
}
