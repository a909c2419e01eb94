// Package history is the edit history of a workspace: every change the file tools
// make (and every diff accepted in the editor) is recorded in
// <workspace>/.mcp/edit_history/, grouped by conversation, so that any edit can later
// be accepted or rejected alone. Rejecting edit k rebuilds the file from its
// checkpoint by replaying every other kept edit with line shifts handled (replay.go).
//
// Layout of the store:
//
//	FORMAT                          format version
//	identity.json                   the store's id, signed with the user's key (trust.go)
//	history.lock                    gofrs/flock lock taken by every writer
//	logs/<conv>.log                 JSON Lines, one Entry per recorded change
//	diffs/<conv>/<edit_id>.diff     unified diff of one change
//	checkpoints/<conv>/<key>.chkpt  a file's bytes when the conversation first touched it
//	rebuilds.log, rebuilds/<seq>.diff  what accept/reject wrote to disk (see Marker)
//	heads.log                       the last recorded state of each path (heads.go)
//	journal/                        a decision being carried out (journal.go)
//	aside/                          journals of plans this user did not sign, set aside
//	tmp/                            temp files, swept when the store is first locked
//	hooks/<tool call id>            a file just before a change made by Claude Code (before.go)
//	gitignore-warned                .mcp/.gitignore could not be written, and that was said
//
// A decision (accept, reject, cleanup) is all or nothing: it is staged in journal/,
// committed by writing journal/plan.json, and finished, or undone, by whichever
// process takes the store's lock next if this one is killed (journal.go).
//
// All of it is read and written through an *os.Root (storefiles.go): symlinks are
// followed only while they stay inside the store.
package history

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Dir is where a workspace keeps its store.
const Dir = ".mcp/edit_history"

// formatVersion is bumped on incompatible layout changes; a store written by a newer
// mcpdiff is refused rather than misread.
const formatVersion = 1

// lockTimeout bounds how long a writer waits for another process's lock.
var lockTimeout = 30 * time.Second

// ErrNoStore means no .mcp/edit_history was found.
var ErrNoStore = errors.New("no edit history found")

// Store is one workspace's edit history.
type Store struct {
	dir         string          // absolute path of .mcp/edit_history, for messages
	files       storeFiles      // the store's folder, all IO goes through it
	workspace   *workspace.Root // the workspace the recorded files live in
	mu          *sync.Mutex     // in-process half of the lock (a *Flock is not a mutex)
	maxFile     int64           // size limit when reading workspace files
	sweepOnce   sync.Once       // temp files of killed writers are removed on the first lock
	heads       *heads
	known       *knownFiles      // what this process learnt about the store's files
	notes       []string         // from recovering an interrupted decision, until taken
	blocks      *blockCache      // parsed diffs (replay.go)
	checkpoints *checkpointCache // the last checkpoint checked (agree.go)
	hashes      *hashStates      // SHA-256 states of big contents (hashes.go)
	trust       *trust           // what identity.json says (trust.go)
	// Folders the workspace was in before (from identity.json): paths recorded
	// under them are read as the current workspace's (localize).
	earlier *atomic.Pointer[[]string]
	// Time spent on the store's own checks since the lock was taken (Outcome.Checks).
	checking time.Duration
	guard    WriteGuard // asked before a decision writes users' files (restore.go)
}

// knownFiles remembers facts about the store's own files that only ever become true
// while the store exists, so each record does not have to ask the file system again.
// Only used with the lock held.
type knownFiles struct {
	dirs      map[string]bool  // folders that exist
	touched   map[string]bool  // conversation + path pairs that have a checkpoint
	lastIndex map[string]int   // conversation → last tool_call_index...
	logSize   map[string]int64 // ...valid while its log still has this size
}

func newKnownFiles() *knownFiles {
	return &knownFiles{dirs: map[string]bool{}, touched: map[string]bool{}, lastIndex: map[string]int{}, logSize: map[string]int64{}}
}

// store is shared per directory within a process, so caches stay right.
func newStore(files storeFiles, root *workspace.Root) *Store {
	mu, _ := processLocks.LoadOrStore(files.dir, &sync.Mutex{})
	s := &Store{dir: files.dir, files: files, workspace: root, mu: mu.(*sync.Mutex), maxFile: 64 << 20, heads: newHeads(files), known: newKnownFiles(),
		blocks: &blockCache{}, checkpoints: &checkpointCache{}, hashes: &hashStates{}, trust: &trust{}, earlier: &atomic.Pointer[[]string]{}}
	s.heads.localize = s.localize
	return s
}

// processLocks gives every store directory one mutex per process, so goroutines
// serialise before they contend for the flock.
var processLocks sync.Map // dir → *sync.Mutex

// Open opens (creating if needed) the store of the workspace folder root, to record
// into it: a store that is not this user's is refused (a *ForeignError), and nothing
// is written into it.
func Open(root *workspace.Root) (*Store, error) {
	files, err := openFiles(root, true)
	if err != nil {
		return nil, err
	}
	s := newStore(files, root)
	if err := s.claim(); err != nil {
		return nil, err
	}
	if err := s.checkFolders(); err != nil {
		return nil, err
	}
	for _, sub := range []string{"logs", "diffs", "checkpoints", "tmp"} {
		if err := files.root.MkdirAll(sub, 0o700); err != nil {
			return nil, files.fail("create", sub, err)
		}
	}
	if !files.exists("FORMAT") {
		if err := files.writeAtomic("FORMAT", []byte(formatLine())); err != nil {
			return nil, err
		}
	}
	s.ensureGitignore()
	return s, nil
}

// OpenExisting opens the store of root only if it already exists (the CLI never
// creates one). A foreign store is opened too, to be listed (see Foreign): its
// decisions and records are refused when they lock it.
func OpenExisting(root *workspace.Root) (*Store, error) {
	files, err := openFiles(root, false)
	if err != nil {
		return nil, err
	}
	return newStore(files, root), nil
}

// openFiles opens root's .mcp/edit_history as an *os.Root, and checks that this
// mcpdiff reads its format. A store reached through a symlink that leaves the
// workspace is refused: writing there would write outside it.
func openFiles(root *workspace.Root, create bool) (storeFiles, error) {
	dir := filepath.Join(root.Path(), filepath.FromSlash(Dir))
	// Nor may it be reached through a symlink inside the workspace (.mcp -> cache):
	// the tools keep out of .mcp/edit_history by that name only.
	for _, name := range []string{".mcp", Dir} {
		if fi, err := root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return storeFiles{}, fmt.Errorf("open the edit history in %s: %s is a symlink; the edit history must be a real folder (remove the link)", root.Path(), name)
		}
	}
	r, err := root.OpenDir(Dir, create)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return storeFiles{}, fmt.Errorf("%w in %s", ErrNoStore, root.Path())
	}
	if err != nil {
		return storeFiles{}, fmt.Errorf("open the edit history in %s: %w", root.Path(), err)
	}
	files := storeFiles{root: r, dir: dir}
	if err := checkFormat(files); err != nil {
		return storeFiles{}, err
	}
	files.spares = sparesOf(files)
	return files, nil
}

// Find walks up from dir to the nearest folder holding .mcp/edit_history, the way git
// finds .git, and returns that folder.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, filepath.FromSlash(Dir))); err == nil && fi.IsDir() && ownedByMe(fi) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w in %s or any parent folder (one is made by the first edit an agent makes through its hooks, the Neovim plugin or `mcpdiff serve`; pass --workspace DIR to choose another folder)", ErrNoStore, abs)
		}
	}
}

// StoreFolder is the workspace folder whose store records a change of abs (a path
// with its folders' symlinks resolved, see RealPath): the nearest folder above it
// that holds a store, else the innermost of folders that holds abs, else "".
func StoreFolder(abs string, folders []string) string {
	if found, err := Find(filepath.Dir(abs)); err == nil {
		return found
	}
	best := ""
	for _, f := range folders {
		f = RealPath(f)
		if (abs == f || strings.HasPrefix(abs, f+string(filepath.Separator))) && len(f) > len(best) {
			best = f
		}
	}
	return best
}

// OpenFolder opens (creating if needed) the store of the workspace folder dir.
func OpenFolder(dir string) (*Store, error) {
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	return Open(root)
}

// RealPath is path made absolute with the symlinks of its folders resolved, as far
// as they exist (a new file may go into folders not made yet). The last element is
// resolved too when it is a symlink to an existing file.
func RealPath(path string) string {
	path, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if p, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(p, rest)
		}
		if filepath.Dir(dir) == dir {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// KeepSpares makes this process keep empty files and folders ready for the store's
// writes (spares.go): for a process that records many edits.
func (s *Store) KeepSpares() { s.files.spares.keepUp() }

// TakeTemp puts an empty file at tmp/name in the store, from the spares, and
// reports whether it did: a workspace.Tx stages its writes there.
func (s *Store) TakeTemp(name string) bool { return s.files.spares.take("tmp/"+name, false) }

// Writable tells whether this process can create files in the store (a check for
// `mcpdiff health`: it creates one and removes it).
func (s *Store) Writable() bool { return s.files.writable() }

// Workspace is the workspace folder the store belongs to.
func (s *Store) Workspace() string { return s.workspace.Path() }

// SetMaxFileSize sets the size limit for workspace files read while rebuilding.
func (s *Store) SetMaxFileSize(n int64) { s.maxFile = n }

func formatLine() string { return "mcpdiff-edit-history " + strconv.Itoa(formatVersion) + "\n" }

// ownedByMe reports whether this user owns fi: a store another user planted in a
// shared parent folder (/tmp/.mcp) must not receive copies of our files.
func ownedByMe(fi fs.FileInfo) bool { return workspace.OwnedByMe(fi) }

// FormatVersion is the version a store's FORMAT file names ("mcpdiff-edit-history N");
// false for any other text.
func FormatVersion(text []byte) (int, bool) {
	f := strings.Fields(string(text))
	if len(f) != 2 || f[0] != "mcpdiff-edit-history" {
		return 0, false
	}
	v, err := strconv.Atoi(f[1])
	return v, err == nil
}

func checkFormat(files storeFiles) error {
	dir := files.dir
	b, err := files.readFile("FORMAT")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read edit history format: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] != "mcpdiff-edit-history" {
		return fmt.Errorf("%s/FORMAT is not an mcpdiff edit history (%q)", dir, strings.TrimSpace(string(b)))
	}
	v, ok := FormatVersion(b)
	if !ok {
		return fmt.Errorf("%s/FORMAT has a bad version %q", dir, f[1])
	}
	if v > formatVersion {
		return fmt.Errorf("the edit history in %s was written by a newer mcpdiff (format %d, this one reads %d); upgrade mcpdiff", dir, v, formatVersion)
	}
	return nil
}

// lock takes the store's process and file locks; the returned function releases them.
// Stale temp files of writers that crashed are removed while the lock is held.
func (s *Store) lock(ctx context.Context) (func(), error) {
	s.mu.Lock()
	s.checking = 0
	var id storeIdentity
	err := s.timeCheck(func() (err error) {
		id, err = s.signedIdentity()
		return err
	})
	if err == nil {
		err = s.checkFolders()
	}
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	// flock opens the lock by path; make sure that path is no symlink to elsewhere.
	if fi, err := s.files.root.Lstat("history.lock"); err == nil && !fi.Mode().IsRegular() {
		s.mu.Unlock()
		return nil, s.files.special("history.lock", fi.Mode())
	}
	fl := flock.New(filepath.Join(s.dir, "history.lock"), flock.SetPermissions(0o600))
	waitCtx, cancel := context.WithTimeout(ctx, lockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(waitCtx, 5*time.Millisecond)
	if err != nil && waitCtx.Err() == nil {
		s.mu.Unlock()
		return nil, s.files.fail("lock", "history.lock", err)
	}
	if !ok {
		s.mu.Unlock()
		// A caller that gave up (a client that cancelled its call) is told so, not
		// that another process held the lock for the whole time limit.
		if ctx.Err() != nil {
			return nil, fmt.Errorf("stopped waiting for the edit history's lock in %s: %w", s.dir, ctx.Err())
		}
		return nil, fmt.Errorf("the edit history in %s stayed locked by another mcpdiff process for %v; try again", s.dir, lockTimeout)
	}
	s.files.spares.begin()
	unlock := func() {
		s.heads.release()
		_ = fl.Unlock()
		s.files.spares.end()
		s.mu.Unlock()
	}
	if err := s.noteWorkspace(id); err != nil {
		unlock()
		return nil, err
	}
	s.ensureGitignore()
	// A decision a killed process left halfway is finished before anything else
	// reads or writes the store.
	if err := s.recover(); err != nil {
		unlock()
		return nil, err
	}
	s.sweepOnce.Do(s.sweepTemp)
	return unlock, nil
}

// Quiet waits until no process holds the store's lock: a change that was logged is
// then on disk too (writers log first and write the file before unlocking). It takes
// the lock shared, as a reader, and does none of a writer's chores (a writer's first
// lock sweeps tmp/, where another process may be staging a file without the lock).
func (s *Store) Quiet(ctx context.Context) error {
	if fi, err := s.files.root.Lstat("history.lock"); err != nil || !fi.Mode().IsRegular() {
		return nil // nobody ever wrote, or not a lock mcpdiff made
	}
	fl := flock.New(filepath.Join(s.dir, "history.lock"))
	ok, err := fl.TryRLockContext(ctx, 5*time.Millisecond)
	if err != nil || !ok {
		return fmt.Errorf("wait for the edit history in %s: %w", s.dir, errors.Join(err, ctx.Err()))
	}
	return fl.Unlock()
}

// sweepTemp removes temp files left by a writer that was killed, and what a decision
// killed before its commit staged. Only called with the lock held: other writers
// stage their files only while holding it.
func (s *Store) sweepTemp() {
	names, _ := s.files.readDir("tmp")
	for _, n := range names {
		_ = s.files.root.Remove("tmp/" + n.Name())
	}
	if !s.files.exists(planName) {
		_ = s.files.root.RemoveAll(journalDir)
	}
}

// takeNotes returns, once, what the lock's recovery had to say: a decision it
// completed or undid, and files it found changed and left alone. Called with the
// lock held.
func (s *Store) takeNotes() []string {
	n := s.notes
	s.notes = nil
	return n
}

// TakeNotes returns, once, what taking the store's lock found to say since it was
// last asked: a decision an interrupted process left, completed or undone (Decide
// and Review return theirs themselves).
func (s *Store) TakeNotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeNotes()
}

// lastSeq is the newest sequence number this process handed out.
var lastSeq atomic.Int64

// nextSeq returns a sequence number greater than every step recorded for the given
// paths and than any this process handed out. Steps are ordered per file (a file's
// steps all touch its path, so its head bounds them); the clock only makes numbers of
// unrelated files roughly chronological. Called with the lock held.
func (s *Store) nextSeq(paths ...string) (int64, error) {
	floor := lastSeq.Load() + 1
	for _, p := range paths {
		if p == "" {
			continue
		}
		h, err := s.heads.get(p)
		if err != nil {
			return 0, err
		}
		if h != nil && h.Seq >= floor {
			floor = h.Seq + 1
		}
	}
	n := max(time.Now().UnixNano(), floor)
	for {
		old := lastSeq.Load()
		if n <= old {
			n = old + 1
		}
		if lastSeq.CompareAndSwap(old, n) {
			return n, nil
		}
	}
}

// writeNewFile writes a diff or checkpoint (see storeFiles.writeNew), creating its
// folder the first time this process writes there.
func (s *Store) writeNewFile(name string, data []byte) error {
	folder := path.Dir(name)
	if err := s.files.writeNew(name, data, !s.known.dirs[folder]); err != nil {
		return err
	}
	s.known.dirs[folder] = true
	return nil
}

// newID returns a random RFC 4122 version 4 UUID.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// NewConversationID returns a fresh id of the form conv_<epoch_ms>_<hex>.
func NewConversationID() string { return newPrefixedID("conv") }

func newPrefixedID(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s_%d_%s", prefix, time.Now().UnixMilli(), hex.EncodeToString(b[:]))
}

// ValidConversationID reports whether id can name a conversation: it must be safe as a
// file name in logs/ and diffs/.
func ValidConversationID(id string) bool {
	if id == "" || len(id) > 128 || id == "rebuilds" {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return !strings.HasPrefix(id, ".")
}

// equalLines reports whether two line slices are equal.
func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func joinLines(lines []string) []byte {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	buf := make([]byte, 0, n)
	for _, l := range lines {
		buf = append(buf, l...)
	}
	return buf
}
