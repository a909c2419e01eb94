package history

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// A store is data from disk, and a planted one can be built to fool a replay: a
// checkpoint of malicious content with a rejected edit on top, and a rebuild marker
// that claims the file was put back. Before a decision writes a file, its history
// must agree with itself: every step starts where the one before it ended, the
// checkpoint and the edits its recorded decisions keep give exactly what the recorded
// steps left on disk (a reject that was never carried out, or a marker that lies,
// shows here), and that is what the store's index of heads records last.

// ErrInconsistent means a file's history does not agree with itself.
var ErrInconsistent = errors.New("inconsistent edit history")

// agrees checks the history of lineage l before a decision writes its file. cur is
// the replay of l under the recorded decisions when the decision made it already
// (nil: it is made here). Called with the lock held (heads.log is read).
func (s *Store) agrees(l *lineage, snap *snapshot, cur *replayer) error {
	if err := s.stepsAgree(l, snap, cur); err != nil {
		return err
	}
	last := l.steps[len(l.steps)-1]
	h, err := s.heads.get(last.to())
	if err != nil {
		return err
	}
	// A head older than the last step is one a killed writer did not get to update.
	if h != nil && h.Seq >= last.seq && (h.Exists != last.existsAfter() || (h.Exists && h.Hash != deref(last.hashAfter()))) {
		return s.inconsistent(l, "heads.log records another state of it")
	}
	return nil
}

func (s *Store) inconsistent(l *lineage, why string) error {
	return fmt.Errorf("%w: the history of %s does not agree with itself (%s); it may have been planted or damaged, so no decision rebuilds the file from it",
		ErrInconsistent, s.rel(l.steps[len(l.steps)-1].to()), why)
}

// stepsAgree is agrees without heads.log: what the steps and the recorded decisions
// say, read only.
func (s *Store) stepsAgree(l *lineage, snap *snapshot, cur *replayer) error {
	fail := func(why string) error { return s.inconsistent(l, why) }
	for i := 1; i < len(l.steps); i++ {
		a, b := l.steps[i-1].hashAfter(), l.steps[i].hashBefore()
		if l.steps[i-1].existsAfter() && a != nil && b != nil && *a != *b {
			return fail(fmt.Sprintf("step %d of %d does not start from the content the step before it left", i+1, len(l.steps)))
		}
	}
	if cur == nil {
		cur = &replayer{store: s, status: currentStatus, knownEnd: true}
		if err := cur.run(l, snap); err != nil {
			return fail(err.Error())
		}
	}
	if len(cur.conflicts) > 0 {
		return fail("its recorded decisions keep " + cur.conflicts[0].String())
	}
	if !sameFile(cur.S, cur.R) {
		return fail("its recorded decisions do not give what its last recorded step left")
	}
	return nil
}

// timeCheck runs one of the store's own checks, adding its time to s.checking.
// Called with the lock held.
func (s *Store) timeCheck(check func() error) error {
	start := time.Now()
	err := check()
	s.checking += time.Since(start)
	return err
}

// checkpointCache keeps the last checkpoint read and checked, and its lines, which a
// decision's second replay of the same file needs again.
type checkpointCache struct {
	mu        sync.Mutex
	ref, hash string
	content   []byte
	split     []string // content's lines, once asked for
}

func (c *checkpointCache) get(ref, hash string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.content, c.content != nil && c.ref == ref && c.hash == hash
}

func (c *checkpointCache) put(ref, hash string, content []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ref, c.hash, c.content, c.split = ref, hash, content, nil
}

// lines is content split into lines: the cached split when content is the cached
// checkpoint. The result is shared: copy it before changing it.
func (c *checkpointCache) lines(content []byte) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	cached := len(content) > 0 && len(c.content) == len(content) && &c.content[0] == &content[0]
	if !cached {
		return udiff.SplitLines(content)
	}
	if c.split == nil {
		c.split = udiff.SplitLines(content)
	}
	return c.split
}
