package history

import (
	"reflect"
	"testing"
)

// beneath sums up the pending blocks under a hunk: "edit:block".
func beneath(h PendingChange, ids map[string]string) []string {
	out := []string{}
	for _, b := range h.Beneath {
		out = append(out, ids[b.EditID]+":"+itoa(b.Block+1)+" "+b.Kind)
	}
	return out
}

// A pending block rewritten by a later one is listed beneath the later one's hunk
// (through blocks decided in between), until it is decided itself.
func TestHunksListThePendingBlocksBeneath(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(10))
	e1 := w.edit(c, "a.txt", replaceLine(replaceLine(numbered(10), 5, "five"), 6, "six"))
	e2 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 5, "FIVE"))
	e3 := w.edit(c, "a.txt", replaceLine(w.mustRead("a.txt"), 5, "Five"))
	ids := map[string]string{e1.EditID: "e1", e2.EditID: "e2", e3.EditID: "e3"}
	hunks := func() []PendingChange {
		t.Helper()
		hs, err := w.store.PendingChanges(w.abs("a.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
	hs := hunks()
	// Line 5 is e3's, with e1's and e2's changes beneath; line 6 is still e1's.
	if len(hs) != 2 || hs[0].EditID != e3.EditID || hs[0].Start != 5 || hs[1].EditID != e1.EditID || hs[1].Start != 6 {
		t.Fatalf("hunks %+v", hs)
	}
	if got, want := beneath(hs[0], ids), []string{"e1:1 change", "e2:1 change"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("beneath line 5: %q, want %q", got, want)
	}
	if got := beneath(hs[1], ids); len(got) != 0 {
		t.Fatalf("beneath line 6: %q", got)
	}
	if b := hs[0].Beneath[1]; !reflect.DeepEqual(b.Old, []string{"five\n"}) || b.Start != 0 {
		t.Fatalf("e2 beneath: %+v", b)
	}
	// e2 accepted: e1 is still beneath, through it.
	w.mustDecide(Accepted, e2.EditID)
	if got, want := beneath(hunks()[0], ids), []string{"e1:1 change"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("beneath line 5 with e2 accepted: %q, want %q", got, want)
	}
	w.mustDecide(Accepted, e1.EditID)
	hs = hunks()
	if len(hs) != 1 || hs[0].EditID != e3.EditID || len(hs[0].Beneath) != 0 {
		t.Fatalf("with e1 and e2 accepted: %+v", hs)
	}
}

// A pending line that a later pending block removed is beneath that deletion.
func TestHunksListTheAddedLinesADeletionRemoved(t *testing.T) {
	w, c := oneFile(t, "a.txt", numbered(6))
	e1 := w.edit(c, "a.txt", insertAfter(numbered(6), 3, "new"))
	e2 := w.edit(c, "a.txt", numbered(6))
	hs, err := w.store.PendingChanges(w.abs("a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{e1.EditID: "e1", e2.EditID: "e2"}
	if len(hs) != 1 || hs[0].EditID != e2.EditID || hs[0].Kind != KindDelete || hs[0].Start != 3 {
		t.Fatalf("hunks %+v", hs)
	}
	if got, want := beneath(hs[0], ids), []string{"e1:1 add"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("beneath the deletion: %q, want %q", got, want)
	}
}
