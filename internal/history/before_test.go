package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestBeforeSnapshots(t *testing.T) {
	w := newWS(t)
	hooks := filepath.Join(w.dir, ".mcp", "edit_history", "hooks")
	if err := w.store.SaveBefore("t1", Before{Path: w.abs("a.txt"), Exists: true, Content: []byte("x\r\n\x00")}); err != nil {
		t.Fatal(err)
	}
	b, err := w.store.TakeBefore("t1")
	if err != nil || b == nil || !b.Exists || string(b.Content) != "x\r\n\x00" || b.Path != w.abs("a.txt") {
		t.Fatalf("took %+v, %v", b, err)
	}
	if again, err := w.store.TakeBefore("t1"); again != nil || err != nil {
		t.Fatalf("a snapshot was taken twice: %+v %v", again, err)
	}
	if b, err := w.store.TakeBefore("../logs/x"); b != nil || err != nil {
		t.Fatalf("a bad key read %+v %v", b, err)
	}
	if err := w.store.SaveBefore("../x", Before{Path: "/x"}); err == nil {
		t.Fatal("a key with a path in it was accepted")
	}

	// A snapshot nobody took (the tool call was refused): swept once a day old. A
	// fresh one stays.
	for _, name := range []string{"old", "older"} {
		p := filepath.Join(hooks, name)
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		long := time.Now().Add(-25 * time.Hour)
		os.Chtimes(p, long, long)
	}
	if err := w.store.SaveBefore("fresh", Before{Path: w.abs("b.txt")}); err != nil {
		t.Fatal(err)
	}
	if err := w.store.SaveBefore("t2", Before{Path: w.abs("b.txt")}); err != nil {
		t.Fatal(err)
	}
	names, _ := os.ReadDir(hooks)
	if len(names) != 2 || names[0].Name() != "fresh" || names[1].Name() != "t2" {
		t.Fatalf("left in hooks/: %v", names)
	}

	// Something else under a snapshot's name, or a torn snapshot (its writer was
	// killed), is refused and removed.
	if err := w.store.SaveBefore("t4", Before{Path: w.abs("a.txt"), Exists: true, Content: []byte("0123456789")}); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(filepath.Join(hooks, "t4"))
	os.WriteFile(filepath.Join(hooks, "t4"), whole[:len(whole)-3], 0o600)
	os.WriteFile(filepath.Join(hooks, "t3"), []byte("not a snapshot"), 0o600)
	for _, key := range []string{"t3", "t4"} {
		if b, err := w.store.TakeBefore(key); b != nil || err == nil {
			t.Fatalf("took %+v %v; want an error", b, err)
		}
		if _, err := os.Stat(filepath.Join(hooks, key)); err == nil {
			t.Fatal("the bad snapshot stays")
		}
	}
}
