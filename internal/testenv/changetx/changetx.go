// Package changetx builds, for tests, the workspace.Tx that puts one change
// of the edit history on disk, as the file tools do. It stands apart from testenv,
// which imports the history, so that the history's own tests can use it too.
package changetx

import (
	"os"
	"path/filepath"

	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Change is a change of the history (history.Change) in the workspace's terms: a
// write unless Delete or Move.
type Change struct {
	Delete, Move bool
	Path         string // absolute; a move's destination
	From         string // a move's source
	Before       []byte
	BeforeExists bool
	After        []byte
}

// Tx is the workspace.Tx that puts ch on disk in root.
func Tx(root *workspace.Root, ch Change) *workspace.Tx {
	file := func(abs string) workspace.File {
		rel, _ := filepath.Rel(root.Path(), abs)
		return workspace.File{Root: root, Rel: rel, Abs: abs}
	}
	from := ch.Path
	if ch.Move {
		from = ch.From
	}
	was := workspace.Was{Content: ch.Before, Exists: ch.BeforeExists}
	if ch.BeforeExists {
		was.Info, _ = os.Stat(from)
	}
	tx := workspace.NewTx(false)
	switch {
	case ch.Delete:
		tx.Delete(file(ch.Path), was)
	case ch.Move:
		tx.Move(file(ch.From), was, file(ch.Path))
	default:
		tx.Write(file(ch.Path), was, ch.After)
	}
	return tx
}
