// Package idelock is the lock file of Claude Code's IDE protocol: the file an IDE
// server writes into the CLI's lock-file folder, named after its port, that tells
// Claude Code where the editor listens and with which token; and, read back, how
// everything else finds the running Neovims with mcpdiff (their RPC address is
// mcpdiff's own field, nvimServer).
package idelock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/mcpdiff/mcpdiff/internal/atomicfile"
	"github.com/mcpdiff/mcpdiff/internal/jsonscan"
)

// Content is what the CLI reads from <dir>/<port>.lock. Field order and names
// follow the IDE protocol; the port is only in the file name. The Nvim fields are
// mcpdiff's own (the CLI ignores fields it does not know).
type Content struct {
	PID              int      `json:"pid"`
	WorkspaceFolders []string `json:"workspaceFolders"`
	IDEName          string   `json:"ideName"`
	Transport        string   `json:"transport"`
	AuthToken        string   `json:"authToken"`
	NvimServer       string   `json:"nvimServer,omitempty"`
	// NvimWorkspace is the Neovim's workspace (its cwd, then LSP roots, symlinks
	// resolved) whatever WorkspaceFolders tells Claude Code (see Hold).
	NvimWorkspace []string `json:"nvimWorkspace,omitempty"`
	// NvimActive is when the Neovim was last started or focused (Unix nanoseconds).
	NvimActive int64 `json:"nvimActive,omitempty"`
}

// JSON is the lock file's text, as encoding/json would write it (no HTML escapes):
// written with jsonscan, because the first json.Marshal of a process (its code paged
// in, the type's encoder built) took half a millisecond of the time Claude Code waits
// for this file.
func (c Content) JSON() []byte {
	b := append(make([]byte, 0, 256), `{"pid":`...)
	b = strconv.AppendInt(b, int64(c.PID), 10)
	b = append(b, `,"workspaceFolders":[`...)
	for i, f := range c.WorkspaceFolders {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonscan.AppendString(b, f)
	}
	b = append(b, `],"ideName":`...)
	b = jsonscan.AppendString(b, c.IDEName)
	b = append(b, `,"transport":`...)
	b = jsonscan.AppendString(b, c.Transport)
	b = append(b, `,"authToken":`...)
	b = jsonscan.AppendString(b, c.AuthToken)
	if c.NvimServer != "" {
		b = append(b, `,"nvimServer":`...)
		b = jsonscan.AppendString(b, c.NvimServer)
	}
	if len(c.NvimWorkspace) > 0 {
		b = append(b, `,"nvimWorkspace":[`...)
		for i, f := range c.NvimWorkspace {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonscan.AppendString(b, f)
		}
		b = append(b, ']')
	}
	if c.NvimActive != 0 {
		b = append(b, `,"nvimActive":`...)
		b = strconv.AppendInt(b, c.NvimActive, 10)
	}
	return append(b, '}')
}

// Dirs are the folders the CLI reads lock files from: $CLAUDE_CONFIG_DIR/ide when
// that is set, and ~/.claude/ide. An IDE server writes into the first.
func Dirs() []string {
	var dirs []string
	if config := os.Getenv("CLAUDE_CONFIG_DIR"); config != "" {
		dirs = append(dirs, filepath.Join(config, "ide"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		if d := filepath.Join(home, ".claude", "ide"); len(dirs) == 0 || dirs[0] != d {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// File is one lock file as read back: which editor serves where.
type File struct {
	Path string
	Content
}

// Read reads the lock files in dirs; unreadable or malformed ones (another IDE's,
// or one being replaced), and anything that is not a regular file, are skipped.
func Read(dirs []string) []File {
	var out []File
	for _, dir := range dirs {
		names, _ := filepath.Glob(filepath.Join(dir, "*.lock"))
		for _, name := range names {
			data, err := readFile(name)
			if err != nil {
				continue
			}
			lf := File{Path: name}
			if json.Unmarshal(data, &lf.Content) == nil {
				out = append(out, lf)
			}
		}
	}
	return out
}

// maxSize bounds what is read of a lock file: a real one is a few hundred bytes.
const maxSize = 64 << 10

// readFile reads one lock file without ever blocking on it: a FIFO (or device)
// named like a lock file in the shared folder would otherwise hang whoever reads the
// folder, every hook call included.
func readFile(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxSize {
		return nil, fmt.Errorf("%s is not a lock file", name)
	}
	return io.ReadAll(io.LimitReader(f, maxSize))
}

// Write writes the lock file atomically: the CLI deletes lock files it cannot
// parse, so a half-written one would silently unregister the editor. It is not
// flushed to disk: after a crash of the machine the editor it names is gone anyway.
// The folder is private (0700, also when it already existed) and the file 0600: it
// holds the token.
func Write(path string, content Content) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("ide: create lock-file folder: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("ide: make lock-file folder private: %w", err)
	}
	if err := atomicfile.Write(path, content.JSON(), atomicfile.Options{Mode: 0o600}); err != nil {
		return fmt.Errorf("ide: write lock file %s: %w", path, err)
	}
	return nil
}

// Remove removes our own lock file; other files in the shared folder belong to
// other editors and are never touched.
func Remove(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ide: remove lock file: %w", err)
	}
	return nil
}
