package reviewlist

import (
	"context"
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
	if _, err := store.Decide(context.Background(), history.Selection{Hunks: []history.HunkRef{{EditID: id1, Block: 1}}}, history.Rejected, false); err != nil {
		t.Fatal(err)
	}
	l, err := Build(store, ws.Path("sub"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Lines) != 4 || l.Edit[0] != "" || l.Conv[0] != "conv_1_a" || l.Edit[1] != id1 || l.Edit[3] != id2 || l.Conv[3] != "conv_2_b" {
		t.Fatalf("rows:\n%s\n%+v", strings.Join(l.Lines, "\n"), l)
	}
	for i, want := range []string{"Conversation conv_1_a (1)  1 partly rejected", id1[:8], "Conversation conv_2_b (1)  1 pending", id2[:8]} {
		if !strings.Contains(l.Lines[i], want) {
			t.Fatalf("line %d %q lacks %q", i+1, l.Lines[i], want)
		}
	}
	// Paths are relative to the folder asked from when under it.
	if !strings.Contains(l.Lines[3], "+2 −0 ") || !strings.HasSuffix(l.Lines[3], "  b.txt") || !strings.HasSuffix(l.Lines[1], "  "+root.Path()+"/a.txt") ||
		l.Status[1] != "partly rejected" || l.File[3] != ws.Path("sub/b.txt") {
		t.Fatalf("rows:\n%s", strings.Join(l.Lines, "\n"))
	}
}

// TestConversationTitle: a conversation whose prompt is known shows its title on its
// line (quoted: it is the user's text).
func TestConversationTitle(t *testing.T) {
	root, store := testenv.CreateStore(t, t.TempDir())
	ws := testenv.Dir{TB: t, Root: root.Path()}
	ws.Write("a.txt", "a\n")
	ch := history.Change{Op: history.Edit, Path: ws.Path("a.txt"), Before: []byte("a\n"), BeforeExists: true, After: []byte("b\n")}
	if _, err := store.Record(context.Background(), history.Commit{Conversation: "gemini_1_2", Title: `Fix the "bug"`, Tool: "replace",
		Source: history.SourceGemini, Changes: []history.Change{ch}, Files: testenv.Transaction(root, ch)}); err != nil {
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
