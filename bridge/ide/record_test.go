package ide

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// acceptDiff runs one CLI edit up to the answer: openDiff, the user's :w, FILE_SAVED,
// then the two close_tabs and the baseline getDiagnostics the CLI sends before writing.
func acceptDiff(t *testing.T, s *testServer, c *testClient, path, tab, accepted string) {
	t.Helper()
	wait := c.openShown(s, path, accepted, tab)
	s.Answer(tab, true, accepted)
	wantTexts(t, c.texts(wait()), "FILE_SAVED", accepted)
	wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": tab})()), "TAB_CLOSED")
	wantTexts(t, c.texts(c.callTool("close_tab", map[string]any{"tab_name": tab})()), "TAB_CLOSED")
	c.callTool("getDiagnostics", map[string]any{"uri": "file://" + path})()
}

// recording starts a server that records accepted diffs with a fake recorder (knobs
// as for startServer) and connects a client.
func recording(t *testing.T, knobs func(*Server)) (*fakeRecorder, *testServer, *testClient) {
	t.Helper()
	rec := newFakeRecorder()
	s := startServer(t, func(o *Options) { o.Recorder = rec }, knobs)
	return rec, s, connectReady(t, s)
}

// noCalls fails the test when the recorder was called; calls says how the calls
// would have been wrong.
func (r *fakeRecorder) noCalls(t *testing.T, calls string) {
	t.Helper()
	if n := len(r.calls); n != 0 {
		t.Errorf("RecordAccepted called %d %s", n, calls)
	}
}

func TestRecorderIsCalledOnceTheClientWritesTheFile(t *testing.T) {
	rec, s, c := recording(t, nil)
	const before, after = "one\r\ntwo", "one\r\nTWO\r\nthree"
	path := writeFile(t, "a.txt", before)
	acceptDiff(t, s, c, path, tabA, after)

	testenv.WriteFile(t, path, after)                // what the CLI does
	c.callTool("getDiagnostics", map[string]any{})() // the CLI's post-write check
	got := rec.waitCall(t)
	if got.path != path || string(got.before) != before || !got.existed || string(got.after) != after {
		t.Errorf("RecordAccepted(%q, %q, %q, %v, %q), want (%q, %q, true, %q)",
			got.conv, got.path, got.before, got.existed, got.after, path, before, after)
	}
	if !regexp.MustCompile(`^conv_\d{13}_[0-9a-f]{8}$`).MatchString(got.conv) || !history.ValidConversationID(got.conv) {
		t.Errorf("conversation id %q, want conv_<epoch_ms>_<8 hex> that the history accepts", got.conv)
	}

	// Later pokes and a Stop find nothing more to record.
	c.callTool("getDiagnostics", map[string]any{})()
	s.Stop()
	rec.noCalls(t, "more times")
}

func TestRecorderSeesANewFileAsNotExisting(t *testing.T) {
	rec, s, c := recording(t, nil)
	path := filepath.Join(t.TempDir(), "new.txt")
	acceptDiff(t, s, c, path, tabA, "fresh\n")
	testenv.WriteFile(t, path, "fresh\n")
	// No poke this time: the stat poll notices the write on its own.
	got := rec.waitCall(t)
	if got.existed || len(got.before) != 0 || string(got.after) != "fresh\n" {
		t.Errorf("RecordAccepted(existed=%v, before=%q, after=%q), want a new file", got.existed, got.before, got.after)
	}
}

func TestRecorderIsNotCalledWhenTheFileIsNeverWritten(t *testing.T) {
	rec, s, c := recording(t, func(s *Server) { s.watchTimeout = 50 * time.Millisecond })
	path := writeFile(t, "a.txt", "a\n")
	acceptDiff(t, s, c, path, tabA, "b\n")
	testenv.WriteFile(t, path, "something else\n")
	s.logs.waitFor(t, "was not written within")
	rec.noCalls(t, "times for a diff that was never written")
}

func TestRecorderIsNotCalledForAnUnchangedAccept(t *testing.T) {
	rec, s, c := recording(t, nil)
	path := writeFile(t, "a.txt", "same\n")
	acceptDiff(t, s, c, path, tabA, "same\n")
	s.logs.waitFor(t, "accepted unchanged")
	s.Stop()
	rec.noCalls(t, "times for an unchanged accept")
}

func TestConversationIsOnePerTurn(t *testing.T) {
	rec, s, c := recording(t, nil)
	dir := t.TempDir()
	edit := func(name, tab string) recordCall {
		t.Helper()
		path := filepath.Join(dir, name)
		acceptDiff(t, s, c, path, tab, name+" edited\n")
		if err := os.WriteFile(path, []byte(name+" edited\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c.callTool("getDiagnostics", map[string]any{})()
		return rec.waitCall(t)
	}

	wantTexts(t, c.texts(c.callTool("closeAllDiffTabs", map[string]any{})()), "CLOSED_0_DIFF_TABS")
	first := edit("one.txt", "tab 1")
	second := edit("two.txt", "tab 2")
	wantTexts(t, c.texts(c.callTool("closeAllDiffTabs", map[string]any{})()), "CLOSED_0_DIFF_TABS")
	third := edit("three.txt", "tab 3")

	if first.conv != second.conv {
		t.Errorf("one turn recorded two conversations: %q and %q", first.conv, second.conv)
	}
	if third.conv == first.conv {
		t.Errorf("a new turn kept conversation %q", first.conv)
	}
}

// A new diff of a file ends the wait for an earlier accepted one: recorded when the
// client wrote it by then, else given up, instead of holding both texts for the
// whole watchTimeout.
func TestANewDiffOfTheFileEndsTheWaitForTheLastOne(t *testing.T) {
	rec, s, c := recording(t, func(s *Server) { s.watchTimeout = time.Hour })
	path := writeFile(t, "a.txt", "a\n")
	acceptDiff(t, s, c, path, tabA, "b\n")
	s.mu.Lock()
	watching := len(s.watches)
	s.mu.Unlock()
	if watching != 1 {
		t.Fatalf("%d watches after the accept, want 1", watching)
	}
	acceptDiff(t, s, c, path, tabA+" 2", "c\n") // the first was never written
	s.logs.waitFor(t, "was not written before the next diff of it")
	rec.noCalls(t, "times for a diff that was never written")
	// The second is written just before a third diff of the file opens: recorded.
	testenv.WriteFile(t, path, "c\n")
	wait := c.openShown(s, path, "d\n", tabA)
	if got := rec.waitCall(t); string(got.before) != "a\n" || string(got.after) != "c\n" {
		t.Errorf("RecordAccepted(before=%q, after=%q), want a → c", got.before, got.after)
	}
	s.Answer(tabA, false, "")
	wait()
}
