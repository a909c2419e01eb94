package ide

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/idelock"
)

// Several Neovims running mcpdiff in one project (Options.Share): each follows the
// others' lock files and rewrites its own so that Claude Code tells them apart and
// `claude --ide` finds exactly one (idelock.Hold decides which). A Neovim that does
// not hold a folder lists, in its place, the file it has open there (or a name that
// no folder has, "[No Name]", as Neovim calls a buffer without a file): Claude Code
// counts a path inside its cwd as an IDE it may connect to (/ide offers it), but only
// a folder holding its cwd as one to connect to by itself. While others share the
// workspace, the name says which Neovim it is: "Neovim (src/main.go, pid 4242)".

// sharing is what the lock file says beyond the server's own folders. Guarded by
// Server.mu.
type sharing struct {
	real    []string        // the workspace folders, symlinks resolved
	active  int64           // when Neovim was started or last focused (Unix ns)
	current string          // the file of Neovim's current buffer (resolved), or ""
	peers   []idelock.Claim // the other Neovims, as their lock files last said
	written []byte          // the lock file as last written
}

// noName stands, in a folder a Neovim does not hold, for the file it has open when
// it has none there.
const noName = "[No Name]"

// peerDebounce gathers the events of one lock file's rewrite (temp file, rename).
const peerDebounce = 20 * time.Millisecond

// peerDirs are the folders whose lock files the server follows: the one it was
// given, else every folder Claude Code reads (another Neovim may lack
// CLAUDE_CONFIG_DIR), starting with its own.
func peerDirs(given, own string) []string {
	if given != "" {
		return []string{own}
	}
	dirs := []string{own}
	for _, d := range idelock.Dirs() {
		if d != own {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// watchPeers rewrites the lock file whenever a lock file beside it changes, until
// the server stops.
func (s *Server) watchPeers(dirs []string) {
	defer s.tasks.Done()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.logf("ide: cannot follow the other Neovims' lock files: %v", err)
		return
	}
	defer w.Close()
	for _, d := range dirs {
		if err := w.Add(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.logf("ide: cannot follow the lock files in %s: %v", d, err)
		}
	}
	s.reconsider(dirs)
	var due <-chan time.Time
	for {
		select {
		case <-s.life.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if strings.HasSuffix(ev.Name, ".lock") && ev.Name != s.LockPath() && due == nil {
				due = time.After(peerDebounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.logf("ide: following the lock files: %v", err)
		case <-due:
			due = nil
			s.reconsider(dirs)
		}
	}
}

// reconsider reads the other Neovims' lock files and rewrites this one's if what it
// should say changed.
func (s *Server) reconsider(dirs []string) {
	peers := idelock.Claims(idelock.Read(dirs), s.LockPath())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.share.peers = peers
	if s.state != stateRunning {
		return
	}
	if err := s.writeLockLocked(); err != nil {
		s.logf("%v", err)
	}
}

// SetCurrentFile tells the server the file of Neovim's current buffer ("" for none,
// or one that is not a file on disk), which names it while others share its
// workspace.
func (s *Server) SetCurrentFile(path string) {
	current := ""
	if fi, err := os.Stat(path); path != "" && err == nil && fi.Mode().IsRegular() {
		current = history.RealPath(path)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if current == s.share.current {
		return
	}
	s.share.current = current
	if s.state == stateRunning {
		if err := s.writeLockLocked(); err != nil {
			s.logf("%v", err)
		}
	}
}

// Touch says Neovim was just focused: of the Neovims with the same folder, the one
// used last is the one `claude --ide` connects to.
func (s *Server) Touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.share.active = max(time.Now().UnixNano(), s.share.active+1)
	if s.state == stateRunning {
		if err := s.writeLockLocked(); err != nil {
			s.logf("%v", err)
		}
	}
}

// shareLocked is the lock file's workspaceFolders and ideName.
func (s *Server) shareLocked() (folders []string, name string) {
	held, shared := idelock.Hold(s.claimLocked(), s.share.peers)
	seen := map[string]bool{}
	for i, f := range s.folders {
		if !held[i] {
			f = s.inPlaceOf(f, s.share.real[i])
		}
		if !seen[f] {
			seen[f] = true
			folders = append(folders, f)
		}
	}
	name = s.opts.IDEName
	if shared {
		name = s.sharedName()
	}
	return folders, name
}

// othersLocked counts the Neovims whose workspace overlaps this one's, and says
// whether this one holds its cwd (the first folder).
func (s *Server) othersLocked() (others int, chosen bool) {
	me := s.claimLocked()
	held, _ := idelock.Hold(me, s.share.peers)
	for _, p := range s.share.peers {
		if _, shared := idelock.Hold(me, []idelock.Claim{p}); shared {
			others++
		}
	}
	return others, len(held) == 0 || held[0]
}

func (s *Server) claimLocked() idelock.Claim {
	return idelock.Claim{Folders: s.share.real, Active: s.share.active, PID: s.opts.PID, Port: s.port}
}

// inPlaceOf is what the lock file lists for a folder this Neovim does not hold: the
// file it has open when that lies inside it, else noName inside it.
func (s *Server) inPlaceOf(folder, real string) string {
	if rel, ok := relativeTo(s.share.current, real); ok {
		return filepath.Join(folder, rel)
	}
	return filepath.Join(folder, noName)
}

// sharedName is the ideName while other Neovims share the workspace: the file it
// has open (relative to the cwd when inside it) and Neovim's pid.
func (s *Server) sharedName() string {
	file := s.share.current
	if len(s.share.real) > 0 {
		if rel, ok := relativeTo(file, s.share.real[0]); ok {
			file = rel
		}
	}
	if file == "" {
		return fmt.Sprintf("%s (pid %d)", s.opts.IDEName, s.opts.PID)
	}
	return fmt.Sprintf("%s (%s, pid %d)", s.opts.IDEName, file, s.opts.PID)
}

// relativeTo is path relative to folder when it lies strictly inside it.
func relativeTo(path, folder string) (string, bool) {
	if path == "" {
		return "", false
	}
	rel, err := filepath.Rel(folder, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// realPaths resolves the symlinks of paths, as the other Neovims' lock files name
// their folders.
func realPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = history.RealPath(p)
	}
	return out
}
