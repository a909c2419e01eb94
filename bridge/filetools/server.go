// Package filetools is the MCP server of `mcpdiff serve`: the file tools (toolsets hashline, edit
// and batch), served over stdio or streamable HTTP with mark3labs/mcp-go. Handlers
// are thin: they resolve paths through the workspace policy, call the pure edit
// engine (package edit) on the file's bytes, and hand the result to change(), which
// records it in the edit history and writes it.
//
// The Claude Code IDE protocol lives in bridge/ide.
package filetools

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Toolsets, in the order they are listed.
var Toolsets = []string{"hashline", "edit", "batch"}

// Buffers are the buffers of the running Neovim, when there is one: files with
// unsaved changes in it are never overwritten, and its buffers are reloaded after an
// agent's change. A Modified error refuses the write; once Neovim has exited,
// Modified answers false.
type Buffers interface {
	Modified(path string) (bool, error)
	Reload(paths ...string) error
}

// Config configures a Server.
type Config struct {
	Roots       []string         // --root folders; empty: the client's MCP roots, else the working directory
	Toolsets    []string         // empty: all
	MaxFileSize int64            // text files larger than this are refused (0: workspace.DefaultMaxFileSize)
	MaxRead     int              // largest read result in bytes (0: DefaultMaxRead)
	Sync        bool             // fsync written files and their folders
	KeepSpares  bool             // keep files made ahead for the edit history's writes (a server that lives long)
	FileRead    func(size int64) // when set, told the size of every file a tool reads
	Buffers     Buffers          // nil without Neovim
	Version     string
	Logf        func(format string, args ...any)
}

// DefaultMaxRead is the default size limit of a read's result.
const DefaultMaxRead = 4 << 20

// Server holds the MCP server and the state its tools share.
type Server struct {
	cfg      Config
	mcp      *server.MCPServer
	fixed    *workspace.Policy // from --root; nil when roots come from the client
	sessions sync.Map          // session id → *session
	stores   sync.Map          // root path → *history.Store
	queues   sync.Map          // queueKey → *fileQueue (enqueue, files.go)
	written  written           // the content last written to big files (contents.go)
	readings readings          // the last reads of files (readings.go)
	views    *views
	// recordAll is history.RecordAll, which logs and applies a batch's changes; tests
	// wrap it to make a batch's files fail, benchmarks replace it to write without a
	// history.
	recordAll func(context.Context, []history.Batch) ([][]*history.Entry, error)
	bigTexts  *bigTexts // results' texts escaped ahead, when serving stdio
}

// session is what one client's calls share.
type session struct {
	mu     sync.Mutex
	policy *workspace.Policy // nil until the first call (or after roots/list_changed)
	base   string            // folder chosen with set_workspace; "" = the first root
}

// scope is where a call's paths resolve: the client's roots and base folder.
type scope struct {
	pol  *workspace.Policy
	base string
	sess *session
}

// resolve turns a client path into a file inside the roots; relative paths start at
// the base folder. With linkItself a final symlink is not followed.
func (c scope) resolve(path string, linkItself bool) (workspace.File, error) {
	if strings.TrimSpace(path) == "" {
		return workspace.File{}, errorf("path is empty: give a file path, absolute or relative to %s", c.baseDir())
	}
	if !filepath.IsAbs(path) && c.base != "" {
		path = filepath.Join(c.base, path)
	}
	if linkItself {
		return c.pol.ResolveNoFollow(path)
	}
	return c.pol.Resolve(path)
}

func (c scope) baseDir() string {
	if c.base != "" {
		return c.base
	}
	return c.pol.Base()
}

// New builds the server and registers the selected toolsets.
func New(cfg Config) (*Server, error) {
	if cfg.MaxFileSize <= 0 {
		cfg.MaxFileSize = workspace.DefaultMaxFileSize
	}
	if cfg.MaxRead <= 0 {
		cfg.MaxRead = DefaultMaxRead
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	selected, err := selectToolsets(cfg.Toolsets)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, views: newViews(64 << 20), recordAll: history.RecordAll}
	if len(cfg.Roots) > 0 {
		if s.fixed, err = openPolicy(cfg.Roots); err != nil {
			return nil, err
		}
	}
	s.mcp = server.NewMCPServer("mcpdiff", cfg.Version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		// Roots are a server→client request, which the 2026-07-28 protocol revision
		// deprecated (clients of both eras still answer it over stdio). mcp-go keeps
		// this option for the MCP deprecation window of at least twelve months, so
		// until 2027-07-28 at the earliest; before then, roots/list is to be asked
		// through mcp-go's InputRequestBuilder (multi round-trip) instead.
		//lint:ignore SA1019 deliberate until then, as said above
		server.WithLegacyServerInitiatedRequests(),
		server.WithInstructions(instructions),
	)
	s.mcp.AddNotificationHandler(string(mcp.MethodNotificationRootsListChanged), func(ctx context.Context, _ mcp.JSONRPCNotification) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			st := s.session(sess.SessionID())
			st.mu.Lock()
			st.policy = nil // fetched again on the next call
			st.mu.Unlock()
		}
	})
	for _, t := range s.tools() {
		if selected[t.toolset] {
			s.mcp.AddTool(t.def, withArgsCheck(t.def, t.handler))
		}
	}
	return s, nil
}

const instructions = `mcpdiff's file tools. Every change is recorded in the workspace's edit history, where a person can accept or reject each edit later. Pass the mcp_conversation_id returned by your first file-changing call of a turn on every later one of that turn.`

func selectToolsets(names []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(names) == 0 {
		for _, n := range Toolsets {
			out[n] = true
		}
		return out, nil
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "all" {
			return selectToolsets(nil)
		}
		found := false
		for _, t := range Toolsets {
			found = found || t == n
		}
		if !found {
			return nil, fmt.Errorf("unknown toolset %q (choose from %s)", n, strings.Join(Toolsets, ", "))
		}
		out[n] = true
	}
	return out, nil
}

func openPolicy(dirs []string) (*workspace.Policy, error) {
	var roots []*workspace.Root
	for _, d := range dirs {
		r, err := workspace.OpenRoot(d)
		if err != nil {
			return nil, fmt.Errorf("root %s: %w", d, err)
		}
		roots = append(roots, r)
	}
	return workspace.NewPolicy(roots)
}

func (s *Server) session(id string) *session {
	st, _ := s.sessions.LoadOrStore(id, &session{})
	return st.(*session)
}

// scope is the calling client's roots and base folder: --root, else the client's
// MCP roots (asked for once, and again after roots/list_changed), else the working
// directory.
func (s *Server) scope(ctx context.Context) (scope, error) {
	sess := server.ClientSessionFromContext(ctx)
	id := ""
	if sess != nil {
		id = sess.SessionID()
	}
	st := s.session(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	if s.fixed != nil {
		return scope{pol: s.fixed, base: st.base, sess: st}, nil
	}
	if st.policy == nil {
		dirs := s.clientRoots(ctx, sess)
		if len(dirs) == 0 {
			wd, err := os.Getwd()
			if err != nil {
				return scope{}, err
			}
			dirs = []string{wd}
		}
		p, err := openPolicy(dirs)
		if err != nil {
			return scope{}, err
		}
		st.policy, st.base = p, ""
	}
	return scope{pol: st.policy, base: st.base, sess: st}, nil
}

// clientRoots asks the client for its roots when it declared the capability. Roots
// that are not local existing folders are skipped (and logged).
func (s *Server) clientRoots(ctx context.Context, sess server.ClientSession) []string {
	info, ok := sess.(server.SessionWithClientInfo)
	if !ok || info.GetClientCapabilities().Roots == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := s.mcp.RequestRoots(ctx, mcp.ListRootsRequest{})
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("no answer within %v", rootsTimeout)
		}
		s.cfg.Logf("warning: the client's roots/list failed (%v); using the working directory as the root until the client sends roots/list_changed", err)
		return nil
	}
	var dirs []string
	for _, r := range res.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
			s.cfg.Logf("skipping root %q: only local file:// roots are supported", r.URI)
			continue
		}
		dir := u.Path
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			s.cfg.Logf("skipping root %q: not an existing folder", r.URI)
			continue
		}
		if !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir) // in the client's order: the first is the base for relative paths
		}
	}
	return dirs
}

// rootsTimeout bounds the wait for the client's roots/list answer: a client that
// declares roots but never answers would otherwise hang every tool call.
var rootsTimeout = 5 * time.Second

// store is the edit history of the root holding f. A store whose folder was removed
// (and perhaps made again) since it was opened is opened again: the user's new store,
// not the one that is gone.
func (s *Server) store(root *workspace.Root) (*history.Store, error) {
	if st, ok := s.stores.Load(root.Path()); ok && st.(*history.Store).Current() {
		return st.(*history.Store), nil
	}
	st, err := history.Open(root)
	if err != nil {
		return nil, err
	}
	st.SetMaxFileSize(s.cfg.MaxFileSize)
	if s.cfg.KeepSpares {
		st.KeepSpares()
	}
	if old, loaded := s.stores.LoadOrStore(root.Path(), st); loaded {
		if old.(*history.Store).Current() {
			return old.(*history.Store), nil
		}
		s.stores.Store(root.Path(), st)
	}
	return st, nil
}
