package filetools

import "testing"

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
