//go:build unix

package nvimtest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

type selectionParams struct {
	Text      string `json:"text"`
	FilePath  string `json:"filePath"`
	FileURL   string `json:"fileUrl"`
	Selection struct {
		Start   position `json:"start"`
		End     position `json:"end"`
		IsEmpty bool     `json:"isEmpty"`
	} `json:"selection"`
}

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

func selectionOf(s, e position, text, path string) selectionParams {
	var p selectionParams
	p.Text, p.FilePath, p.FileURL = text, path, "file://"+path
	p.Selection.Start, p.Selection.End, p.Selection.IsEmpty = s, e, text == ""
	return p
}

// waitSelection waits for the next selection_changed after the first `seen` ones.
func waitSelection(t *testing.T, c *ideClient, seen int) (selectionParams, int) {
	t.Helper()
	var got []rpcMessage
	eventually(t, "a selection_changed notification", func() bool {
		got = c.Notifications("selection_changed")
		return len(got) > seen
	})
	var p selectionParams
	if err := json.Unmarshal(got[seen].Params, &p); err != nil {
		t.Fatalf("selection_changed params: %v in %s", err, got[seen].Raw)
	}
	return p, seen + 1
}

func TestSelectionChanged(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hello.txt", "hello world\nsecond line\nthird\n")
		seen := len(c.Notifications("selection_changed"))
		// expect waits for the next selection_changed and checks it.
		expect := func(what string, start, end position, text string) {
			t.Helper()
			var got selectionParams
			got, seen = waitSelection(t, c, seen)
			if want := selectionOf(start, end, text, path); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s = %+v, want %+v", what, got, want)
			}
		}
		s.cmd("edit " + path)
		s.input("2G")
		expect("cursor selection", position{1, 0}, position{1, 0}, "")

		// Charwise: "world\nsecond" (0-based lines, byte columns, end exclusive).
		s.input("gg7|vjh")
		expect("visual selection", position{0, 6}, position{1, 6}, "world\nsecond")
		// Leaving visual mode keeps the selection until the cursor moves.
		s.input("<Esc>")
		s.input("V")
		expect("linewise selection", position{1, 0}, position{1, 11}, "second line")
		s.input("<Esc>G0")
		expect("after moving", position{2, 0}, position{2, 0}, "")
	})
}

func TestSelectionNotTrackedFromTerminal(t *testing.T) {
	t.Parallel()
	eachNvim(t, func(t *testing.T, nv string) {
		s, _ := connected(t, nv, nil)
		s.cmd("terminal cat")
		s.input("i")
		var none bool
		eventually(t, "terminal mode", func() bool {
			var mode string
			s.lua(`return vim.api.nvim_get_mode().mode`, &mode)
			return mode == "t"
		})
		s.lua(`return require("mcpdiff.selection").current() == nil`, &none)
		if !none {
			t.Fatal("the terminal buffer has a selection to send")
		}
	})
}

func TestSelectionTrackingOff(t *testing.T) {
	t.Parallel()
	eachConnected(t, options{"track_selection": false}, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("hello.txt", "hello\n")
		s.cmd("edit " + path)
		s.input("v$")
		var tracking int
		s.lua(`return vim.fn.exists("#mcpdiff_selection")`, &tracking)
		if tracking != 0 {
			t.Fatal("track_selection = false, yet selection autocmds exist")
		}
		c.Texts(c.CallTool("getWorkspaceFolders", nil), "getWorkspaceFolders")
		if n := c.Notifications("selection_changed"); len(n) != 0 {
			t.Fatalf("track_selection = false still sent %d selection_changed", len(n))
		}
	})
}

func TestAtMentioned(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		path := s.writeFile("src/main.go", "package main\n\nfunc main() {}\n")
		s.cmd("edit " + path)
		s.cmd("2,3McpDiffSend")
		s.cmd("McpDiffSend")
		var got []rpcMessage
		eventually(t, "two at_mentioned notifications", func() bool {
			got = c.Notifications("at_mentioned")
			return len(got) == 2
		})
		for i, want := range []string{
			`{"filePath":"src/main.go","lineEnd":2,"lineStart":1}`,
			`{"filePath":"src/main.go"}`,
		} {
			if string(got[i].Params) != want {
				t.Fatalf("at_mentioned %d params = %s, want %s", i, got[i].Params, want)
			}
		}
	})
}

func TestAtMentionedQueuedUntilConnected(t *testing.T) {
	t.Parallel()
	eachStarted(t, nil, func(t *testing.T, s *session) {
		info := s.waitAttached()
		outside := t.TempDir() + "/notes.txt"
		if err := writeString(outside, "x\ny\n"); err != nil {
			t.Fatal(err)
		}
		s.cmd("edit " + outside)
		s.cmd("1McpDiffSend")
		c := connect(t, info.Port, info.Token)
		var got []rpcMessage
		eventually(t, "the queued at_mentioned", func() bool {
			got = c.Notifications("at_mentioned")
			return len(got) == 1
		})
		want := `{"filePath":"` + outside + `","lineEnd":0,"lineStart":0}`
		if string(got[0].Params) != want {
			t.Fatalf("at_mentioned params = %s, want %s (absolute outside the cwd)", got[0].Params, want)
		}
	})
}

// TestSetupAgainAppliesTrackSelection: setup() called again with track_selection =
// false stops tracking for the connected client, and true turns it back on.
func TestSetupAgainAppliesTrackSelection(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		tracking := func() bool {
			var n int
			s.lua(`return vim.fn.exists("#mcpdiff_selection")`, &n)
			return n != 0
		}
		eventually(t, "selection tracking with a client connected", tracking)
		s.lua(`require("mcpdiff").setup({ bin = ..., track_selection = false })`, nil, testenv.Binary)
		if tracking() {
			t.Fatal("setup({track_selection = false}) again left selection tracking on")
		}
		before := len(c.Notifications("selection_changed"))
		path := s.writeFile("hello.txt", "hello\n")
		s.cmd("edit " + path)
		s.input("v$<Esc>")
		c.Texts(c.CallTool("getWorkspaceFolders", nil), "getWorkspaceFolders")
		if n := len(c.Notifications("selection_changed")); n != before {
			t.Fatalf("tracking off, yet %d more selection_changed were sent", n-before)
		}
		s.lua(`require("mcpdiff").setup({ bin = ..., track_selection = true })`, nil, testenv.Binary)
		if !tracking() {
			t.Fatal("setup({track_selection = true}) again did not turn tracking back on")
		}
	})
}
