// Package neovims is what a process outside Neovim knows of the Neovims running
// mcpdiff, and the one way it asks them anything: `mcpdiff serve`, the CLI's
// decisions and every agent's hook, before and after they write a user's files.
//
// It finds them (Find: the Neovim whose terminal runs the writer, $NVIM, and those
// whose IDE lock files name a workspace that holds the files), asks them (Check:
// unsaved buffers; Reload: their buffers of files written; Claimed: which writes
// their bridge, `mcpdiff nvim`, recorded as an accepted proposal), and holds the one
// rule for a Neovim that does not answer within Wait (see Check). Client is the
// connection to one of them; rpc.go the calls into a Neovim's Lua that every Go
// caller makes.
package neovims

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/idelock"
)

// Wait is how long a Neovim is given to answer: a busy one, or one waiting at a
// prompt, answers nothing until the user is done.
const Wait = time.Second

// Find lists the RPC addresses of the Neovims to ask about paths: own (the $NVIM of
// a process run inside a Neovim, or "") and every live Neovim whose lock file, in
// lockDirs, names a workspace folder that holds one of paths, or that lies in the
// workspace of a path's edit history (a Neovim started in a subfolder of the
// project edits the project's other files too).
func Find(paths []string, own string, lockDirs []string) []string {
	var addrs []string
	seen := map[string]bool{}
	add := func(a string) {
		if a != "" && !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	add(own)
	for _, lf := range lockFiles(paths, own, lockDirs) {
		add(lf.NvimServer)
	}
	return addrs
}

// lockFiles are the lock files of the live Neovims running mcpdiff that may hold
// paths (see Find): own's, and those whose workspace holds one of them.
func lockFiles(paths []string, own string, lockDirs []string) []idelock.File {
	var out []idelock.File
	var real, workspaces []string
	for _, lf := range idelock.Read(lockDirs) {
		if lf.NvimServer == "" || !idelock.Alive(lf.PID) {
			continue
		}
		if real == nil { // only when there is a Neovim to ask
			real = make([]string, len(paths))
			for i, p := range paths {
				real[i] = history.RealPath(p)
				if ws, err := history.Find(filepath.Dir(real[i])); err == nil {
					workspaces = append(workspaces, history.RealPath(ws))
				}
			}
		}
		// Its own folders: what it tells Claude Code may name, in place of a folder
		// another Neovim holds, the file it has open there (idelock.Hold).
		folders := lf.NvimWorkspace
		if len(folders) == 0 { // a bridge of an earlier mcpdiff
			folders = lf.WorkspaceFolders
		}
		if lf.NvimServer == own || holdsAny(folders, real, workspaces) {
			out = append(out, lf)
		}
	}
	return out
}

// holdsAny says whether one of folders holds one of paths or lies in one of
// workspaces.
func holdsAny(folders, paths, workspaces []string) bool {
	in := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) }
	for _, f := range folders {
		f = strings.TrimSuffix(history.RealPath(f), string(filepath.Separator))
		for _, p := range paths {
			if in(p, f) {
				return true
			}
		}
		for _, w := range workspaces {
			if in(f, strings.TrimSuffix(w, string(filepath.Separator))) {
				return true
			}
		}
	}
	return false
}

// Asking says who asks Check, and so what a Neovim's silence means.
type Asking struct {
	Own      string   // $NVIM: the Neovim whose terminal runs the writer, or ""
	LockDirs []string // where running Neovims with mcpdiff leave their IDE lock files
	// ForAgent: the write is an agent's (a hook, `mcpdiff serve`); see Check.
	ForAgent bool
	// Tell, when set, is what a Neovim holding some of the files with unsaved
	// changes shows its user (vim.notify), given those files.
	Tell func(unsaved []string) string
}

// Checked is what the Neovims said about a write's files.
type Checked struct {
	Unsaved  []string // those of the files some Neovim holds with unsaved changes
	Answered []string // the Neovims that answered (they reload the files once written)
	// Silent are the Neovims that did not answer (in time, or at all while
	// connected), each saying so: for the user's decision, notes to show.
	Silent []error
	// Refusal, for an agent's write (ForAgent), is the first silent Neovim's error:
	// the write must not happen.
	Refusal error
}

// Check asks every Neovim that may hold paths (Find), all at once, which of them
// it holds with unsaved changes, waiting at most Wait (less when ctx ends first).
//
// The one rule for a Neovim that does not answer: it may hold unsaved changes of
// the files, so it never counts as a "no". For an agent's write (ForAgent), which
// the agent can retry, it refuses the write (the hook denies, the file tool asks to
// retry); the user's own decision from the shell goes on without its answer, with
// a note on stderr (Neovim warns before saving over a file changed on disk). A
// Neovim that cannot be reached has exited: it holds nothing, and is not silent.
func Check(ctx context.Context, paths []string, a Asking) Checked {
	addrs := Find(paths, a.Own, a.LockDirs)
	var out Checked
	if len(addrs) == 0 {
		return out
	}
	real := make([]string, len(paths))
	for i, p := range paths {
		real[i] = history.RealPath(p)
	}
	answers := make([][]string, len(addrs))
	answered := make([]bool, len(addrs))
	errs := each(ctx, addrs, func(i int, c *Client) error {
		unsaved, err := c.Unsaved(real)
		if err != nil {
			return err
		}
		answers[i], answered[i] = unsaved, true
		if len(unsaved) > 0 && a.Tell != nil {
			_ = c.Notify(a.Tell(given(unsaved, real, paths)))
		}
		return nil
	})
	for i, addr := range addrs {
		if answered[i] {
			out.Answered = append(out.Answered, addr)
		}
		if errs[i] != nil {
			out.Silent = append(out.Silent, silence(addr, paths, errs[i]))
		}
		for _, f := range given(answers[i], real, paths) {
			if !slices.Contains(out.Unsaved, f) {
				out.Unsaved = append(out.Unsaved, f)
			}
		}
	}
	if a.ForAgent && len(out.Silent) > 0 {
		out.Refusal = out.Silent[0]
	}
	return out
}

// silence is what a Neovim's failure to answer says, one text for every caller.
func silence(addr string, paths []string, err error) error {
	if isDeadline(err) {
		return fmt.Errorf("the Neovim at %s did not answer within %v whether it has unsaved changes of %s (is it busy, or waiting at a prompt?)",
			addr, Wait, strings.Join(paths, ", "))
	}
	return fmt.Errorf("the Neovim at %s: %w", addr, err)
}

// given maps files named as real back to the names the caller gave.
func given(files, real, paths []string) []string {
	var out []string
	for _, f := range files {
		for i, r := range real {
			if r == f {
				out = append(out, paths[i])
				break
			}
		}
	}
	return out
}

// Reload has the Neovims at addrs re-read their unmodified buffers of paths, all
// at once, each within Wait. Best effort: a Neovim that does not answer still
// reloads them once it hears of the store's change.
func Reload(addrs, paths []string) {
	each(context.Background(), addrs, func(_ int, c *Client) error { return c.Reload(paths...) })
}

// Written is a file as a hook saw it just after a write: the question Claimed asks
// of a Neovim's bridge (ide.Server.ClaimWrites answers it).
type Written struct {
	Path string `json:"path"` // absolute
	Hash string `json:"hash"` // lowercase hex SHA-256 of the bytes the file holds
}

// ClaimsPath is where a Neovim's bridge answers Claimed: on its IDE server's port,
// with the lock file's token, as the IDE protocol's handshake is authenticated.
const ClaimsPath = "/mcpdiff/claims"

// Claimed asks the bridges of the Neovims that may hold the written files (own's
// and those found through their lock files in lockDirs, as Find finds them), all at
// once, which of writes they accepted as a proposal and recorded, each within Wait
// (less when ctx ends first). The question goes to the bridge's IDE server, not
// through Neovim, which may be busy. A write is claimed when one of them says so;
// one that does not answer claims nothing (silent holds those, for a note: the
// write may then be in the history twice).
func Claimed(ctx context.Context, writes []Written, own string, lockDirs []string) (claimed []bool, silent []error) {
	claimed = make([]bool, len(writes))
	paths := make([]string, len(writes))
	for i, w := range writes {
		paths[i] = w.Path
	}
	found := lockFiles(paths, own, lockDirs)
	if len(found) == 0 {
		return claimed, nil
	}
	body, _ := json.Marshal(writes)
	ctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	answers := make([][]bool, len(found))
	errs := make([]error, len(found))
	var wg sync.WaitGroup
	for i, lf := range found {
		wg.Go(func() { answers[i], errs[i] = askClaims(ctx, lf, body) })
	}
	wg.Wait()
	for i, a := range answers {
		for j := range min(len(a), len(writes)) {
			claimed[j] = claimed[j] || a[j]
		}
		if errs[i] != nil {
			silent = append(silent, fmt.Errorf("the bridge of the Neovim at %s did not answer whether it recorded %s as an accepted proposal: %w",
				found[i].NvimServer, strings.Join(paths, ", "), errs[i]))
		}
	}
	return claimed, silent
}

// askClaims asks the bridge of one lock file. A bridge that has stopped (nothing
// listens on its port) claims nothing, and is not silent.
//
// The question is HTTP/1.0 written on a TCP connection rather than net/http's
// client: a hook's process must not initialize net/http, which Go would do only
// after jsonschema (internal/hookcmd says why that matters), and HTTP/1.0 is the
// smallest exchange Go's server answers: one request, then its answer, never
// chunked, up to the end of the connection.
func askClaims(ctx context.Context, lf idelock.File, body []byte) ([]bool, error) {
	port := strings.TrimSuffix(filepath.Base(lf.Path), ".lock")
	if strings.ContainsAny(lf.AuthToken, "\r\n") {
		return nil, nil // not a token of ours: nothing that could be a header
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil // not listening: the bridge is gone
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	answer, err := exchangeClaims(conn, lf.AuthToken, body)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, nil // an older bridge, or another IDE's server: no claim
	}
	return answer, nil
}

// exchangeClaims sends the claims question on conn and reads the answer: a 200
// with a JSON list of booleans, else an error.
func exchangeClaims(conn net.Conn, token string, body []byte) ([]bool, error) {
	req := fmt.Sprintf("POST %s HTTP/1.0\r\nX-Claude-Code-Ide-Authorization: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", ClaimsPath, token, len(body))
	if _, err := conn.Write(append([]byte(req), body...)); err != nil {
		return nil, err
	}
	r := bufio.NewReader(io.LimitReader(conn, 1<<20))
	status, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if f := strings.Fields(status); len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") || f[1] != "200" {
		return nil, fmt.Errorf("answered %q", strings.TrimSpace(status))
	}
	for { // the headers: none matters, the body ends with the connection
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if strings.TrimRight(line, "\r\n") == "" {
			break
		}
	}
	var answer []bool
	if err := json.NewDecoder(r).Decode(&answer); err != nil {
		return nil, err
	}
	return answer, nil
}

// each connects to every Neovim at addrs at once and runs fn with each connection,
// every call bounded by Wait and ctx. It returns each Neovim's error: fn's, or the
// deadline when it could not connect in time. A Neovim that cannot be reached has
// exited: fn is not called for it, and its error is nil. A panic in fn is an error
// too: it must not end a hook with exit status 2.
func each(ctx context.Context, addrs []string, fn func(i int, c *Client) error) []error {
	ctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("internal error: %v", p)
				}
			}()
			c, err := DialContext(ctx, addr)
			if err != nil {
				errs[i] = ctx.Err() // nil: it has exited
				return
			}
			defer c.Close()
			d, _ := ctx.Deadline()
			c.Timeout = max(time.Until(d), time.Millisecond)
			errs[i] = fn(i, c)
		})
	}
	wg.Wait()
	return errs
}

func isDeadline(err error) bool { return errors.Is(err, context.DeadlineExceeded) }

// LockFiles are the Neovims a file server started outside Neovim (by an MCP client,
// with neither $NVIM nor --nvim) asks before each write, as bridge/filetools'
// buffer checks: those found anew through their lock files in Dirs (Find). A Neovim
// that does not answer refuses the write (Check's rule for an agent's write).
type LockFiles struct{ Dirs []string }

// Modified reports whether a Neovim holds path with unsaved changes.
func (l LockFiles) Modified(path string) (bool, error) {
	checked := Check(context.Background(), []string{path}, Asking{LockDirs: l.Dirs, ForAgent: true})
	if checked.Refusal != nil {
		return false, checked.Refusal
	}
	return len(checked.Unsaved) > 0, nil
}

// Reload has those Neovims re-read their unmodified buffers of paths.
func (l LockFiles) Reload(paths ...string) error {
	Reload(Find(paths, "", l.Dirs), paths)
	return nil
}
