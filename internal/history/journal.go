package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/userkey"
)

// A decision (accept, reject, cleanup) changes several files at once: users'
// files, conversation logs, rebuilds.log, heads.log. It goes through an intent
// journal so that it is all or nothing, whatever instant the process is killed at
// and whatever write fails:
//
//  1. Stage. Everything the decision writes goes into journal/ first: the new
//     content of each file it replaces (users' files and store files alike), and
//     what it replaces, as a hard link (a copy where links are not allowed).
//     Every write that needs disk space happens here, except the few lines
//     appended to rebuilds.log and heads.log; a failure changes nothing.
//  2. Commit. journal/plan.json (the plan) is written and renamed into place.
//  3. Apply. The lines are appended, then each file is put in place: its staged
//     content is hard linked to a fresh name that is renamed over the file, so the
//     staged copy stays for a retry. Then the plan and the journal are removed.
//
// A process killed after the commit leaves the plan behind, and whichever mcpdiff
// process takes the store's lock next rolls it forward (Store.lock), wherever the
// workspace is then: the plan names workspace files relative to the workspace, and
// is signed with the user's key over the store's id and its content, so a copy of
// the workspace completes it in the copy. A plan without that signature (planted in
// a cloned repository, or from another store or user) is set aside unapplied, in
// aside/, and the store stays usable. Every step
// can be repeated: a user's file already at its new content is skipped, one still
// at the content the decision saw is replaced, and one in any other state (changed
// by someone since) is left alone and reported. If a step fails, the steps applied
// are undone the same way, from the staged copies, and the error names the path
// that failed. Nothing is fsynced: the journal protects against the process being
// killed, not against a power cut.

const (
	journalDir = "journal"
	planName   = journalDir + "/plan.json"
	asideDir   = "aside" // journals of plans set aside
)

// signPurposePlan is what a plan's signature signs, with the store's id and the plan.
const signPurposePlan = "mcpdiff decision plan"

// planFile is journal/plan.json: a plan, signed for one store.
type planFile struct {
	Store     string          `json:"store"` // the id of the store it was written for
	Plan      json.RawMessage `json:"plan"`
	Signature string          `json:"signature"` // by the user's key, over Store and Plan
}

// plan is what a decision changes.
type plan struct {
	What    string     `json:"what"` // what the decision was, for messages
	Appends []appendOp `json:"appends,omitempty"`
	Puts    []putOp    `json:"puts,omitempty"`
	// Cleanup only: what readers ignore until it is done, and the store files and
	// folders removed last (a removal cannot be undone, so nothing fails after it).
	Drop    *dropSet `json:"drop,omitempty"`
	Removes []string `json:"removes,omitempty"`
}

// appendOp appends lines to a store file that had Offset bytes.
type appendOp struct {
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Data   string `json:"data"`
}

// putOp replaces one file, of the workspace (Path) or of the store (Store).
type putOp struct {
	Path  string `json:"path,omitempty"`  // relative to the workspace
	Store string `json:"store,omitempty"` // relative to the store
	New   string `json:"new,omitempty"`   // journal file with the new content; "" removes the file
	Old   string `json:"old,omitempty"`   // journal file with the content replaced; "" if there was none
	// A workspace file is checked before it is touched, since anyone may change it:
	// the sha256 of the content replaced and of the new one ("" for no file).
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// dropSet is what a cleanup drops: conversations and rebuild markers (by seq).
type dropSet struct {
	Conversations []string       `json:"conversations"`
	Markers       map[int64]bool `json:"markers"`
}

func (d *dropSet) has(conv string) bool {
	if d == nil {
		return false
	}
	for _, c := range d.Conversations {
		if c == conv {
			return true
		}
	}
	return false
}

// journal builds a plan and what it stages.
type journal struct {
	s       *Store
	p       plan
	stage   []stagedFile
	appends map[string]int // store file → index in p.Appends
}

// stagedFile is a journal file to write before the commit.
type stagedFile struct {
	name string
	what string // for messages: "the new content of a.txt"
	data []byte
	mode fs.FileMode
	// A store file, or a workspace file (absolute), to hard link instead of copying
	// data, when the file system allows: no space needed. The file it links is
	// replaced by rename, never written in place, so the link keeps its content.
	link, linkFile string
}

func (s *Store) newJournal(what string) *journal {
	return &journal{s: s, p: plan{What: what}, appends: map[string]int{}}
}

func (j *journal) stageFile(f stagedFile) string {
	f.name = fmt.Sprintf("%s/%d", journalDir, len(j.stage))
	j.stage = append(j.stage, f)
	return f.name
}

// putFile replaces the workspace file path: old is what is there now (nil: none),
// new what goes there (nil: the file is removed), with mode.
func (j *journal) putFile(path string, old, new *[]byte, oldMode, mode fs.FileMode) {
	rel := j.s.rel(path)
	op := putOp{Path: rel}
	if old != nil {
		op.Before = hashBytes(*old)
		op.Old = j.stageFile(stagedFile{what: "a copy of " + rel, data: *old, mode: oldMode, linkFile: path})
	}
	if new != nil {
		op.After = hashBytes(*new)
		op.New = j.stageFile(stagedFile{what: "the new content of " + rel, data: *new, mode: mode})
	}
	j.p.Puts = append(j.p.Puts, op)
}

// putStore replaces the store file name (old: its content now, nil if none) with new.
func (j *journal) putStore(name string, old *[]byte, new []byte) {
	op := putOp{Store: name}
	if old != nil {
		op.Old = j.stageFile(stagedFile{what: "a copy of " + name, data: *old, mode: 0o600, link: name})
	}
	op.New = j.stageFile(stagedFile{what: "the new " + name, data: new, mode: 0o600})
	j.p.Puts = append(j.p.Puts, op)
}

// appendTo adds lines to append to the store file name. A torn last line a killed
// writer left there is cut off first (as every appender does).
func (j *journal) appendTo(name string, data []byte) error {
	if i, ok := j.appends[name]; ok {
		j.p.Appends[i].Data += string(data)
		return nil
	}
	offset, err := j.s.files.repairTail(name)
	if err != nil {
		return err
	}
	j.appends[name] = len(j.p.Appends)
	j.p.Appends = append(j.p.Appends, appendOp{Name: name, Offset: offset, Data: string(data)})
	return nil
}

func (j *journal) empty() bool {
	return len(j.p.Appends) == 0 && len(j.p.Puts) == 0 && len(j.p.Removes) == 0
}

// errNoUndo marks a failure after a removal had begun: the plan is finished later,
// not undone.
var errNoUndo = errors.New("cannot be undone")

// commit stages, commits and applies the plan (see the top of this file). On a
// failure, nothing is left changed unless the error says otherwise. It returns notes
// on files it found changed by someone else and left alone. Called with the lock held.
func (j *journal) commit() (notes []string, err error) {
	if j.empty() {
		return nil, nil
	}
	defer j.s.forgetCaches()
	if err := j.prepare(); err != nil {
		return nil, err
	}
	// The decision is committed: from here on it is finished, or undone.
	notes, err = j.s.forward(&j.p)
	if err != nil {
		return notes, j.s.undo(&j.p, err)
	}
	return notes, j.s.closeJournal()
}

// prepare stages the plan's files and writes the plan: its commit point.
func (j *journal) prepare() (err error) {
	s := j.s
	if err := s.clearJournal(); err != nil {
		return fmt.Errorf("%w; nothing was changed", err)
	}
	for _, f := range j.stage {
		if err := s.writeStaged(f); err != nil {
			_ = s.clearJournal()
			return fmt.Errorf("staging %s: %w; nothing was changed", f.what, err)
		}
	}
	b, err := json.Marshal(&j.p)
	if err == nil {
		err = s.timeCheck(func() (err error) {
			b, err = s.signPlan(b)
			return err
		})
	}
	if err == nil {
		err = s.files.writeNew(journalDir+"/plan.tmp", b, false)
	}
	if err == nil {
		if err = s.files.root.Rename(journalDir+"/plan.tmp", planName); err != nil {
			err = s.files.fail("write", planName, err)
		}
	}
	if err != nil {
		_ = s.clearJournal()
		return fmt.Errorf("%w; nothing was changed", err)
	}
	return nil
}

// undo takes back a plan whose application failed with cause, and says so.
func (s *Store) undo(p *plan, cause error) error {
	if errors.Is(cause, errNoUndo) {
		return fmt.Errorf("%w; the next mcpdiff command to lock the edit history finishes it", cause)
	}
	if _, err := s.backward(p); err != nil {
		return fmt.Errorf("%w; undoing the %s failed too (%v): the next mcpdiff command to lock the edit history completes it", cause, p.What, err)
	}
	if err := s.closeJournal(); err != nil {
		return fmt.Errorf("%w; the %s was undone, but %v", cause, p.What, err)
	}
	return fmt.Errorf("%w; the %s was undone, nothing was changed", cause, p.What)
}

// recover rolls forward a plan a killed process left, or undoes it if a step fails
// now. A plan this user did not write for this store is set aside. Called with the
// lock held, before anything else reads the store.
func (s *Store) recover() error {
	p, why, err := s.readPlan()
	if why != "" {
		return s.setAside(why)
	}
	if err != nil || p == nil {
		if err == nil {
			err = s.recoverLegacyCleanup()
		}
		return err
	}
	defer s.forgetCaches()
	notes, err := s.forward(p)
	if err != nil {
		err = s.undo(p, err)
		s.notes = append(s.notes, fmt.Sprintf("an interrupted %s could not be completed: %v", p.What, err))
		if errors.Is(err, errNoUndo) || s.files.exists(planName) {
			return fmt.Errorf("an interrupted %s could not be completed: %w", p.What, err)
		}
		return nil
	}
	s.notes = append(append(s.notes, "completed an interrupted "+p.What), notes...)
	return s.closeJournal()
}

// forward applies p: the new store files (nothing refers to them yet), the lines
// appended (which may refer to them), the store files replaced, the workspace files,
// then the removals. At no point does a line of the store name a file that is not
// there.
func (s *Store) forward(p *plan) (notes []string, err error) {
	for i := range p.Puts {
		if op := &p.Puts[i]; op.newStoreFile() {
			if notes, err = s.put(op, true, notes); err != nil {
				return notes, err
			}
		}
	}
	for _, a := range p.Appends {
		if err := s.files.writeAt(a.Name, a.Offset, []byte(a.Data)); err != nil {
			return notes, err
		}
	}
	for _, workspaceFiles := range []bool{false, true} {
		for i := range p.Puts {
			if op := &p.Puts[i]; !op.newStoreFile() && (op.Store == "") == workspaceFiles {
				if notes, err = s.put(op, true, notes); err != nil {
					return notes, err
				}
			}
		}
	}
	for _, name := range p.Removes {
		if err := s.files.root.RemoveAll(name); err != nil {
			return notes, fmt.Errorf("%w: %w", s.files.fail("remove", name, err), errNoUndo)
		}
	}
	return notes, nil
}

// backward takes back what forward applied of p (all of it may be in place, or
// none), in the opposite order.
func (s *Store) backward(p *plan) (notes []string, err error) {
	for _, workspaceFiles := range []bool{true, false} {
		for i := len(p.Puts) - 1; i >= 0; i-- {
			if op := &p.Puts[i]; !op.newStoreFile() && (op.Store == "") == workspaceFiles {
				if notes, err = s.put(op, false, notes); err != nil {
					return notes, err
				}
			}
		}
	}
	for _, a := range p.Appends {
		if err := s.files.cutBack(a.Name, a.Offset); err != nil {
			return notes, err
		}
	}
	for i := len(p.Puts) - 1; i >= 0; i-- {
		if op := &p.Puts[i]; op.newStoreFile() {
			if notes, err = s.put(op, false, notes); err != nil {
				return notes, err
			}
		}
	}
	return notes, nil
}

// newStoreFile reports whether op creates a file of the store (a rebuild's diff, a
// checkpoint) rather than replacing one.
func (op *putOp) newStoreFile() bool { return op.Store != "" && op.Old == "" }

// put carries out op forward (the new content) or backward (the old one), adding
// to notes what it found changed by someone else.
func (s *Store) put(op *putOp, forward bool, notes []string) ([]string, error) {
	src, from, to := op.New, op.Before, op.After
	if !forward {
		src, from, to = op.Old, op.After, op.Before
	}
	if op.Store != "" {
		return notes, s.installStore(src, op.Store)
	}
	note, err := s.installFile(op.Path, from, to, src)
	if note != "" {
		notes = append(notes, note)
	}
	return notes, err
}

// installStore puts the journal file src at the store file name; with no src, name
// is removed. Nobody else writes to the store while the lock is held, so doing it
// again is harmless.
func (s *Store) installStore(src, name string) error {
	if src == "" {
		if err := s.files.root.Remove(name); err != nil && !gone(err) {
			return s.files.fail("remove", name, err)
		}
		return nil
	}
	inst, err := s.files.linkCopy(src)
	if err != nil {
		return err
	}
	if err := s.files.mkdirs(name); err != nil {
		return err
	}
	if err := s.files.root.Rename(inst, name); err != nil {
		_ = s.files.root.Remove(inst)
		return s.files.fail("write", name, err)
	}
	return nil
}

// installFile moves the workspace file rel from the state with hash from to the
// one with hash to (the content of the journal file src; "" for no file). A file
// already there is skipped; one in neither state is left alone, and the note says
// so.
func (s *Store) installFile(rel, from, to, src string) (note string, err error) {
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("the plan of the decision names %q, which is not a path inside the workspace", rel)
	}
	if why := s.writeOffLimits(rel); why != "" {
		return "", fmt.Errorf("the plan of the decision names %s: %s", rel, why)
	}
	now, err := s.hashOnDisk(rel)
	if err != nil {
		return "", err
	}
	switch now {
	case to:
		return "", nil
	case from:
	default:
		return fmt.Sprintf("%s was changed by someone else meanwhile and was left as it is", filepath.ToSlash(rel)), nil
	}
	if src == "" {
		if err := s.workspace.Remove(rel); err != nil && !gone(err) {
			return "", err
		}
		return "", nil
	}
	inst, err := s.files.linkCopy(src)
	if err != nil {
		return "", err
	}
	if err := s.workspace.Install(filepath.Join(filepath.FromSlash(Dir), filepath.FromSlash(inst)), rel); err != nil {
		_ = s.files.root.Remove(inst)
		return "", err
	}
	return "", nil
}

// hashOnDisk is the sha256 of the workspace file rel, "" if there is none, or a
// description of what is there when it is not a regular file.
func (s *Store) hashOnDisk(rel string) (string, error) {
	fi, err := s.workspace.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "not a regular file: " + fi.Mode().Type().String(), nil
	}
	b, _, err := s.workspace.ReadFile(rel, 0)
	if err != nil {
		return "", err
	}
	return hashBytes(b), nil
}

// gone reports whether err says there is no file to remove.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// clearJournal empties the journal for a new decision (it holds no plan).
func (s *Store) clearJournal() error {
	if err := s.files.root.RemoveAll(journalDir); err != nil {
		return s.files.fail("clear", journalDir, err)
	}
	if err := s.files.root.Mkdir(journalDir, 0o700); err != nil {
		return s.files.fail("create", journalDir, err)
	}
	return nil
}

// closeJournal ends a decision: the plan goes first (that is the moment it is
// done), then what it staged.
func (s *Store) closeJournal() error {
	if err := s.files.root.Remove(planName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.files.fail("remove", planName, err)
	}
	_ = s.files.root.RemoveAll(journalDir) // leftovers are swept with the next decision
	return nil
}

// forgetCaches drops what this process remembered of files a plan rewrote.
func (s *Store) forgetCaches() {
	s.heads.invalidate()
	*s.known = *newKnownFiles()
}

// signPlan is the content of journal/plan.json for a plan (its JSON): a planFile,
// the plan signed for this store.
func (s *Store) signPlan(body []byte) ([]byte, error) {
	id, err := s.signedIdentity()
	if err != nil {
		return nil, err
	}
	key, err := userkey.Load(false)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(planFile{Store: id.ID, Signature: key.Sign(signPurposePlan, []byte(id.ID), body)})
	if err != nil {
		return nil, err
	}
	// The plan goes in as it is (json.Marshal would scan it once more): {"store":…,
	// "plan":null,"signature":…} with body in place of null.
	return bytes.Replace(head, []byte(`"plan":null`), append([]byte(`"plan":`), body...), 1), nil
}

// readPlan reads journal/plan.json (nil when there is none). A plan that is not
// this user's for this store is not returned: why says what it is instead, and it
// must be set aside. A plan that cannot be read at all is an error, and stays.
func (s *Store) readPlan() (p *plan, why string, err error) {
	b, err := s.files.readFile(planName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", nil
	case errors.Is(err, errSpecial):
		return nil, "it is not a file", nil
	case err != nil:
		return nil, "", fmt.Errorf("%w (the plan of an interrupted decision); make it readable, then try again", err)
	}
	var pf planFile
	if json.Unmarshal(b, &pf) != nil || pf.Store == "" || pf.Signature == "" {
		return nil, "it is not a signed plan", nil
	}
	id, err := s.signedIdentity()
	if err != nil {
		return nil, "", err
	}
	if pf.Store != id.ID {
		return nil, "it was written for another edit history", nil
	}
	key, err := userkey.Load(false)
	if err != nil || !key.Verify(pf.Signature, signPurposePlan, []byte(pf.Store), pf.Plan) {
		return nil, "its signature was not made with your key", nil
	}
	p = &plan{}
	if err := json.Unmarshal(pf.Plan, p); err != nil {
		return nil, "it is damaged", nil
	}
	return p, "", nil
}

// setAside moves the journal of a plan that must not be applied into aside/, where
// it stays to be looked at, and says so.
func (s *Store) setAside(why string) error {
	name := asideDir + "/journal-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := s.files.root.MkdirAll(asideDir, 0o700); err != nil {
		return s.files.fail("create", asideDir, err)
	}
	if err := s.files.root.Rename(journalDir, name); err != nil {
		return s.files.fail("set aside", journalDir, err)
	}
	s.notes = append(s.notes, fmt.Sprintf("set aside %s unapplied: %s, so mcpdiff did not write it for this edit history "+
		"(a repository may have brought it); it is kept in %s", s.files.abs(planName), why, s.files.abs(name)))
	return nil
}

// pendingDrop is what an unfinished cleanup drops (nil when none is pending).
// Readers ignore it; they take no lock, so they may run while a cleanup is applied.
// Only a plan of this store counts (see readPlan).
func (s *Store) pendingDrop() *dropSet {
	if !s.files.exists(planName) {
		return nil
	}
	p, _, err := s.readPlan()
	if p == nil || err != nil {
		return nil
	}
	return p.Drop
}

// writeStaged writes one journal file: a hard link when it can, else a copy.
func (s *Store) writeStaged(sf stagedFile) error {
	if sf.link != "" && s.files.root.Link(sf.link, sf.name) == nil {
		return nil
	}
	if rel, err := s.relPath(sf.linkFile); sf.linkFile != "" && err == nil &&
		s.workspace.LinkFile(rel, filepath.Join(filepath.FromSlash(Dir), filepath.FromSlash(sf.name))) == nil {
		return nil
	}
	return s.files.writeStaged(sf)
}
