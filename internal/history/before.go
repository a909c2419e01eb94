package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Some changes are made by a program mcpdiff does not run (Claude Code's own Edit and
// Write tools): mcpdiff hears about them just before and just after. What the file
// held just before is kept here, keyed by the tool call, until the change is
// recorded. The snapshots live in hooks/, not in tmp/ (which every process sweeps
// when it first locks the store), and are written without the lock: each key belongs
// to one tool call. A snapshot is written in place, not renamed into place (Claude
// Code waits for every hook, so each file created counts): its header gives the
// content's size, so a torn one (a writer killed halfway) is known as such.

// beforeDir holds the snapshots.
const beforeDir = "hooks"

// staleBefore is how old a snapshot must be to be swept: its tool call was refused or
// failed, so nobody will take it back. A permission prompt can wait for minutes.
const staleBefore = 24 * time.Hour

// Before is a file as it was just before a change.
type Before struct {
	Path    string `json:"path"`           // absolute
	Exists  bool   `json:"exists"`         // false: the file did not exist
	Skip    string `json:"skip,omitempty"` // why the change cannot be recorded, "" when it can
	Size    int    `json:"size"`           // of Content: a shorter snapshot is torn
	Content []byte `json:"-"`
}

// ValidBeforeKey reports whether key can name a snapshot (a file name in hooks/).
func ValidBeforeKey(key string) bool { return ValidConversationID(key) }

// SaveBefore keeps b under key, replacing an earlier snapshot of that key. Snapshots
// left behind by refused tool calls are swept on the way.
func (s *Store) SaveBefore(key string, b Before) error {
	if !ValidBeforeKey(key) {
		return fmt.Errorf("bad snapshot key %q: use letters, digits, '_', '-' or '.'", key)
	}
	b.Size = len(b.Content)
	header, err := json.Marshal(b)
	if err != nil {
		return err
	}
	data := make([]byte, 0, len(header)+1+len(b.Content))
	data = append(append(append(data, header...), '\n'), b.Content...)
	name := beforeDir + "/" + key
	if err := s.files.writeFile(name, data); err != nil {
		return fmt.Errorf("save the file before the change in %s: %w", s.files.abs(name), err)
	}
	s.sweepBefore(key)
	return nil
}

// TakeBefore returns the snapshot saved under key and removes it; nil when there is
// none.
func (s *Store) TakeBefore(key string) (*Before, error) {
	if !ValidBeforeKey(key) {
		return nil, nil
	}
	name := beforeDir + "/" + key
	data, err := s.files.root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.files.abs(name), err)
	}
	nl := bytes.IndexByte(data, '\n')
	var b Before
	if nl < 0 || json.Unmarshal(data[:nl], &b) != nil || b.Path == "" || len(data)-nl-1 != b.Size {
		_ = s.files.root.Remove(name)
		return nil, fmt.Errorf("%s is not a whole snapshot (was its writer killed?); removed it", s.files.abs(name))
	}
	b.Content = data[nl+1:]
	if err := s.files.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove %s: %w", s.files.abs(name), err)
	}
	return &b, nil
}

// sweepBefore removes stale snapshots other than key's. Best effort: a snapshot that stays only costs space.
func (s *Store) sweepBefore(key string) {
	names, err := s.files.readDir(beforeDir)
	if err != nil || len(names) < 2 {
		return
	}
	cutoff := time.Now().Add(-staleBefore)
	for _, n := range names {
		if n.Name() == key {
			continue
		}
		if info, err := n.Info(); err == nil && info.ModTime().Before(cutoff) {
			_ = s.files.root.Remove(beforeDir + "/" + n.Name())
		}
	}
}

// ReadWorkspaceFile reads a file of the workspace (absolute path) through the
// workspace's root, within the size limit. Symlinks are followed only while they stay
// inside the workspace.
func (s *Store) ReadWorkspaceFile(path string) ([]byte, fs.FileInfo, error) {
	rel, err := s.relPath(path)
	if err != nil {
		return nil, nil, err
	}
	return s.workspace.ReadFile(rel, s.maxFile)
}

// TakeFirstBefore takes the oldest snapshot whose key starts with prefix and removes
// it; nil when there is none. Agents that give a tool call no id of its own have their
// snapshots saved under prefix (their session, tool and arguments) plus a suffix that
// sorts by time: two identical calls made at once take their snapshots in the order
// they were saved, each its own. A snapshot is claimed by renaming it, so two takers
// never get the same one.
func (s *Store) TakeFirstBefore(prefix string) (*Before, error) {
	names, err := s.files.readDir(beforeDir)
	if err != nil {
		return nil, nil
	}
	for _, n := range names {
		if !strings.HasPrefix(n.Name(), prefix) || !ValidBeforeKey(n.Name()) {
			continue
		}
		claimed := n.Name() + ".taken-" + newID()
		if err := s.files.root.Rename(beforeDir+"/"+n.Name(), beforeDir+"/"+claimed); err != nil {
			continue // taken by another process meanwhile
		}
		return s.TakeBefore(claimed)
	}
	return nil, nil
}
