package history

import (
	"os"
	"path/filepath"
	"testing"
)

// A store kept open stops being current once its .mcp is removed, and stays so when
// another store is made in its place (which is this user's, opened anew).
func TestStoreRemovedAndMadeAgainIsNotCurrent(t *testing.T) {
	dir := t.TempDir()
	old, err := OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !old.Current() {
		t.Fatal("a store just opened is not current")
	}
	if err := os.RemoveAll(filepath.Join(dir, ".mcp")); err != nil {
		t.Fatal(err)
	}
	if old.Current() {
		t.Fatal("a removed store is current")
	}
	made, err := OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if old.Current() || !made.Current() {
		t.Fatalf("after a new store: the old one current %v, the new one %v", old.Current(), made.Current())
	}
	if err := made.Foreign(); err != nil {
		t.Fatalf("the new store: %v", err)
	}
}

// The recorder of a Neovim's accepted diffs records into the store made after .mcp
// was removed, not into the folder that went with it.
func TestDiffRecorderFollowsAStoreMadeAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	rec := NewDiffRecorder([]string{dir})
	for i, after := range []string{"one\n", "two\n"} {
		if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
			t.Fatal(err)
		}
		if recorded, err := rec.RecordAccepted("conv_1_ab", path, nil, false, []byte(after)); err != nil || !recorded {
			t.Fatalf("record %d: recorded %v, %v", i, recorded, err)
		}
		list, err := reopen(t, dir).List(Filter{})
		if err != nil || len(list.Entries) != 1 || *list.Entries[0].HashAfter != hashBytes([]byte(after)) {
			t.Fatalf("record %d: the store lists %+v, %v", i, list, err)
		}
		if err := os.RemoveAll(filepath.Join(dir, ".mcp")); err != nil {
			t.Fatal(err)
		}
	}
}
