package ide

import (
	"os"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// writeWatch waits for the client to write an accepted diff. The CLI, not the
// editor, writes the file: after the two close_tabs and the baseline getDiagnostics.
type writeWatch struct {
	d          *diff
	poke       chan struct{} // "look now": a close_tab or getDiagnostics arrived
	superseded chan struct{} // closed (under Server.mu) when a new diff of the file opens
}

// watchWrite starts waiting for d's accepted text to reach the disk, to record it.
func (s *Server) watchWrite(d *diff) {
	if d.final == string(d.before) {
		s.logf("ide: %s was accepted unchanged; Claude Code treats that as a rejection, nothing to record", d.req.NewPath)
		s.settle(d)
		return
	}
	w := &writeWatch{d: d, poke: make(chan struct{}, 1), superseded: make(chan struct{})}
	s.mu.Lock()
	if s.state != stateRunning {
		s.mu.Unlock()
		return
	}
	// The proposal was answered: what the watch compares and records is d.final and
	// d.before. Up to watchTimeout of waiting should not hold a third copy.
	d.req.Contents = ""
	s.watches[w] = struct{}{}
	s.tasks.Add(1)
	s.mu.Unlock()
	go s.runWatch(w)
}

// runWatch checks at once, on every poke, and when a light stat poll sees the file
// change; it gives up after watchTimeout and ends on Stop.
func (s *Server) runWatch(w *writeWatch) {
	defer s.tasks.Done()
	defer s.forgetWatch(w)
	deadline := time.NewTimer(s.watchTimeout)
	defer deadline.Stop()
	poll := time.NewTicker(s.watchPoll)
	defer poll.Stop()

	var seen workspace.Stamp
	force := true
	for {
		if s.checkWrite(w.d, &seen, force) {
			return
		}
		select {
		case <-s.life.Done():
			return
		case <-deadline.C:
			s.logf("ide: %s was not written within %v of being accepted; not recorded in the edit history", w.d.req.NewPath, s.watchTimeout)
			s.settle(w.d)
			return
		case <-w.superseded:
			// The client proposes this file again, so it wrote the accepted text by
			// now or never will: a last look, then the watch (and the texts it
			// holds) ends instead of waiting out watchTimeout.
			if !s.checkWrite(w.d, &seen, true) {
				s.logf("ide: %s was not written before the next diff of it; not recorded in the edit history", w.d.req.NewPath)
				s.settle(w.d)
			}
			return
		case <-poll.C:
			force = false
		case <-w.poke:
			force = true
		}
	}
}

// checkWrite reads the file when forced or when its stamp changed, and records the
// diff once the file holds the accepted text.
func (s *Server) checkWrite(d *diff, seen *workspace.Stamp, force bool) bool {
	path := d.req.NewPath
	stamp := workspace.StatStamp(path)
	if !force && stamp.UnchangedSince(*seen) {
		return false
	}
	*seen = stamp
	// A file of another size cannot hold the text: no need to read it. The
	// comparison converts nothing (the compiler compares string(data) in place).
	if !stamp.Exists || stamp.Size != int64(len(d.final)) {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != d.final {
		return false
	}
	s.record(d, data)
	s.settle(d)
	return true
}

func (s *Server) record(d *diff, after []byte) {
	if s.opts.Recorder == nil {
		return
	}
	if err := s.opts.Recorder.RecordAccepted(d.conv, d.req.NewPath, d.before, d.existed, after); err != nil {
		s.logf("ide: record the accepted diff of %s: %v", d.req.NewPath, err)
		return
	}
	s.logf("ide: recorded the accepted diff of %s in conversation %s", d.req.NewPath, d.conv)
}

// settle marks a saved diff as no longer waiting for its write. If its client has
// disconnected meanwhile, nobody will send close_tab: close it now.
func (s *Server) settle(d *diff) {
	s.mu.Lock()
	d.settled = true
	orphan := s.diffs[d.req.TabName] == d && d.owner.gone.Load()
	if orphan {
		delete(s.diffs, d.req.TabName)
	}
	s.mu.Unlock()
	if orphan {
		s.teardown(d)
	}
}

// supersedeWatches ends the watches of earlier accepted diffs of path.
func (s *Server) supersedeWatches(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		if w.d.req.NewPath == path {
			delete(s.watches, w)
			close(w.superseded)
		}
	}
}

func (s *Server) forgetWatch(w *writeWatch) {
	s.mu.Lock()
	delete(s.watches, w)
	s.mu.Unlock()
}

// pokeWatches makes every watcher look at its file now. All of them, not only the
// calling client's: a CLI that reconnected comes back on a new connection.
func (s *Server) pokeWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		select {
		case w.poke <- struct{}{}:
		default: // a look is already due
		}
	}
}
