// Package atomicfile writes a file outside every workspace in one step: IDE lock
// files, the agents' settings files, the per-user key, the prompts' state and
// serve's bearer token. The bytes go to a new file in the same folder, which then
// takes the file's name (a rename; a link where a file already there must win), so
// a reader never sees half of it and a crash never leaves a torn file. A workspace's
// own files go through internal/workspace instead, on its os.Root.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
)

// Options say how Write writes.
type Options struct {
	// Mode is the file's permissions, exactly (not narrowed by the umask); 0 keeps
	// those of the file it replaces, else 0644.
	Mode fs.FileMode
	// Sync flushes the bytes to disk before the rename: what must survive a crash
	// (a settings file) needs it; a lock file, which names a running process, does
	// not, and an fsync can wait for every other write the disk has queued.
	Sync bool
	// Check, when set, is asked last, just before the file takes its name: its
	// error leaves the file as it was (a file that changed since it was read).
	Check func() error
	// Keep: a file already at path wins (the error is then fs.ErrExist); for a file
	// two processes may make at once, which must end up the same for both.
	Keep bool
}

// Write puts data at path in one step. The folder must exist. Nothing is left
// behind when it fails.
func Write(path string, data []byte, o Options) error {
	mode := o.Mode
	if mode == 0 {
		mode = 0o644
		if info, err := os.Stat(path); err == nil {
			mode = info.Mode().Perm()
		}
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".mcpdiff-"+hex.EncodeToString(r[:]))
	err := create(tmp, data, mode, o.Sync)
	if err == nil && o.Check != nil {
		err = o.Check()
	}
	if err == nil && o.Keep {
		err = os.Link(tmp, path)
		os.Remove(tmp)
		return err
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// create writes data to a new file: O_EXCL refuses to follow a file or link planted
// under that name.
func create(path string, data []byte, mode fs.FileMode, sync bool) error {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = file.Write(data)
	if err == nil && sync {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, mode)
	}
	return err
}
