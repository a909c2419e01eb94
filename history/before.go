package history

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// Some changes are made by a program mcpdiff does not run (Claude Code's own Edit and
// Write tools): mcpdiff hears about them just before and just after. What the file
// held just before is kept here, keyed by the tool call, until the change is
// recorded. The snapshots live in hooks/, not in tmp/ (which every process sweeps
// when it first locks the store), and are written without the lock: each key belongs
// to one tool call, and a snapshot appears whole (written under a temp name, then
// renamed) or not at all.

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
	header, err := json.Marshal(b)
	if err != nil {
		return err
	}
	data := make([]byte, 0, len(header)+1+len(b.Content))
	data = append(append(append(data, header...), '\n'), b.Content...)
	var r [8]byte
	_, _ = rand.Read(r[:])
	tmp := beforeDir + "/." + key + "." + hex.EncodeToString(r[:])
	name := beforeDir + "/" + key
	err = s.files.writeNew(tmp, data, true)
	if err == nil {
		if err = s.files.root.Rename(tmp, name); err != nil {
			_ = s.files.root.Remove(tmp)
		}
	}
	if err != nil {
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
	if nl < 0 || json.Unmarshal(data[:nl], &b) != nil || b.Path == "" {
		_ = s.files.root.Remove(name)
		return nil, fmt.Errorf("%s is not a snapshot mcpdiff wrote; removed it", s.files.abs(name))
	}
	b.Content = data[nl+1:]
	if err := s.files.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove %s: %w", s.files.abs(name), err)
	}
	return &b, nil
}

// sweepBefore removes stale snapshots (and temp files of killed writers) other than
// key's. Best effort: a snapshot that stays only costs space.
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
