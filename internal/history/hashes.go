package history

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// SHA-256 reads its input in order, so new bytes that begin like bytes hashed before
// can be hashed from the state that hash had reached where the two part. For the big
// contents the store hashes (a file's bytes after a change), it keeps the state
// every hashStep bytes, by the content's hash; the next change of that file, which
// keeps most of it, then hashes only from the last step before its first changed
// byte: half the file on average instead of all of it (11 MB took 5.4 ms here).

const (
	hashStep   = 256 << 10
	hashesKept = 4 // contents whose states are kept, the latest
)

// hashStates are the kept states: states[i] is the marshalled state after i+1 steps.
type hashStates struct {
	mu     sync.Mutex
	byHash map[string][][]byte
	order  []string // oldest first
}

// sum returns the SHA-256 of b in hex. like is the content b replaces and likeHash
// its hash (or ""): where b begins like it, hashing starts from like's kept state.
func (h *hashStates) sum(b, like []byte, likeHash string) string {
	d := sha256.New()
	var states [][]byte
	if prev := h.get(likeHash); len(prev) > 0 {
		k := min(udiff.CommonPrefixLen(b, like)/hashStep, len(prev))
		if k > 0 && d.(encoding.BinaryUnmarshaler).UnmarshalBinary(prev[k-1]) == nil {
			states = append(states, prev[:k]...) // b's first k steps are like's
		} else {
			d.Reset()
		}
	}
	keep := len(b) >= rememberFrom
	for off := len(states) * hashStep; off < len(b); off += hashStep {
		step := b[off:min(off+hashStep, len(b))]
		d.Write(step)
		if keep && len(step) == hashStep {
			if st, err := d.(encoding.BinaryMarshaler).MarshalBinary(); err == nil {
				states = append(states, st)
			} else {
				keep = false
			}
		}
	}
	sum := hex.EncodeToString(d.Sum(nil))
	if keep {
		h.put(sum, states)
	}
	return sum
}

func (h *hashStates) get(hash string) [][]byte {
	if hash == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byHash[hash]
}

func (h *hashStates) put(hash string, states [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byHash == nil {
		h.byHash = map[string][][]byte{}
	}
	if _, ok := h.byHash[hash]; ok {
		return
	}
	if len(h.order) == hashesKept {
		delete(h.byHash, h.order[0])
		h.order = h.order[1:]
	}
	h.byHash[hash] = states
	h.order = append(h.order, hash)
}
