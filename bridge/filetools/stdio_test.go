package filetools

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// Texts of responses that are never written (cancelled calls) do not pile up.
func TestBigTextsAreBounded(t *testing.T) {
	texts := &bigTexts{pending: map[string][]byte{}}
	for range maxPendingTexts * 3 {
		texts.add("x")
	}
	if len(texts.pending) != maxPendingTexts || len(texts.order) != maxPendingTexts {
		t.Fatalf("%d texts pending, want at most %d", len(texts.pending), maxPendingTexts)
	}
}

// A message bigger than a pipe holds goes out whole and in order, however the
// writes are cut (a full pipe, a signal).
func TestWritePartsToAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	parts := [][]byte{[]byte(`{"head":"`), bytes.Repeat([]byte("0123456789abcdef"), 200_000), []byte(`"}` + "\n")}
	want := bytes.Join(parts, nil)
	done := make(chan error, 1)
	go func() {
		done <- writeParts(w, parts)
		w.Close()
	}()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("writeParts: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(want))
	}
}
