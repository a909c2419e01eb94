package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
)

// storeHealth is what `mcpdiff status --health` tells of the store of a folder:
// the facts :checkhealth mcpdiff shows, found the way every history command finds
// and opens the store (an interrupted decision is completed first).
type storeHealth struct {
	Workspace string   `json:"workspace"` // the store's workspace, or the folder searched from
	Store     string   `json:"store"`     // its .mcp/edit_history; "" when there is none
	Format    int      `json:"format"`    // the FORMAT file's version; 0 before the first edit writes it
	Writable  bool     `json:"writable"`
	Edits     int      `json:"edits"`
	Pending   int      `json:"pending"`
	Warnings  []string `json:"warnings"` // history.Notices
	Info      []string `json:"info"`
	Error     string   `json:"error,omitempty"` // why the history could not be read
}

func runHealth(a *cliArgs, stdout, stderr io.Writer) int {
	wd, _ := os.Getwd()
	h := examineStore(a.workspace, wd)
	if a.json {
		b, _ := json.Marshal(h)
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		writeHealth(stdout, h)
	}
	if h.Error != "" {
		fmt.Fprintf(stderr, "mcpdiff: %s\n", termsafe.Escape(h.Error))
		return exitRefused
	}
	return exitOK
}

// examineStore gathers the facts of the store of dir (--workspace), else of the
// nearest one above wd.
func examineStore(dir, wd string) storeHealth {
	h := storeHealth{Workspace: dir, Warnings: []string{}, Info: []string{}}
	if dir == "" {
		h.Workspace = wd
		found, err := history.Find(wd)
		if errors.Is(err, history.ErrNoStore) {
			return h
		}
		if err != nil {
			h.Error = err.Error()
			return h
		}
		h.Workspace = found
	}
	if abs, err := filepath.Abs(h.Workspace); err == nil {
		h.Workspace = abs
	}
	storeDir := filepath.Join(h.Workspace, filepath.FromSlash(history.Dir))
	if fi, err := os.Stat(storeDir); err != nil || !fi.IsDir() {
		return h
	}
	h.Store = storeDir
	h.Format = storeFormat(storeDir)
	store, err := openStore(h.Workspace)
	if err != nil {
		h.Error = err.Error()
		return h
	}
	h.Writable = store.Writable()
	list, err := store.Review(context.Background(), history.Filter{})
	if err != nil {
		h.Error = err.Error()
		return h
	}
	h.Edits = len(list.Entries)
	for _, e := range list.Entries {
		if e.Status == history.Pending {
			h.Pending++
		}
	}
	notices := store.Notices(list, wd)
	h.Warnings, h.Info = nonNil(notices.Warnings), nonNil(notices.Info)
	return h
}

// storeFormat is the version in the store's FORMAT file ("mcpdiff-edit-history N"),
// 0 when it has none (yet), another text, or is no regular file: a FIFO would block
// the read, a link to a device never end it (opening the store then says what it is).
func storeFormat(storeDir string) int {
	path := filepath.Join(storeDir, "FORMAT")
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64)) // "mcpdiff-edit-history N\n"
	if err != nil {
		return 0
	}
	v, _ := history.FormatVersion(b)
	return v
}

// writeHealth prints h for people, in the words :checkhealth mcpdiff uses.
func writeHealth(w io.Writer, h storeHealth) {
	if h.Store == "" && h.Error == "" {
		fmt.Fprintf(w, "no %s above %s yet (made by the first recorded edit)\n", history.Dir, termsafe.Escape(h.Workspace))
		return
	}
	if h.Store != "" {
		state := "writable"
		if !h.Writable {
			state = "not writable"
		}
		format := "no FORMAT file yet"
		if h.Format > 0 {
			format = "format version " + strconv.Itoa(h.Format)
		}
		fmt.Fprintf(w, "store %s (%s, %s)\n", termsafe.Escape(h.Store), format, state)
	}
	if h.Error != "" {
		return
	}
	fmt.Fprintf(w, "%d edit(s) recorded, %d pending\n", h.Edits, h.Pending)
	for _, m := range h.Warnings {
		fmt.Fprintf(w, "warning: %s\n", termsafe.Escape(m))
	}
	for _, m := range h.Info {
		fmt.Fprintf(w, "info: %s\n", termsafe.Escape(m))
	}
	if len(h.Warnings) == 0 && len(h.Info) == 0 {
		fmt.Fprintln(w, "every recorded file holds what its history says")
	}
}
