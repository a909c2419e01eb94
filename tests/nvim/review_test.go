package nvimtest

import (
	"fmt"

	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// Pending edits of the history in file buffers (signs, hunks(), navigation,
// preview, decisions by line), the live review list and the quickfix list.

type hunk struct {
	EditID         string   `msgpack:"edit_id"`
	ConversationID string   `msgpack:"conversation_id"`
	Start          int      `msgpack:"start_line"`
	End            int      `msgpack:"end_line"`
	Kind           string   `msgpack:"kind"`
	Block          int      `msgpack:"block"`
	Old            []string `msgpack:"old_lines"`
}

// hunks is require("mcpdiff").hunks() of the buffer of path.
func (s *session) hunks(path string) []hunk {
	s.t.Helper()
	var hs []hunk
	s.lua(`return require("mcpdiff").hunks(vim.fn.bufnr(...))`, &hs, path)
	return hs
}

// hunkText sums up hunks as "kind start-end" per hunk.
func hunkText(hs []hunk) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s %d-%d", h.Kind, h.Start, h.End))
	}
	return strings.Join(parts, ", ")
}

// signs lists the signs mcpdiff placed in the buffer of path as "line:name".
func (s *session) signs(path string) string {
	s.t.Helper()
	var out []string
	s.lua(`
local placed = vim.fn.sign_getplaced(vim.fn.bufnr(...), { group = "mcpdiff_hunks" })[1].signs
local out = {}
for _, p in ipairs(placed) do table.insert(out, p.lnum .. ":" .. p.name) end
table.sort(out, function(a, b) return tonumber(a:match("%d+")) < tonumber(b:match("%d+")) end)
return out`, &out, path)
	return strings.Join(out, " ")
}

// waitHunks waits until the buffer of path shows these hunks and signs.
func (s *session) waitHunks(path, hunks, signs string) {
	s.t.Helper()
	var gotH, gotS string
	defer func() {
		if s.t.Failed() {
			s.t.Logf("hunks %q, signs %q", gotH, gotS)
		}
	}()
	eventually(s.t, "hunks "+hunks+" and signs "+signs, func() bool {
		gotH, gotS = hunkText(s.hunks(path)), s.signs(path)
		return gotH == hunks && gotS == signs
	})
}

func (s *session) cli(args ...string) (string, int) {
	s.t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = s.ws
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatal(err)
	}
	return string(out), code
}

func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func replaceLines(content string, with map[int]string) string {
	ls := strings.SplitAfter(content, "\n")
	for n, w := range with {
		ls[n-1] = w + "\n"
	}
	return strings.Join(ls, "")
}

// An edit recorded by anyone while the file is open reloads its buffer and shows
// its hunks in the sign column; a decision takes them away.
func TestPendingEditsShowInTheBuffer(t *testing.T) {
	requireHistoryCLI(t)
	eachNvim(t, func(t *testing.T, nv string) {
		s := startNvim(t, nv, nil)
		before := numberedLines(10)
		path := s.writeFile("a.txt", before)
		s.cmd("edit " + path)
		s.waitHunks(path, "", "")

		// Line 3 changed, a line added after 6, line 9 removed.
		after := strings.Replace(replaceLines(before, map[int]string{3: "three"}), "line 6\n", "line 6\nnew\n", 1)
		after = strings.Replace(after, "line 9\n", "", 1)
		id := s.recordEdit("conv_1_aa", path, before, after)
		s.waitHunks(path, "change 3-3, add 7-7, delete 9-9", "3:McpDiffChange 7:McpDiffAdd 9:McpDiffDelete")
		if got := strings.Join(s.bufferLines(path), "\n") + "\n"; got != after {
			t.Fatalf("the buffer was not reloaded:\n%s", got)
		}
		hs := s.hunks(path)
		if hs[0].EditID != id || hs[0].ConversationID != "conv_1_aa" || !reflect.DeepEqual(hs[0].Old, []string{"line 3"}) || hs[2].Block != 3 || !reflect.DeepEqual(hs[2].Old, []string{"line 9"}) {
			t.Fatalf("hunks: %+v", hs)
		}

		// The CLI accepts the edit: nothing is pending any more.
		if out, code := s.cli("accept", id); code != 0 {
			t.Fatalf("accept: %s", out)
		}
		s.waitHunks(path, "", "")

		// With signs off, hunks() still answers.
		s.lua(`require("mcpdiff").setup({ bin = ..., signs = false })`, nil, binPath)
		next := replaceLines(after, map[int]string{1: "one"})
		s.recordEdit("conv_1_ab", path, after, next)
		eventually(t, "the hunk of the second edit", func() bool { return hunkText(s.hunks(path)) == "change 1-1" })
		if got := s.signs(path); got != "" {
			t.Fatalf("signs = false, yet signs %q", got)
		}
		var hl string
		s.lua(`return vim.fn.execute("highlight McpDiffSignAdd")`, &hl)
		if !strings.Contains(hl, "links to") {
			t.Fatalf("McpDiffSignAdd is not linked by default: %q", hl)
		}
	})
}

// Unsaved changes above a hunk move it in hunks() (the file on disk is unchanged).
func TestHunksFollowUnsavedChanges(t *testing.T) {
	requireHistoryCLI(t)
	eachNvim(t, func(t *testing.T, nv string) {
		s := startNvim(t, nv, nil)
		before := numberedLines(6)
		path := s.writeFile("a.txt", before)
		s.cmd("edit " + path)
		s.recordEdit("conv_1_ac", path, before, replaceLines(before, map[int]string{4: "four"}))
		s.waitHunks(path, "change 4-4", "4:McpDiffChange")
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 0, false, { "typed", "here" })`, nil)
		if got := hunkText(s.hunks(path)); got != "change 6-6" {
			t.Fatalf("after two lines typed above: %q", got)
		}
	})
}
