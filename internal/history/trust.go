package history

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/userkey"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// A repository can arrive with a .mcp/edit_history in it. Its logs name files and its
// checkpoints hold bytes: a decision on it would write them into the user's files.
// So a store counts as the user's only when mcpdiff made it for them: when it creates
// a store it gives it a random id and signs the id with the user's key
// (internal/userkey), which no repository carries. A store without that signature is
// foreign: it can be listed and shown, but nothing is recorded into it, decided on it
// or replayed from it until the user adopts it (Adopt, `mcpdiff adopt`), which signs
// it. Stores written by mcpdiff 0.2.0, before signatures, are foreign too.
//
// The signature covers the id only, so a copy of the workspace (cp -a, a backup, a
// move) stays the user's. The id also binds a decision's plan to its store
// (journal.go). The history records absolute paths; identity.json lists every folder
// the store's workspace was found in, and paths under an earlier one are read as the
// same paths under the current one, so that a copy acts on itself, never on the
// original.

// identityName is the store's signed identity.
const identityName = "identity.json"

// signPurposeStore is what a store's signature signs, with its id.
const signPurposeStore = "mcpdiff edit history"

// storeIdentity is identity.json.
type storeIdentity struct {
	ID        string `json:"id"`
	Signature string `json:"signature"`
	// Workspaces are the folders the store's workspace was found in, oldest first: the
	// paths recorded under each are read as under the current one.
	Workspaces []string `json:"workspaces"`
}

// ErrForeign means the store was not made for this user by mcpdiff (see ForeignError).
var ErrForeign = errors.New("foreign edit history")

// ForeignError is a store that is not this user's. It says why, and the ways out.
type ForeignError struct {
	Workspace string
	Reason    string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("the edit history in %s is not yours: %s; mcpdiff does not record into it, decide on it or replay from it "+
		"until you check what it holds and run `mcpdiff adopt` in that folder, or remove its .mcp folder", e.Workspace, e.Reason)
}

func (e *ForeignError) Unwrap() error { return ErrForeign }

// Reasons a store is foreign.
const (
	reasonUnsigned = "it has no signature (it was written by mcpdiff 0.2.0 or earlier, before stores were signed, or it came with the repository)"
	reasonNotMine  = "its signature was not made with your key %s (it was made by another user, on another machine, or planted)"
	reasonNoKey    = "it is signed, but you have no key yet (%s): no store was ever made for you on this machine"
)

// trust is what the store's identity said when it was last read.
type trust struct {
	mu   sync.Mutex
	seen workspace.Stamp // identity.json as read, zero: not read yet or missing
	err  error           // nil: the store is this user's
	id   storeIdentity
}

// Foreign returns nil when the store is this user's, else a *ForeignError. It reads
// identity.json again only when the file changed since it was last read (a stat).
func (s *Store) Foreign() error {
	_, err := s.signedIdentity()
	return err
}

// signedIdentity returns the store's identity when the store is this user's.
func (s *Store) signedIdentity() (storeIdentity, error) {
	t := s.trust
	t.mu.Lock()
	defer t.mu.Unlock()
	fi, err := s.files.root.Lstat(identityName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.seen, t.err = workspace.Stamp{}, s.foreign(reasonUnsigned)
		return storeIdentity{}, t.err
	case err != nil:
		return storeIdentity{}, s.files.fail("read", identityName, err)
	case workspace.StampOf(fi).UnchangedSince(t.seen) && t.seen.Exists:
		return t.id, t.err
	}
	t.seen, t.id, t.err = workspace.StampOf(fi), storeIdentity{}, nil
	b, err := s.files.readFile(identityName)
	if err != nil {
		t.err = s.foreign("its " + identityName + " cannot be read (" + err.Error() + ")")
		return t.id, t.err
	}
	var id storeIdentity
	if json.Unmarshal(b, &id) != nil || id.ID == "" {
		t.err = s.foreign("its " + identityName + " is damaged")
		return t.id, t.err
	}
	key, err := userkey.Load(false)
	switch {
	case errors.Is(err, userkey.ErrNoKey):
		t.err = s.foreign(fmt.Sprintf(reasonNoKey, userkey.Path()))
	case err != nil:
		t.err = s.foreign(err.Error())
	case !key.Verify(id.Signature, signPurposeStore, []byte(id.ID)):
		t.err = s.foreign(fmt.Sprintf(reasonNotMine, userkey.Path()))
	default:
		t.id = id
		s.setWorkspaces(id.Workspaces)
	}
	return t.id, t.err
}

// replayable returns nil when pending changes may be read from the store: it is this
// user's. A store another process is making at this moment (it holds only what Open
// makes, identity.json not written yet) is reported empty instead of foreign, so
// that a reader racing its creation does not call it "not yours"; it has nothing to
// replay either way. Listings still warn about it (List, Review).
func (s *Store) replayable() (empty bool, err error) {
	err = s.Foreign()
	if errors.Is(err, ErrForeign) && !s.files.exists(identityName) && s.fresh() {
		return true, nil
	}
	return false, err
}

func (s *Store) foreign(reason string) error {
	return &ForeignError{Workspace: s.workspace.Path(), Reason: reason}
}

// claim makes a store Open found this user's: a new (empty) one is signed; one that
// holds anything already must be signed for this user. Nothing is written into a
// foreign store.
func (s *Store) claim() error {
	if s.files.exists(identityName) {
		return s.Foreign()
	}
	if !s.fresh() {
		// A process that makes a store signs it before it writes anything else into
		// it, so one that did so since the look above has left its identity.
		if s.files.exists(identityName) {
			return s.Foreign()
		}
		return s.foreign(reasonUnsigned)
	}
	return s.sign(false)
}

// fresh reports whether the store holds nothing but what Open makes: a store that
// is being created by another process at this moment, or a planted empty folder.
func (s *Store) fresh() bool {
	names, err := s.files.readDir(".")
	if err != nil {
		return false
	}
	for _, n := range names {
		switch n.Name() {
		case "FORMAT", "history.lock", "tmp", spareDir:
			// never trusted for their content
		case "logs", "diffs", "checkpoints", beforeDir:
			inside, err := s.files.readDir(n.Name())
			if err != nil || len(inside) > 0 || !n.IsDir() {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// sign gives the store a new id signed with the user's key (made if it has none).
// With replace it takes the place of an identity the store has (Adopt); without, an
// identity another process wrote meanwhile wins, and must be this user's.
func (s *Store) sign(replace bool) error {
	key, err := userkey.Load(true)
	if err != nil {
		return fmt.Errorf("sign the edit history in %s: %w", s.workspace.Path(), err)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := storeIdentity{ID: hex.EncodeToString(b[:]), Workspaces: []string{s.workspace.Path()}}
	id.Signature = key.Sign(signPurposeStore, []byte(id.ID))
	data, err := json.Marshal(id)
	if err != nil {
		return err
	}
	if replace {
		err = s.files.writeAtomic(identityName, append(data, '\n'))
	} else {
		err = s.files.writeNoReplace(identityName, append(data, '\n'))
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return s.Foreign()
}

// noteWorkspace adds the current workspace folder to the identity's list when the
// store was copied or moved there, so that the paths it records from now on are
// read as this folder's wherever the store goes next. Called with the lock held.
func (s *Store) noteWorkspace(id storeIdentity) error {
	if slices.Contains(id.Workspaces, s.workspace.Path()) {
		return nil
	}
	id.Workspaces = append(id.Workspaces, s.workspace.Path())
	data, err := json.Marshal(id)
	if err != nil {
		return err
	}
	if err := s.files.writeAtomic(identityName, append(data, '\n')); err != nil {
		return err
	}
	return s.Foreign()
}

// setWorkspaces sets the folders whose paths are read as the current workspace's.
func (s *Store) setWorkspaces(ws []string) {
	var earlier []string
	for _, w := range ws {
		if w != s.workspace.Path() && filepath.IsAbs(w) && filepath.Clean(w) == w && w != string(filepath.Separator) {
			earlier = append(earlier, w)
		}
	}
	// The longest first: a folder inside another that the workspace was also in.
	slices.SortFunc(earlier, func(a, b string) int { return len(b) - len(a) })
	s.earlier.Store(&earlier)
}

// localize is a recorded path as it is in the current workspace: a path under a
// folder the workspace was in before (the store was copied or moved) is taken
// relative to it. Anything else is returned as it is.
func (s *Store) localize(p string) string {
	earlier := s.earlier.Load()
	if earlier == nil || len(*earlier) == 0 {
		return p
	}
	cur := s.workspace.Path()
	if strings.HasPrefix(p, cur+string(filepath.Separator)) {
		return p
	}
	for _, w := range *earlier {
		if rest, ok := strings.CutPrefix(p, w+string(filepath.Separator)); ok {
			return cur + string(filepath.Separator) + rest
		}
	}
	return p
}

// localizeEntry applies localize to an entry's paths; an entry it changes is no
// longer written as its log line.
func (s *Store) localizeEntry(e *Entry) {
	if p := s.localize(e.FilePath); p != e.FilePath {
		e.FilePath, e.raw = p, ""
	}
	if e.SourcePath != nil {
		if p := s.localize(*e.SourcePath); p != *e.SourcePath {
			e.SourcePath, e.raw = &p, ""
		}
	}
}

// Adopt makes a foreign store this user's: it is signed as if mcpdiff had made it
// here. The caller shows the user what it holds first (Inspect). A plan of a
// decision left in it is set aside, unapplied, by the next command.
func (s *Store) Adopt() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sign(true)
}

// Inspection is what a store holds, for the user to look at before adopting it.
type Inspection struct {
	Entries       int
	Conversations []string
	Files         []string // relative to the workspace, sorted
	Invalid       []string // entries no decision acts on, and why
	Inconsistent  []string // files whose history does not agree with itself, and why
	Warnings      []string // lines and files that could not be read
	Plan          bool     // it holds the plan of a decision (set aside unless it is this user's)
}

// Inspect says what the store holds, reading it only: nothing is written, and it
// works on a foreign store.
func (s *Store) Inspect() (*Inspection, error) {
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	in := &Inspection{Entries: len(snap.entries) + len(snap.invalid), Warnings: snap.warnings, Plan: s.files.exists(planName)}
	convs, files := map[string]bool{}, map[string]bool{}
	for _, e := range append(append([]*Entry(nil), snap.entries...), snap.invalid...) {
		convs[e.ConversationID] = true
		files[s.rel(e.FilePath)] = true
		if e.SourcePath != nil {
			files[s.rel(*e.SourcePath)] = true
		}
		if e.invalid != "" {
			in.Invalid = append(in.Invalid, fmt.Sprintf("edit %s: %s", short(e.EditID), e.invalid))
		}
	}
	in.Conversations = slices.Sorted(maps.Keys(convs))
	in.Files = slices.Sorted(maps.Keys(files))
	all, _ := lineages(snap)
	for _, l := range all {
		p, err := s.replay(l, snap, currentStatus)
		if err == nil {
			err = s.stepsAgree(l, snap, p)
		}
		if err != nil {
			in.Inconsistent = append(in.Inconsistent, err.Error())
		}
	}
	return in, nil
}
