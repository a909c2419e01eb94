package history

import "os"

// Current reports whether the store's folder is still the one its path names. A
// process that keeps a Store open (a Neovim's bridge) holds the folder it opened: once
// .mcp is removed, that folder is gone for good, and a store made there afterwards
// is another one (its own identity, signed anew), to be opened again.
func (s *Store) Current() bool {
	held, err := s.files.root.Stat(".")
	if err != nil {
		return false
	}
	now, err := os.Stat(s.dir)
	return err == nil && os.SameFile(held, now)
}
