//go:build unix

package screenshots

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outEnv names the folder the pictures go to; without it the test is skipped.
const outEnv = "MCPDIFF_SCREENSHOTS"

// The story: a small Go package, and Claude Code asked to make it stricter. Lines are
// short, so that two of them fit side by side in a picture the width of a README.
const stockGo = `package inventory

import "fmt"

// Stock counts the items on hand, by SKU.
type Stock map[string]int

// Add puts n items of sku on the shelf.
func (s Stock) Add(sku string, n int) {
	s[sku] += n
}

// Remove takes n items of sku off the shelf.
func (s Stock) Remove(sku string, n int) error {
	fmt.Println("remove", sku, n) // debug
	if s[sku] < n {
		return fmt.Errorf("only %d in stock", s[sku])
	}
	s[sku] -= n
	return nil
}
`

const readme = `# inventory

Counts the items on hand.

    s := inventory.Stock{}
    s.Add("apple", 3)
`

// addBefore and addAfter are Claude Code's Edit of Add: quantities below 1 are
// refused.
const addBefore = `func (s Stock) Add(sku string, n int) {
	s[sku] += n
}`

const addAfter = `func (s Stock) Add(sku string, n int) error {
	if n < 1 {
		return fmt.Errorf("cannot add %d items", n)
	}
	s[sku] += n
	return nil
}`

const debugLine = "\tfmt.Println(\"remove\", sku, n) // debug\n"

const removeCheck = `	if n < 1 {
		return fmt.Errorf("cannot remove %d items", n)
	}
`

const stockTest = `package inventory

import "testing"

func TestAddRefusesNothing(t *testing.T) {
	if err := (Stock{}).Add("apple", 0); err == nil {
		t.Fatal("Add accepted 0 items")
	}
}
`

const totalFunc = `
// Total is how many items are on hand, of every SKU.
func (s Stock) Total() int {
	total := 0
	for _, n := range s {
		total += n
	}
	return total
}
`

func TestScreenshots(t *testing.T) {
	out := os.Getenv(outEnv)
	if out == "" {
		t.Skip("makes the README's pictures: run `make screenshots` (it sets " + outEnv + " to their folder)")
	}
	out, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	tl := requireTools(t)
	for _, layout := range []string{"side-by-side", "inline"} {
		t.Run("diff-"+layout, func(t *testing.T) { diffShot(t, tl, layout, filepath.Join(out, "diff-"+layout+".png")) })
	}
	t.Run("pending-signs", func(t *testing.T) { signsShot(t, tl, filepath.Join(out, "pending-signs.png")) })
	t.Run("review-list", func(t *testing.T) { reviewShot(t, tl, filepath.Join(out, "review-list.png")) })
}

// diffShot: Claude Code (in its manual permission mode) proposes an edit of the open
// file, and Neovim shows it as a diff.
func diffShot(t *testing.T, tl tools, layout, out string) {
	w := newWorld(t, tl, map[string]string{"stock.go": stockGo, "README.md": readme})
	opts := map[string]any{}
	cols, rows := 120, 29
	if layout == "inline" {
		opts["diff"] = map[string]any{"layout": "inline"}
		cols, rows = 90, 32
	}
	tm := w.startNvim(cols, rows, opts, "stock.go")
	ide := w.connectIDE()
	proposal := strings.Replace(strings.Replace(stockGo, addBefore, addAfter, 1), debugLine, removeCheck, 1)
	tab := "✻ [Claude Code] stock.go (a3f91c) ⧉"
	id := ide.request("tools/call", map[string]any{"name": "openDiff", "arguments": map[string]any{
		"old_file_path": w.Path("stock.go"), "new_file_path": w.Path("stock.go"),
		"new_file_contents": proposal, "tab_name": tab}})
	want := []string{"\\dq reject", "cannot remove %d items"}
	if layout == "side-by-side" {
		want = append(want, "stock.go (original)", "(proposed)")
	}
	s := tm.settled(want...)
	tm.render(s, out)

	// Closing the proposal rejects it: Claude Code gets its answer.
	tm.cmd("quit")
	var result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if raw := ide.await(id); json.Unmarshal(raw, &result) != nil || len(result.Content) == 0 || result.Content[0].Text != "DIFF_REJECTED" {
		t.Fatalf("openDiff answered %+v, want DIFF_REJECTED", result)
	}
	if got := w.Read("stock.go"); got != stockGo {
		t.Fatalf("the rejected proposal changed stock.go:\n%s", got)
	}
}

// historyWorld is the project after two prompts to Claude Code in its auto mode
// (recorded by mcpdiff's hooks) and an edit by another agent through `mcpdiff serve`;
// the user accepted the new test and rejected the README change.
func historyWorld(t *testing.T, tl tools) (*world, [][2]string) {
	w := newWorld(t, tl, map[string]string{"stock.go": stockGo, "README.md": readme})
	w.claude("Refuse quantities below 1, and drop the debug print",
		claudeWrite{tool: "Edit", file: "stock.go", old: addBefore, new: addAfter},
		claudeWrite{tool: "Edit", file: "stock.go", old: debugLine},
		claudeWrite{tool: "Write", file: "stock_test.go", new: stockTest},
	)
	w.claude("Add a method that counts every item",
		claudeWrite{tool: "Edit", file: "stock.go", old: "	s[sku] -= n\n	return nil\n}\n", new: "	s[sku] -= n\n	return nil\n}\n" + totalFunc},
		claudeWrite{tool: "Edit", file: "README.md", old: "    s.Add(\"apple\", 3)\n", new: "    s.Add(\"apple\", 3)\n    s.Total() // 3\n"},
	)
	w.mcpEdit("codex-mcp-client", "conv_1763631721000_5e1f0c2a", "README.md", "Counts the items on hand.", "Counts the items on hand, by SKU.")
	es := w.entries()
	if len(es) != 6 {
		t.Fatalf("the history has %d entries, want 6", len(es))
	}
	for _, e := range es {
		switch {
		case e.ToolName == "Write":
			w.mcpdiff("", "accept", e.EditID)
		case e.ToolName == "Edit" && strings.HasSuffix(e.FilePath, "README.md"):
			w.mcpdiff("", "reject", e.EditID)
		}
	}
	if got, want := w.Read("README.md"), strings.Replace(readme, "on hand.", "on hand, by SKU.", 1); got != want {
		t.Fatalf("README.md after rejecting Claude Code's edit and keeping the other agent's:\n%s\nwant:\n%s", got, want)
	}
	return w, masks(t, es)
}

// signsShot: stock.go with the pending changes in its sign column, and the preview of
// the one that removed a line.
func signsShot(t *testing.T, tl tools, out string) {
	w, ms := historyWorld(t, tl)
	tm := w.startNvim(100, 35, map[string]any{}, "stock.go")
	var kinds map[string]int
	eventually(t, "the signs of every kind of change", func() bool {
		// An empty table would come as an array: the counts are a dict from the start.
		tm.lua(`local n = vim.empty_dict()
for _, h in ipairs(require("mcpdiff").hunks(0)) do n[h.kind] = (n[h.kind] or 0) + 1 end
return n`, &kinds)
		return kinds["add"] > 0 && kinds["change"] > 0 && kinds["delete"] > 0
	}, tm.dump)
	var line int
	tm.lua(`for _, h in ipairs(require("mcpdiff").hunks(0)) do if h.kind == "delete" then return h.start_line end end`, &line)
	tm.lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 })`, nil, line)
	tm.cmd("McpDiffPreviewPending")
	s := tm.settled("removed these lines below line", "// debug")
	mask(t, s, ms)
	tm.render(s, out)
}

// reviewShot: the review list under the file, with the diff of the other agent's
// edit shown in it, the list's window as high as its text (as a user would make it).
func reviewShot(t *testing.T, tl tools, out string) {
	w, ms := historyWorld(t, tl)
	tm := w.startNvim(110, 40, map[string]any{}, "stock.go")
	tm.cmd("McpDiffStatus")
	tm.settled("Conversation conv_1763631721000_5e1f0c2a", "rejected")
	es := w.entries()
	last := es[len(es)-1]
	if last.ToolName != "edit_file" {
		t.Fatalf("the last edit is %s's, want the other agent's edit_file", last.ToolName)
	}
	tm.lua(`for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
  if l:find(..., 1, true) then vim.api.nvim_win_set_cursor(0, { i, 0 }) return end
end
error("no row of edit " .. ...)`, nil, last.EditID[:8])
	if _, err := tm.nv.Input("="); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the edit's diff in the list", func() bool {
		var shown bool
		tm.lua(`return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"):find(..., 1, true) ~= nil`, &shown, "+Counts the items on hand, by SKU.")
		return shown
	}, tm.dump)
	tm.lua(`vim.cmd("resize " .. vim.api.nvim_win_text_height(0, {}).all)`, nil)
	s := tm.settled("+Counts the items on hand, by SKU.", "func (s Stock) Add")
	mask(t, s, append(ms, w.portMask()))
	tm.render(s, out)
}

// mask puts the fixed ids and times over the screen's.
func mask(t *testing.T, s *Screen, ms [][2]string) {
	t.Helper()
	for _, m := range ms {
		if _, err := s.Replace(m[0], m[1]); err != nil {
			t.Fatal(err)
		}
	}
}
