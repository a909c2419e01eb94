// Package workspace is the one path policy every file operation goes through: the
// allowed roots, how a path a client sends becomes a file inside one of them, and the
// file operations themselves, done through os.Root so that nothing (symlinks, "..",
// a folder swapped for a link between check and use) can reach outside a root.
//
// The work is split in two layers:
//
//   - Policy.Resolve (policy.go) turns a client's path into a File: it
//     picks the root, follows symlinks only while they stay inside the roots, matches
//     Unicode spellings to existing names and refuses mcpdiff's own history store.
//     Its result names no symlink on the way (only the final component may be a link,
//     and only with ResolveNoFollow).
//   - Root methods (root.go, io.go, list.go) do the IO on a path relative to one root,
//     always through os.Root, so even if the tree changes after Resolve (a folder
//     swapped for a symlink to /etc), the kernel-level walk cannot leave the root.
//     They trust their caller on policy (the history store uses them on its own
//     files); only Move and List also keep out of the history store.
//
// Writes replace files by rename (temp file in the same folder), never in place.
// So a file that is hard linked from outside the root (TestA14HardLinkToOutside) is split from
// its other name on the first write: the outside name keeps the old content.
package workspace

import (
	"path/filepath"
	"strings"
)

// HistoryDir is the edit history store's folder relative to a workspace root. It is
// private to mcpdiff: Resolve refuses every path in it.
const HistoryDir = ".mcp/edit_history"

// inHistoryStore reports whether rel (relative to a root, OS separators) is the
// history store or inside it. The comparison ignores case, so that on a
// case-insensitive file system (macOS) ".MCP/Edit_History" is refused too; on a
// case-sensitive one that only refuses a few odd names nobody needs.
func inHistoryStore(rel string) bool {
	store := filepath.FromSlash(HistoryDir)
	if len(rel) < len(store) || !strings.EqualFold(rel[:len(store)], store) {
		return false
	}
	return len(rel) == len(store) || rel[len(store)] == filepath.Separator
}
