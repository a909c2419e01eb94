package reviewlist

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

func TestRowsPerConversationThenEdit(t *testing.T) {
	root, store := testenv.CreateStore(t, t.TempDir())
	ws := testenv.Dir{TB: t, Root: root.Path()}
	record := func(conv, rel, before, after string) string {
		t.Helper()
		return testenv.RecordEdit(t, store, root, conv, rel, []byte(before), []byte(after)).EditID
	}
	ws.Write("a.txt", "1\n2\n3\n4\n5\n")
	id1 := record("conv_1_a", "a.txt", "1\n2\n3\n4\n5\n", "one\n2\n3\n4\nfive\n")
	ws.Write("sub/b.txt", "x\n")
	id2 := record("conv_2_b", "sub/b.txt", "x\n", "x\ny\nz\n")
	if _, err := store.Decide(context.Background(), history.Selection{Changes: []history.ChangeRef{{EditID: id1, Block: 1}}}, history.Rejected, false); err != nil {
		t.Fatal(err)
	}
	l, err := Build(store, ws.Path("sub"))
	if err != nil {
		t.Fatal(err)
	}
	// Both conversations have a pending edit (a partly rejected edit keeps its other
	// changes pending): the newest comes first.
	if len(l.Lines) != 4 || l.Edit[0] != "" || l.Conv[0] != "conv_2_b" || l.Edit[1] != id2 || l.Edit[3] != id1 || l.Conv[3] != "conv_1_a" {
		t.Fatalf("rows:\n%s\n%+v", strings.Join(l.Lines, "\n"), l)
	}
	for i, want := range []string{"Conversation conv_2_b (1)  1 pending", id2[:8], "Conversation conv_1_a (1)  1 partly rejected", id1[:8]} {
		if !strings.Contains(l.Lines[i], want) {
			t.Fatalf("line %d %q lacks %q", i+1, l.Lines[i], want)
		}
	}
	// Paths are relative to the folder asked from when under it.
	if !strings.Contains(l.Lines[1], "+2 −0 ") || !strings.HasSuffix(l.Lines[1], "  b.txt") || !strings.HasSuffix(l.Lines[3], "  "+root.Path()+"/a.txt") ||
		l.Status[3] != "partly rejected" || l.File[1] != ws.Path("sub/b.txt") {
		t.Fatalf("rows:\n%s", strings.Join(l.Lines, "\n"))
	}
	if want := []bool{true, true, true, true}; !reflect.DeepEqual(l.Pending, want) {
		t.Fatalf("pending %v, want %v", l.Pending, want)
	}
}

// TestPendingConversationsFirstNewestFirst: a conversation with a pending edit comes
// before every conversation without one, however old; within each group the latest
// edit decides.
func TestPendingConversationsFirstNewestFirst(t *testing.T) {
	root, store := testenv.CreateStore(t, t.TempDir())
	ws := testenv.Dir{TB: t, Root: root.Path()}
	lines := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}
	content := strings.Join(lines, "\n") + "\n"
	ws.Write("a.txt", content)
	n := 0
	edit := func(conv string) string { // each edit changes its own line, two lines apart
		t.Helper()
		n++
		lines[2*n-1] = conv
		next := strings.Join(lines, "\n") + "\n"
		id := testenv.RecordEdit(t, store, root, conv, "a.txt", []byte(content), []byte(next)).EditID
		content = next
		return id
	}
	decide := func(status history.Status, ids ...string) {
		t.Helper()
		if _, err := store.Decide(context.Background(), history.Selection{IDs: ids}, status, false); err != nil {
			t.Fatal(err)
		}
	}
	old := edit("conv_old_pending")
	accepted := edit("conv_accepted")
	edit("conv_new_pending")
	rejected := edit("conv_rejected")
	edit("conv_old_pending") // its latest edit makes it the newest pending one
	decide(history.Accepted, accepted)
	decide(history.Rejected, rejected)
	decide(history.Accepted, old)
	l, err := Build(store, root.Path())
	if err != nil {
		t.Fatal(err)
	}
	var convs []string
	var pending []bool
	for i, e := range l.Edit {
		if e == "" {
			convs = append(convs, l.Conv[i])
			pending = append(pending, l.Pending[i])
		}
	}
	if want := []string{"conv_old_pending", "conv_new_pending", "conv_rejected", "conv_accepted"}; !reflect.DeepEqual(convs, want) {
		t.Fatalf("conversations %q, want %q:\n%s", convs, want, strings.Join(l.Lines, "\n"))
	}
	if want := []bool{true, true, false, false}; !reflect.DeepEqual(pending, want) {
		t.Fatalf("pending %v, want %v", pending, want)
	}
	// The accepted edit of conv_old_pending is not pending; its other edit is.
	if l.Edit[1] != old || l.Pending[1] || !l.Pending[2] {
		t.Fatalf("rows %q, pending %v", l.Lines, l.Pending)
	}
}

// TestConversationTitle: a conversation whose prompt is known shows its title on its
// line (quoted: it is the user's text).
func TestConversationTitle(t *testing.T) {
	root, store := testenv.CreateStore(t, t.TempDir())
	ws := testenv.Dir{TB: t, Root: root.Path()}
	ws.Write("a.txt", "a\n")
	ch := history.Change{Op: history.Edit, Path: ws.Path("a.txt"), Before: []byte("a\n"), BeforeExists: true, After: []byte("b\n")}
	if _, err := testenv.RecordWritten(store, history.Commit{Conversation: "gemini_1_2", Title: `Fix the "bug"`, Tool: "replace",
		Source: history.SourceGemini, Changes: []history.Change{ch}}, testenv.Tx(root, ch)); err != nil {
		t.Fatal(err)
	}
	l, err := Build(store, root.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Lines) != 2 || !strings.HasSuffix(l.Lines[0], `"Fix the \"bug\""`) {
		t.Fatalf("lines %q; want the conversation's title on its line", l.Lines)
	}
}

// TestColumnsLineUpWithLongToolNames: the counts and the file start in the same column
// on every edit's row, whatever the tools' names (the file tools' edit_text_file and
// search_and_replace are longer than the agents' Edit).
func TestColumnsLineUpWithLongToolNames(t *testing.T) {
	root, store := testenv.CreateStore(t, t.TempDir())
	ws := testenv.Dir{TB: t, Root: root.Path()}
	for i, tool := range []string{"Edit", "edit_text_file", "search_and_replace"} {
		ws.Write("a.txt", strings.Repeat("x\n", i+1))
		ch := history.Change{Op: history.Edit, Path: ws.Path("a.txt"), Before: []byte(strings.Repeat("x\n", i+1)),
			BeforeExists: true, After: []byte(strings.Repeat("x\n", i+2))}
		if _, err := testenv.RecordWritten(store, history.Commit{Conversation: "conv_1_a", Tool: tool, Source: history.SourceMCP,
			Changes: []history.Change{ch}}, testenv.Tx(root, ch)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Build(store, root.Path())
	if err != nil {
		t.Fatal(err)
	}
	column := map[int]bool{}
	for i, line := range l.Lines {
		if l.Edit[i] != "" {
			column[len([]rune(line[:strings.Index(line, "+1 −0")]))] = true
		}
	}
	if len(column) != 1 {
		t.Fatalf("the counts start in %d different columns:\n%s", len(column), strings.Join(l.Lines, "\n"))
	}
}
