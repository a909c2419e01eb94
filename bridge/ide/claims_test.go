package ide

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
	"github.com/mcpdiff/mcpdiff/nvim/neovims"
)

// The question Claude Code's PostToolUse hook asks before it records a write: did
// this server accept and record it? Yes only for a diff the user accepted whose text
// the file holds, recorded by the server and untouched since; each write once.

// claimed asks s about one write of path holding text.
func claimed(s *testServer, path, text string) bool {
	return s.ClaimWrites([]neovims.Written{{Path: path, Hash: edit.FileHash([]byte(text))}})[0]
}

// recordedAndClosed accepts a diff of path with text, writes it as the CLI does, and
// waits until the server recorded it and its write watch ended.
func recordedAndClosed(t *testing.T, s *testServer, c *testClient, path, tab, text string) {
	t.Helper()
	acceptDiff(t, s, c, path, tab, text)
	testenv.WriteFile(t, path, text)
	c.callTool("getDiagnostics", map[string]any{})()
	s.logs.waitFor(t, "recorded the accepted diff of "+path)
	testenv.Eventually(t, "the write watch to end", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.watches) == 0
	})
}

func TestClaimsARecordedWriteOnce(t *testing.T) {
	_, s, c := recording(t, nil)
	path := writeFile(t, "a.txt", "a\n")
	recordedAndClosed(t, s, c, path, tabA, "b\n")

	if claimed(s, path, "c\n") {
		t.Fatal("claimed a write of other bytes than the accepted text")
	}
	if claimed(s, filepath.Join(filepath.Dir(path), "other.txt"), "b\n") {
		t.Fatal("claimed a write of another file")
	}
	if !claimed(s, path, "b\n") {
		t.Fatal("the recorded write was not claimed (the hook would record it again)")
	}
	if claimed(s, path, "b\n") {
		t.Fatal("one recorded write was claimed twice")
	}
}

// The server remembers what it recorded after the diff's watch ended (the hook may
// ask after that), but a later write of the same text is a new write.
func TestClaimsOnlyWhileTheFileIsAsRecorded(t *testing.T) {
	_, s, c := recording(t, nil)
	path := writeFile(t, "a.txt", "a\n")
	recordedAndClosed(t, s, c, path, tabA, "b\n")
	// Written again with the same bytes (by rename: another file object, whatever the
	// clock's tick).
	tmp := path + ".tmp"
	testenv.WriteFile(t, tmp, "b\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if claimed(s, path, "b\n") {
		t.Fatal("claimed a write made after the recorded one")
	}
}

// The hook may ask before the watch looked at the file: the server makes it look,
// and claims the write once recorded.
func TestClaimWaitsForTheWatchToRecord(t *testing.T) {
	rec, s, c := recording(t, func(s *Server) { s.watchPoll = time.Hour })
	path := writeFile(t, "a.txt", "a\n")
	acceptDiff(t, s, c, path, tabA, "b\n") // its pokes come before the write
	testenv.WriteFile(t, path, "b\n")      // no poke and no poll after it
	if !claimed(s, path, "b\n") {
		t.Fatal("a write the watch was waiting for was not claimed")
	}
	if got := rec.waitCall(t); string(got.after) != "b\n" {
		t.Fatalf("recorded %q", got.after)
	}
}

func TestDoesNotClaimWhatItDidNotRecord(t *testing.T) {
	t.Run("rejected", func(t *testing.T) {
		rec, s, c := recording(t, nil)
		path := writeFile(t, "a.txt", "a\n")
		wait := c.openShown(s, path, "b\n", tabA)
		s.Answer(tabA, false, "")
		wantTexts(t, c.texts(wait()), "DIFF_REJECTED", tabA)
		testenv.WriteFile(t, path, "b\n") // written all the same, by someone else
		if claimed(s, path, "b\n") {
			t.Fatal("claimed the write of a rejected diff")
		}
		rec.noCalls(t, "times for a rejected diff")
	})
	t.Run("no history for the file", func(t *testing.T) {
		rec := &outsideRecorder{}
		s := startServer(t, func(o *Options) { o.Recorder = rec }, nil)
		c := connectReady(t, s)
		path := writeFile(t, "a.txt", "a\n")
		acceptDiff(t, s, c, path, tabA, "b\n")
		testenv.WriteFile(t, path, "b\n")
		c.callTool("getDiagnostics", map[string]any{})()
		s.logs.waitFor(t, "its accepted diff is not recorded")
		if claimed(s, path, "b\n") {
			t.Fatal("claimed a write the recorder did not record")
		}
	})
	t.Run("no recorder", func(t *testing.T) {
		s := startServer(t, nil, nil)
		c := connectReady(t, s)
		path := writeFile(t, "a.txt", "a\n")
		acceptDiff(t, s, c, path, tabA, "b\n")
		testenv.WriteFile(t, path, "b\n")
		if claimed(s, path, "b\n") {
			t.Fatal("a server that records nothing claimed a write")
		}
	})
}

// outsideRecorder has no history for any file.
type outsideRecorder struct{}

func (*outsideRecorder) RecordAccepted(string, string, []byte, bool, []byte) (bool, error) {
	return false, nil
}
