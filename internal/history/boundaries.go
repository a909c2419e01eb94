package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Where the history may write, and what it writes there. A store's content is data
// from disk, possibly planted: whatever it says, a decision never writes into a
// version-control folder or into the store itself, and never gives a file more than
// the mode git would.

// storeFolders are the folders of a store. Each must be a real folder: a symlink
// would make one folder of the store read or written as another.
var storeFolders = []string{"logs", "diffs", "checkpoints", "rebuilds", journalDir, "tmp", beforeDir, spareDir, asideDir}

// checkFolders refuses a store whose folders are symlinks or special files (a FIFO
// would block whoever lists it). A regular file in a folder's place fails the first
// write there, naming it.
func (s *Store) checkFolders() error {
	for _, name := range storeFolders {
		fi, err := s.files.root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return s.files.fail("read", name, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink; the folders of the edit history must be real folders: remove the link", s.files.abs(name))
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			return s.files.notA(name, fi.Mode(), "a folder")
		}
	}
	return nil
}

// vcsFolders are the folders of version-control systems: what is in them runs (git
// hooks, core.fsmonitor) or decides what runs.
var vcsFolders = []string{".git", ".hg", ".svn", ".jj"}

// offLimits says why a decision may not write the workspace file rel (relative,
// slash- or OS-separated), or "" when it may: a path in (or being) a
// version-control folder, at any depth, or in the store. Names are compared without
// case, as macOS's file system does.
func offLimits(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, p := range parts {
		for _, v := range vcsFolders {
			if strings.EqualFold(p, v) {
				return "it lies in " + v + "/, which no decision writes into"
			}
		}
	}
	if len(parts) >= 2 && strings.EqualFold(parts[0], ".mcp") && strings.EqualFold(parts[1], "edit_history") {
		return "it lies in the edit history itself, which no decision writes into"
	}
	return ""
}

// writeOffLimits is offLimits for a file a decision is about to write: also where
// the symlinks among its folders lead (a committed link "hooks -> .git/hooks" would
// otherwise take a write of hooks/pre-commit into .git/).
func (s *Store) writeOffLimits(rel string) string {
	if why := offLimits(rel); why != "" {
		return why
	}
	real := RealPath(filepath.Join(s.workspace.Path(), rel))
	if r, err := filepath.Rel(s.workspace.Path(), real); err == nil && r != rel {
		if why := offLimits(r); why != "" {
			return "through a symlink, " + why
		}
	}
	return ""
}

// cappedMode is the mode a file the history brings back gets from the mode the store
// recorded for it: what git would write, 0755 when any execute bit was set, else 0644,
// with the umask applied. Set-id and sticky bits never come back.
func cappedMode(recorded fs.FileMode) fs.FileMode {
	mode := fs.FileMode(0o644)
	if recorded&0o111 != 0 {
		mode = 0o755
	}
	return mode &^ workspace.Umask()
}

// parseMode reads a mode the store recorded (octal), capped (see cappedMode).
func parseMode(s string) (fs.FileMode, bool) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || s == "" {
		return 0, false
	}
	return cappedMode(fs.FileMode(m)), true
}

// gitignoreWarned is the store file that says the warning about .mcp/.gitignore was
// given: it is given once per store, not by every command.
const gitignoreWarned = "gitignore-warned"

// ensureGitignore gives .mcp/ a .gitignore that ignores everything, so that git
// never lists the history (checkpoints are whole copies of files, secrets
// included). One the user has is left as it is. A folder it cannot be written in
// does not stop the recording: that is said once, on stderr.
func (s *Store) ensureGitignore() {
	rel := filepath.Join(".mcp", ".gitignore")
	if _, err := s.workspace.Lstat(rel); err == nil {
		return
	}
	err := s.workspace.CreateFile(rel, []byte("*\n"), workspace.WriteOptions{Perm: 0o644})
	if err == nil || errors.Is(err, fs.ErrExist) || s.files.exists(gitignoreWarned) {
		return
	}
	fmt.Fprintf(os.Stderr, "mcpdiff: warning: cannot write %s (%v): git may list the edit history as untracked files; edits are recorded anyway\n",
		filepath.Join(s.workspace.Path(), rel), err)
	_ = s.files.writeFile(gitignoreWarned, nil)
}
