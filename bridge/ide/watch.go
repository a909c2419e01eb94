package ide

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// writeWatch waits for the client to write an accepted diff: to record it, and to
// tell the view, which reloads the file's buffers. It is the one wait for that
// write. The CLI, not the editor, writes the file: after the two close_tabs and the
// baseline getDiagnostics.
type writeWatch struct {
	d          *diff
	seen       writeSeen
	poke       chan struct{} // "look now": a close_tab or getDiagnostics arrived
	superseded chan struct{} // closed (under Server.mu) when a new diff of the file opens
	// finalHash is the accepted text's hash, made once: for the claims of the hook's
	// questions (claims.go), which may ask while the watch waits and after it recorded.
	finalHash func() string
}

// writeSeen tells, look by look, when the client has written a file it accepted
// with text: as soon as the file holds text, or once it has changed and then stayed
// the same for a look (the client wrote something else). A write caught half-way
// (the file truncated, the text not yet in it) is not taken for the write: reloading
// it would show an empty buffer and lose every window's place in it.
type writeSeen struct {
	path, text string
	last       workspace.Stamp // at the last look
	reported   workspace.Stamp // when look last answered written (at first: when the wait began)
}

func newWriteSeen(path, text string) writeSeen {
	return writeSeen{path: path, text: text, reported: workspace.StatStamp(path)}
}

// holdsText reads the file only when its stamp allows the text: a file of another
// size cannot hold it, nor can a FIFO or a device (opening one could block). The
// comparison converts nothing (the compiler compares string(data) in place).
func (w *writeSeen) holdsText(now workspace.Stamp) bool {
	if !now.Exists || !now.Mode.IsRegular() || now.Size != int64(len(w.text)) {
		return false
	}
	data, err := os.ReadFile(w.path)
	return err == nil && string(data) == w.text
}

// look is one look at the file: whether it holds the text, and whether it was
// written (holding the text, or something else that stayed for a look), once per
// write. force reads the file even when its stamp has not changed since the last look.
func (w *writeSeen) look(force bool) (holds, written bool) {
	now := workspace.StatStamp(w.path)
	stayed := now.UnchangedSince(w.last)
	w.last = now
	if (force || !stayed) && w.holdsText(now) {
		return true, true
	}
	if !stayed || now.UnchangedSince(w.reported) {
		return false, false
	}
	w.reported = now
	return false, true
}

// watchWriteLocked makes the wait for d's accepted text to reach the disk, for
// the caller to run (runWatch) once it has let go of Server.mu; nil when there is
// nothing to wait for: the text is the old file's (unchanged), or the server stops.
func (s *Server) watchWriteLocked(d *diff) (w *writeWatch, unchanged bool) {
	if d.final == string(d.before) {
		return nil, true
	}
	if s.state != stateRunning {
		return nil, false
	}
	w = &writeWatch{d: d, seen: newWriteSeen(d.req.NewPath, d.final), poke: make(chan struct{}, 1), superseded: make(chan struct{}),
		finalHash: sync.OnceValue(func() string { return edit.FileHash([]byte(d.final)) })}
	// The proposal was answered: what the watch compares and records is d.final and
	// d.before. Up to watchTimeout of waiting should not hold a third copy.
	d.req.Contents = ""
	d.watch = w
	s.watches[w] = struct{}{}
	s.tasks.Add(1)
	return w, false
}

// runWatch looks at once, on every poke, and when a light stat poll sees the file
// change; it gives up after watchTimeout and ends on Stop.
func (s *Server) runWatch(w *writeWatch) {
	defer s.tasks.Done()
	defer s.forgetWatch(w)
	deadline := time.NewTimer(s.watchTimeout)
	defer deadline.Stop()
	poll := time.NewTicker(s.watchPoll)
	defer poll.Stop()

	force := true
	for {
		if s.checkWrite(w, force) {
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
			if !s.checkWrite(w, true) {
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

// checkWrite looks at the file once. When it holds the accepted text the diff is
// recorded and the watch ends; a write of something else reloads the buffers, and
// the watch goes on for the text until it gives up.
func (s *Server) checkWrite(w *writeWatch, force bool) bool {
	holds, written := w.seen.look(force)
	if written {
		s.written(w.d)
	}
	if !holds {
		return false
	}
	s.record(w)
	s.settle(w.d)
	return true
}

// written tells the view the file was written (the editor reloads its buffers that
// have no unsaved changes), once the view is closed: at once if it is, else when
// teardown closes it.
func (s *Server) written(d *diff) {
	s.mu.Lock()
	switch d.phase {
	case answered:
		d.phase = answeredWritten
	case closing:
		d.phase = closingWritten
	}
	now := d.phase == closed
	s.mu.Unlock()
	if now {
		s.reload(d)
	}
}

func (s *Server) reload(d *diff) {
	s.mu.Lock()
	view := d.view // an accepted diff has one: the answer came through it
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.editorTimeout)
	defer cancel()
	if err := view.Written(ctx); err != nil {
		s.logf("ide: reload %s: %v", d.req.NewPath, err)
	}
}

// record records the accepted text w's file now holds.
func (s *Server) record(w *writeWatch) {
	if s.opts.Recorder == nil {
		return
	}
	d := w.d
	recorded, err := s.opts.Recorder.RecordAccepted(d.conv, d.req.NewPath, d.before, d.existed, []byte(d.final))
	if err != nil {
		s.logf("ide: record the accepted diff of %s: %v", d.req.NewPath, err)
		return
	}
	if !recorded {
		s.logf("ide: %s is outside the workspace and every edit history; its accepted diff is not recorded", d.req.NewPath)
		return
	}
	s.claims.remember(d.req.NewPath, w.finalHash(), s.now()) // the hook asks whether it is ours
	s.logf("ide: recorded the accepted diff of %s in conversation %s", d.req.NewPath, d.conv)
}

// settle marks a saved diff as no longer waiting for its write. If its client has
// disconnected meanwhile, nobody will send close_tab: close it now.
func (s *Server) settle(d *diff) {
	s.mu.Lock()
	d.watch = nil
	orphan := s.diffs[d.req.TabName] == d && d.owner.gone.Load()
	if orphan {
		delete(s.diffs, d.req.TabName)
	}
	s.mu.Unlock()
	s.claims.wake() // a hook waiting for this diff's record has its answer
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
