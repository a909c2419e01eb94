package history

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/shell"
	"github.com/mcpdiff/mcpdiff/internal/udiff"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Check compares every file the history knows with its last recorded state and
// returns the ones that differ: changed outside mcpdiff since, or left before its
// change by a process killed between logging the change and writing it.
func (s *Store) Check() ([]Drift, error) {
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	return s.drifts(snap, nil)
}

// Review is List for people. It takes the store's lock, which first completes a
// decision a killed process left halfway, and lists while holding it, so no
// decision in progress is seen half done; and it reports in Listing.Drifts the
// files of the listed entries (every recorded file, without a filter) whose bytes
// differ from their recorded state. A store that cannot be locked (a read-only
// workspace) is listed without the lock. A foreign store is listed, with a warning
// that says so first, and neither locked nor compared with the files.
func (s *Store) Review(ctx context.Context, f Filter) (*Listing, error) {
	var notes []string
	foreign := s.Foreign()
	if foreign != nil && !errors.Is(foreign, ErrForeign) {
		return nil, foreign
	}
	if foreign != nil {
		notes = append(notes, foreign.Error())
	} else if unlock, err := s.lock(ctx); err == nil {
		defer unlock()
		notes = s.takeNotes()
	} else if s.files.present(planName) || s.files.present(legacyCleanup) {
		notes = append(notes, fmt.Sprintf("a decision was interrupted and cannot be completed now: %v; until it is, files may not match this list", err))
	}
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	if f.Conversation, err = snap.conversationNamed(f.Conversation); err != nil {
		return nil, err
	}
	out := list(snap, f)
	out.Warnings = append(notes, out.Warnings...)
	if foreign != nil {
		return out, nil // nothing is replayed from it, to compare with the files
	}
	var only map[string]bool
	if f != (Filter{}) {
		only = map[string]bool{}
		for _, e := range out.Entries {
			only[e.FilePath], only[e.from()] = true, true
		}
	}
	if out.Drifts, err = s.drifts(snap, only); err != nil {
		return nil, err
	}
	return out, nil
}

// Recheck is Check for a store unchanged since Review listed l: it compares the
// files with the recorded states that listing read, without reading the logs again.
func (s *Store) Recheck(l *Listing) ([]Drift, error) {
	if l.snap == nil {
		return s.Check()
	}
	return s.drifts(l.snap, nil)
}

// drifts compares the paths in only (every recorded path when nil) with their last
// recorded state: what the last step that touched each of them left there.
func (s *Store) drifts(snap *snapshot, only map[string]bool) ([]Drift, error) {
	last := lastStates(snap)
	paths := make([]string, 0, len(last))
	for p := range last {
		if _, err := s.relPath(p); err == nil && (only == nil || only[p]) { // a moved workspace's old paths cannot be checked
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	// Reading and hashing every file is most of the time `status` takes for the
	// check: it is spread over the cores.
	type result struct {
		same bool
		disk *onDisk
		err  error
	}
	results := make([]result, len(paths))
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), (len(paths)+15)/16)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(paths); i += workers {
				r := &results[i]
				r.same, r.disk, r.err = s.holdsRecorded(paths[i], last[paths[i]].exists, last[paths[i]].hash)
			}
		})
	}
	wg.Wait()
	var out []Drift
	for i, p := range paths {
		same, disk, err := results[i].same, results[i].disk, results[i].err
		if err != nil {
			return nil, err
		}
		if same {
			continue
		}
		var diff, nowIs string
		if disk == nil {
			nowIs = s.nowIs(p)
		}
		if R, err := s.recordedState(snap, p); err != nil {
			diff = fmt.Sprintf("(the recorded state of %s cannot be rebuilt: %v)\n", s.rel(p), err)
		} else if disk == nil {
			diff = fmt.Sprintf("%s is now %s, not a regular file\n", s.rel(p), cmp.Or(nowIs, "a folder, a symlink or a special file"))
		} else if disk.unread > 0 {
			diff = fmt.Sprintf("%s is now %d bytes, over the size limit of %d bytes: not compared line by line\n", s.rel(p), disk.unread, s.maxFile)
		} else {
			var before []byte
			if R.exists {
				before = R.content()
			}
			diff = udiff.Unified(s.relName(p, R.exists), s.relName(p, disk.exists), before, disk.content, 3)
		}
		out = append(out, Drift{Path: p, Diff: diff, Blocked: s.blockedFolder(p), NowIs: nowIs})
	}
	return out, nil
}

// nowIs names what is at path when it is there but not a regular file, else "".
func (s *Store) nowIs(path string) string {
	rel, err := s.relPath(path)
	if err != nil {
		return ""
	}
	if fi, err := s.workspace.Lstat(rel); err == nil && !fi.Mode().IsRegular() {
		return describeMode(fi.Mode())
	}
	return ""
}

// recorded is the state of a path the last step that touched it left.
type recorded struct {
	exists bool
	hash   string
}

// lastStates is the last recorded state of every path, from entries and rebuild
// markers taken in seq order (the order lineages uses).
func lastStates(snap *snapshot) map[string]recorded {
	out := map[string]recorded{}
	set := func(from, to string, exists bool, hash *string) {
		if from != to {
			out[from] = recorded{}
		}
		out[to] = recorded{exists: exists, hash: deref(hash)}
	}
	markers := snap.markers
	if !sort.SliceIsSorted(markers, func(i, j int) bool { return markers[i].Seq < markers[j].Seq }) {
		markers = append([]*Marker(nil), markers...)
		sort.SliceStable(markers, func(i, j int) bool { return markers[i].Seq < markers[j].Seq })
	}
	m := 0
	for _, e := range snap.entries {
		for ; m < len(markers) && markers[m].Seq < e.Seq; m++ {
			set(markers[m].FromPath, markers[m].FilePath, markers[m].HashAfter != nil, markers[m].HashAfter)
		}
		set(e.from(), e.FilePath, e.Operation != Delete, e.HashAfter)
	}
	for ; m < len(markers); m++ {
		set(markers[m].FromPath, markers[m].FilePath, markers[m].HashAfter != nil, markers[m].HashAfter)
	}
	return out
}

// holdsRecorded reports whether the file at path is in the recorded state (exists,
// with content of sha256 hash) and returns what is on disk (nil if it is not a
// regular file).
func (s *Store) holdsRecorded(path string, exists bool, hash string) (bool, *onDisk, error) {
	rel, err := s.relPath(path)
	if err != nil {
		return false, nil, err
	}
	fi, err := s.workspace.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, workspace.ErrNotDir):
		return !exists, &onDisk{}, nil // a folder on the way that is a file now: no file here either
	case errors.Is(err, workspace.ErrOutside), errors.Is(err, workspace.ErrSymlinkLoop):
		return false, nil, nil // a folder on the way is a symlink now: no file of the workspace here
	case err != nil:
		return false, nil, err
	case !fi.Mode().IsRegular():
		return false, nil, nil
	}
	if fi.Size() > s.maxFile {
		// Over the size limit (a log grown big, a sparse file): hashed as it is read,
		// never held in memory nor compared line by line.
		same := false
		if exists {
			h := sha256.New()
			if _, err := s.workspace.CopyFile(rel, h); err != nil {
				return false, nil, err
			}
			same = hex.EncodeToString(h.Sum(nil)) == hash
		}
		return same, &onDisk{exists: true, unread: fi.Size()}, nil
	}
	if !exists {
		b, _, err := s.workspace.ReadFile(rel, 0)
		return false, &onDisk{exists: true, content: b}, err
	}
	b, info, err := s.workspace.ReadFile(rel, 0)
	if err != nil {
		return false, nil, err
	}
	return hashBytes(b) == hash, &onDisk{exists: true, content: b, mode: info.Mode().Perm()}, nil
}

// Notices are what the readers of a history must be told besides its entries,
// worded once here for every place that shows them: `mcpdiff status` (on stderr),
// the review list in Neovim and :checkhealth mcpdiff.
type Notices struct {
	// Warnings are problems of the store: corrupted log lines skipped, a decision
	// that was interrupted.
	Warnings []string
	// Info are files changed outside mcpdiff since their last recorded state: not
	// a problem (the next agent edit records the change as the user's), but what
	// the history shows of them is not what they hold.
	Info []string
}

// Notices words what l found. Paths in the commands it suggests are relative to
// dir (the folder the user runs them in) when they lie under it.
func (s *Store) Notices(l *Listing, dir string) Notices {
	n := Notices{Warnings: append([]string(nil), l.Warnings...)}
	for _, d := range l.Drifts {
		n.Info = append(n.Info, s.DriftNote(d, dir))
	}
	return n
}

// blockedFolder is the first folder on the way to path (absolute, in the workspace)
// that is no longer a real folder, relative; "" when each is one, or is missing (a
// rebuild makes it). Asked only of files that changed outside mcpdiff.
func (s *Store) blockedFolder(path string) string {
	rel, err := s.relPath(path)
	if err != nil {
		return ""
	}
	folder := ""
	for _, name := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
		if name == "." {
			break
		}
		folder = filepath.Join(folder, name)
		fi, err := s.workspace.Lstat(folder)
		if err != nil {
			return ""
		}
		if !fi.IsDir() {
			return filepath.ToSlash(folder)
		}
	}
	return ""
}

// blockedNote says that a file whose folder blocked (relative) is no longer a folder
// can be neither restored nor recorded, and the ways out.
func blockedNote(blocked string) string {
	b := shell.Quote(blocked)
	return fmt.Sprintf("it can be neither restored nor recorded while %s is not a folder (it is a file or a symlink now): make %s a folder again, or leave the file", b, b)
}

// DriftNote says that the file of d was changed outside mcpdiff since its last
// recorded state, and the two ways out: keep the change, or discard it with
// `mcpdiff restore` (a command run in dir; it names the workspace when dir is
// outside it, as restore would not find the history from there). The name is
// quoted as in the command, so that no character of it acts on a terminal or
// splits the line.
func (s *Store) DriftNote(d Drift, dir string) string {
	if d.Blocked != "" {
		return fmt.Sprintf("%s was changed outside mcpdiff since its last recorded state; %s", shell.Quote(s.Rel(d.Path)), blockedNote(d.Blocked))
	}
	cmd := []string{"mcpdiff", "restore", "--file", d.Path}
	if r, ok := strings.CutPrefix(d.Path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator)); ok && dir != "" {
		cmd[3] = r
	}
	if rel, err := filepath.Rel(s.Workspace(), RealPath(dir)); dir != "" && (err != nil || !filepath.IsLocal(rel)) {
		cmd = append(cmd, "--workspace", s.Workspace())
	}
	if d.NowIs != "" { // restore rebuilds only a regular file
		return fmt.Sprintf("%s was changed outside mcpdiff since its last recorded state and is now %s. To keep it, do nothing. "+
			"To put the recorded file back, move it away, then run `%s` (it shows what it would write; add --yes to write it)",
			shell.Quote(s.Rel(d.Path)), d.NowIs, shell.Command(cmd...))
	}
	return fmt.Sprintf("%s was changed outside mcpdiff since its last recorded state. To keep the change, do nothing: "+
		"the next agent edit of it records the change as yours. To discard it, run `%s` (it shows what it would discard; add --yes to discard it)",
		shell.Quote(s.Rel(d.Path)), shell.Command(cmd...))
}
