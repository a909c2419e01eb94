package ide

import (
	"slices"
	"sync"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
	"github.com/mcpdiff/mcpdiff/nvim/neovims"
)

// Who records a diff the user accepted: the server that accepted it. Claude Code
// writes the file itself, and then its PostToolUse hook would record the same write;
// before it does, the hook asks the Neovims that could have accepted it (through
// Neovim, to `mcpdiff nvim`, to ClaimWrites here) and records only what none claims.
// A write is claimed when this server recorded it lately and the file has not been
// written since, or when a write watch waits for exactly that text and records it
// within claimWait.

const (
	// claimWait bounds how long ClaimWrites waits for a watch to record the write it
	// is asked about: a record takes milliseconds, more on a loaded machine; one that
	// waits for a busy store is left to the hook (and the history's Commit.Once makes
	// the two records one). It leaves the hook (which waits at most a second for
	// Neovim) time to connect and hear the answer; Neovim waits for it too.
	claimWait = 600 * time.Millisecond
	// rememberFor and maxRemembered bound the memory of recorded writes: the hook
	// asks within seconds of the write, or not at all.
	rememberFor   = time.Minute
	maxRemembered = 64
)

// recordedWrite is a write the server recorded: the file, its text's hash, and its
// stamp just after the record (a later write of the same text is a new write).
type recordedWrite struct {
	path, hash string
	stamp      workspace.Stamp
	at         time.Time
}

// claims is what the server recorded lately, for ClaimWrites.
type claims struct {
	mu      sync.Mutex
	recent  []recordedWrite // oldest first
	changed chan struct{}   // closed (and replaced) when a watch records or settles
}

// remember notes that the server recorded path (absolute) with the text of hash in it.
func (c *claims) remember(path, hash string, now time.Time) {
	w := recordedWrite{path: history.RealPath(path), hash: hash, at: now}
	w.stamp = workspace.StatStamp(w.path)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recent = append(c.recent, w)
	if len(c.recent) > maxRemembered {
		c.recent = slices.Delete(c.recent, 0, len(c.recent)-maxRemembered)
	}
	c.wakeLocked()
}

// wake tells the waiting ClaimWrites to look again.
func (c *claims) wake() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wakeLocked()
}

func (c *claims) wakeLocked() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// changes is closed at the next remember or wake.
func (c *claims) changes() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

// take reports whether the server recorded path (real) holding the text of hash,
// and the file is as the record left it; a write is claimed once.
func (c *claims) take(path, hash string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.recent) - 1; i >= 0; i-- {
		w := c.recent[i]
		if now.Sub(w.at) > rememberFor {
			break
		}
		if w.path == path && w.hash == hash && workspace.StatStamp(path).UnchangedSince(w.stamp) {
			c.recent = slices.Delete(c.recent, i, i+1)
			return true
		}
	}
	return false
}

// ClaimWrites answers a hook's question: which of these writes did this server
// accept and record (so the hook must not record them again)? It waits, at most
// claimWait, for a write watch that holds a write's text to record it.
func (s *Server) ClaimWrites(writes []neovims.Written) []bool {
	claimed := make([]bool, len(writes))
	paths := make([]string, len(writes))
	for i, w := range writes {
		paths[i] = history.RealPath(w.Path)
	}
	timeout := time.NewTimer(claimWait)
	defer timeout.Stop()
	for {
		changed := s.claims.changes()
		waiting := false
		for i, w := range writes {
			if claimed[i] {
				continue
			}
			claimed[i] = s.claims.take(paths[i], w.Hash, s.now())
			waiting = waiting || (!claimed[i] && s.watchesFor(paths[i], w.Hash))
		}
		if !waiting {
			return claimed
		}
		s.pokeWatches()
		select {
		case <-changed:
		case <-timeout.C:
			return claimed
		case <-s.life.Done():
			return claimed
		}
	}
}

// watchesFor reports whether a write watch waits for path (real) to hold the text
// of hash.
func (s *Server) watchesFor(path, hash string) bool {
	s.mu.Lock()
	var ws []*writeWatch
	for w := range s.watches {
		if !w.d.settled {
			ws = append(ws, w)
		}
	}
	s.mu.Unlock()
	// A saved diff's final text no longer changes: it is read without the lock.
	for _, w := range ws {
		if history.RealPath(w.d.req.NewPath) == path && w.finalHash() == hash {
			return true
		}
	}
	return false
}
