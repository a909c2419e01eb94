package history

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// Hashes that start from kept states are the hashes of the bytes, whatever the bytes
// share with the content before: nothing, a prefix ending inside or at the end of a
// step, or all of it.
func TestHashesFromKeptStatesAreTheHashes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	content := make([]byte, 3*hashStep+1234)
	for i := range content {
		content[i] = byte('a' + r.IntN(26))
	}
	var h hashStates
	prevHash := h.sum(content, nil, "")
	for round := range 200 {
		next := append([]byte(nil), content...)
		switch round % 4 {
		case 0: // one byte changed somewhere
			next[r.IntN(len(next))] ^= 1
		case 1: // a step boundary moved: bytes inserted
			at := r.IntN(len(next))
			next = append(next[:at:at], append([]byte("inserted"), next[at:]...)...)
		case 2: // cut short
			next = next[:r.IntN(len(next))]
		case 3: // grown at the end
			next = append(next, make([]byte, r.IntN(2*hashStep))...)
		}
		got := h.sum(next, content, prevHash)
		want := sha256.Sum256(next)
		if got != hex.EncodeToString(want[:]) {
			t.Fatalf("round %d: hash %s, want %x", round, got, want)
		}
		content, prevHash = next, got
	}
}
