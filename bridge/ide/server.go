// Package ide serves Claude Code's IDE protocol: an MCP server over a WebSocket on
// 127.0.0.1 plus a discovery lock file, so the claude CLI shows its proposed edits in
// the editor (openDiff) and reads diagnostics and selections from it.
//
// The package owns the protocol, the registry of open diffs and each diff's life
// (pending → answered → closing → closed, diffs.go), the one wait for the
// client's write of an accepted diff (watch.go), and what the lock file says when
// other Neovims share the workspace (peers.go). Drawing diffs and reporting what the
// user did is the Editor's job; recording accepted diffs is the Recorder's.
package ide

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpdiff/mcpdiff/internal/idelock"
)

// Options configures a Server. Editor and PID are required.
type Options struct {
	Editor    Editor
	LockDir   string   // "" → $CLAUDE_CONFIG_DIR/ide if set and non-empty, else ~/.claude/ide
	PID       int      // Neovim's PID, written into the lock file (must be a live process)
	Workspace []string // workspaceFolders (absolute)
	IDEName   string   // shown by the CLI as "Connected to <IDEName>"; "" → "Neovim"
	// Port 0 picks a random free port on 127.0.0.1. A non-zero port is tried first (a
	// restart after a crash keeps port and token so Claude Code reconnects), with a
	// random port as the fallback.
	Port     int
	Token    string                           // "" = fresh 128-bit CSPRNG token (32 lowercase hex)
	Version  string                           // serverInfo.version
	Recorder Recorder                         // optional: records diffs accepted in the editor into the edit history
	Logf     func(format string, args ...any) // never given the token
	// OnClients, optional, hears the number of connected clients whenever it changes
	// (the plugin tracks the selection only while someone listens). Calls come from
	// one goroutine, in order; a slow one delays only the next.
	OnClients func(n int)
	// AfterDiffs, optional, is called when closing diffs (close_tab, a new prompt's
	// closeAllDiffTabs, a client leaving) left none open, before the call that closed
	// them is answered: `mcpdiff nvim` gives back the memory the diffs used.
	AfterDiffs func()

	// NvimServer, optional, is Neovim's RPC address (v:servername), written into the
	// lock file so that Claude Code's hook can ask this Neovim about unsaved buffers.
	NvimServer string
	// Share makes the server share its workspace folders with the other Neovims
	// running mcpdiff whose lock files are beside its own (peers.go), so that
	// `claude --ide` finds exactly one of them and /ide tells them apart.
	Share bool
}

// Recorder records diffs accepted in the editor into the edit history.
type Recorder interface {
	// RecordAccepted is called once the client has written an accepted diff to disk
	// (the file on disk equals the accepted text). conv is the conversation of the
	// client's current turn. before is the file before the diff (existed=false for a new file).
	// recorded is false when the file has no history to record it in.
	RecordAccepted(conv, path string, before []byte, existed bool, after []byte) (recorded bool, err error)
}

// Status is a snapshot of the server for status commands and health checks.
type Status struct {
	Running          bool           `json:"running"`
	Port             int            `json:"port"`
	LockPath         string         `json:"lockPath"`
	WorkspaceFolders []string       `json:"workspaceFolders"`
	Clients          []ClientStatus `json:"clients"`
	Diffs            []DiffStatus   `json:"diffs"`
	// RefusedUpgrades counts handshakes refused for a missing/wrong token or an
	// Origin header: the CLI shows no error for those, diffs just stop appearing.
	RefusedUpgrades int `json:"refusedUpgrades"`
	QueuedMentions  int `json:"queuedMentions"`
	// IDEName is the name Claude Code's /ide shows; Others counts the other
	// Neovims running mcpdiff whose workspace overlaps this one's, and Chosen says
	// whether a `claude --ide` started outside Neovim in the cwd connects here.
	IDEName string `json:"ideName"`
	Others  int    `json:"others"`
	Chosen  bool   `json:"chosen"`
}

// ClientStatus describes one connected Claude Code client.
type ClientStatus struct {
	ID           string    `json:"id"`
	ClaudePID    int       `json:"claudePid,omitempty"` // from its ide_connected notification
	ConnectedAt  time.Time `json:"connectedAt"`
	Ready        bool      `json:"ready"` // the MCP handshake is complete
	Conversation string    `json:"conversation,omitempty"`
}

// DiffStatus describes one diff this server opened and has not closed yet.
type DiffStatus struct {
	TabName      string `json:"tabName"`
	Path         string `json:"path"`
	Status       string `json:"status"` // pending, saved or rejected
	NewFile      bool   `json:"newFile"`
	Client       string `json:"client"`
	Conversation string `json:"conversation"`
}

type serverState int

const (
	stateIdle serverState = iota
	stateRunning
	stateStopped
)

const (
	serverName = "mcpdiff-neovim"
	// maxMessageBytes bounds one incoming WebSocket message; openDiff carries whole
	// files, and frames of at least 64 MB must work.
	maxMessageBytes = 128 << 20
	// mentionTTL is how long an at_mentioned waits for a client to connect.
	mentionTTL = 10 * time.Second
	// maxQueuedMentions keeps the queue bounded when no client ever connects.
	maxQueuedMentions = 100
)

// Server is the Claude Code IDE protocol server. Create it with NewServer, then
// Start it; Stop ends it. All methods are safe for concurrent use.
type Server struct {
	opts   Options
	editor Editor
	token  string
	mcp    *server.MCPServer
	tools  map[string]bool // every tool name we serve, to answer unknown ones
	logf   func(format string, args ...any)

	// Timing knobs, unexported so tests can shorten them.
	pingInterval  time.Duration // WebSocket ping period; no pong for 2× → drop
	watchPoll     time.Duration // stat poll period while waiting for an accepted write
	watchTimeout  time.Duration // give up waiting for an accepted write after this
	stopGrace     time.Duration // Stop lets in-flight answers out for at most this long
	editorTimeout time.Duration // bound on teardown calls into the editor
	now           func() time.Time

	life     context.Context // ends when Stop has closed every client
	endLife  context.CancelFunc
	tasks    sync.WaitGroup // HTTP serving and accepted-write watchers
	claims   claims         // the writes recorded lately, for the hook's question (own lock)
	mu       sync.Mutex     // guards everything below
	state    serverState
	http     *http.Server
	port     int
	lockPath string
	folders  []string
	share    sharing // what the lock file tells of the other Neovims (peers.go)
	clients  map[*client]struct{}
	clientN  int
	diffs    map[string]*diff // by tab name
	watches  map[*writeWatch]struct{}
	mentions []queuedMention
	refused  int

	clientsChanged chan struct{} // wakes the OnClients reporter
}

// NewServer builds a server; nothing listens until Start.
func NewServer(o Options) *Server {
	if o.IDEName == "" {
		o.IDEName = "Neovim"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	token := o.Token
	if token == "" {
		token = randomHex(16)
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	life, endLife := context.WithCancel(context.Background())
	s := &Server{
		opts:          o,
		editor:        o.Editor,
		token:         token,
		logf:          logf,
		pingInterval:  30 * time.Second,
		watchPoll:     10 * time.Millisecond,
		watchTimeout:  30 * time.Second,
		stopGrace:     2 * time.Second,
		editorTimeout: 10 * time.Second,
		now:           time.Now,
		life:          life,
		endLife:       endLife,
		folders:       append([]string(nil), o.Workspace...),
		share:         sharing{real: realPaths(o.Workspace), active: time.Now().UnixNano()},
		clients:       map[*client]struct{}{},
		diffs:         map[string]*diff{},
		watches:       map[*writeWatch]struct{}{},
	}
	return s
}

// buildMCP makes the MCP server the clients' sessions run on. Start calls it once the
// lock file is written: nothing needs it before a client connects.
func (s *Server) buildMCP() {
	s.mcp = server.NewMCPServer(serverName, s.opts.Version,
		server.WithToolCapabilities(false),
		server.WithLogging(),
		server.WithRecovery(),
	)
	s.registerTools()
	s.mcp.AddNotificationHandler("notifications/initialized", s.onInitialized)
	s.mcp.AddNotificationHandler("ide_connected", s.onIDEConnected)
}

// resolveLockDir picks the lock-file folder the way the CLI looks for it: dir when
// given, else the first of idelock.Dirs.
func resolveLockDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if dirs := idelock.Dirs(); len(dirs) > 0 {
		return dirs[0], nil
	}
	return "", errors.New("ide: cannot find the lock-file folder: no home folder (set CLAUDE_CONFIG_DIR or Options.LockDir)")
}

// Start listens on 127.0.0.1 and writes the lock file, then serves. A Server starts
// once. The lock file is what Claude Code waits for: it is written as early as it can
// be, and a client that connects before the server serves waits in the listen queue.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateRunning:
		return errors.New("ide: server already started")
	case stateStopped:
		return errors.New("ide: server was stopped; create a new one with NewServer")
	}
	if err := s.validateOptions(); err != nil {
		return err
	}
	dir, err := resolveLockDir(s.opts.LockDir)
	if err != nil {
		return err
	}
	ln, err := s.listen()
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	lockPath := filepath.Join(dir, strconv.Itoa(port)+".lock")
	s.port, s.lockPath = port, lockPath
	if err := s.writeLockLocked(); err != nil {
		ln.Close()
		s.port, s.lockPath = 0, ""
		return err
	}
	s.buildMCP()
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(logfWriter(s.logf), "ide: http: ", 0),
	}
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("ide: serving 127.0.0.1:%d ended: %v", port, err)
		}
	}()
	if s.opts.OnClients != nil {
		s.clientsChanged = make(chan struct{}, 1)
		s.tasks.Add(1)
		go s.reportClients()
	}
	if s.opts.Share {
		s.tasks.Add(1)
		go s.watchPeers(peerDirs(s.opts.LockDir, dir))
	}
	s.state = stateRunning
	s.logf("ide: listening on 127.0.0.1:%d, lock file %s", port, lockPath)
	return nil
}

// reportClients calls OnClients with the number of clients each time it changed.
func (s *Server) reportClients() {
	defer s.tasks.Done()
	last := 0
	for {
		select {
		case <-s.life.Done():
			return
		case <-s.clientsChanged:
		}
		s.mu.Lock()
		n := len(s.clients)
		s.mu.Unlock()
		if n != last {
			s.opts.OnClients(n)
			last = n
		}
	}
}

// clientsDidChange wakes the reporter without ever blocking.
func (s *Server) clientsDidChange() {
	if s.clientsChanged == nil {
		return
	}
	select {
	case s.clientsChanged <- struct{}{}:
	default: // a wake-up is pending: it will read the latest count
	}
}

func (s *Server) validateOptions() error {
	if s.editor == nil {
		return errors.New("ide: Options.Editor is required")
	}
	if err := idelock.CheckPID(s.opts.PID); err != nil {
		return err
	}
	return checkFolders(s.folders)
}

func checkFolders(folders []string) error {
	for _, f := range folders {
		if !filepath.IsAbs(f) {
			return fmt.Errorf("ide: workspace folder %q is not an absolute path", f)
		}
	}
	return nil
}

// listen binds 127.0.0.1 only: the requested port when there is one (so a restarted
// server keeps its address), else, or when it is taken, a random free port. It asks
// for plain TCP over IPv4, which spares the probes of IPv6 and multipath TCP support
// that a listen on "tcp" makes first (neither has anything to offer on loopback).
func (s *Server) listen() (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	if s.opts.Port != 0 {
		ln, err := lc.Listen(context.Background(), "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.opts.Port)))
		if err == nil {
			return ln, nil
		}
		s.logf("ide: port %d is not available (%v); using a random port", s.opts.Port, err)
	}
	ln, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("ide: listen on 127.0.0.1: %w", err)
	}
	return ln, nil
}

// Stop rejects pending diffs, closes every client with 1001 "Server shutting down",
// closes the port and removes the lock file. It is idempotent.
func (s *Server) Stop() error {
	s.mu.Lock()
	if s.state != stateRunning {
		s.state = stateStopped
		s.mu.Unlock()
		s.endLife()
		return nil
	}
	s.state = stateStopped
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()

	closeErr := s.http.Close() // the port closes here: no new clients
	s.closeDiffs(s.takeDiffs(func(d *diff) bool { return d.how != ClientWrites }))
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.shutdown(s.stopGrace)
		}()
	}
	wg.Wait()
	s.endLife() // ends the accepted-write watchers
	s.tasks.Wait()
	lockErr := idelock.Remove(s.lockPath)
	s.logf("ide: stopped (port %d closed, lock file removed)", s.port)
	return errors.Join(closeErr, lockErr)
}

// Port is the port the server listens on (0 before Start).
func (s *Server) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// LockPath is the lock file's path ("" before Start).
func (s *Server) LockPath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lockPath
}

// Token is the secret clients must send in X-Claude-Code-Ide-Authorization.
func (s *Server) Token() string { return s.token }

// SetWorkspace replaces the lock file's workspaceFolders (absolute paths) and, when
// the server runs, rewrites the lock file.
func (s *Server) SetWorkspace(folders []string) error {
	if err := checkFolders(folders); err != nil {
		return err
	}
	real := realPaths(folders)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.folders, s.share.real = append([]string(nil), folders...), real
	if s.state != stateRunning {
		return nil
	}
	return s.writeLockLocked()
}

// writeLockLocked writes the lock file unless it holds that already (a rewrite wakes
// every other Neovim's bridge, which reads the lock files again).
func (s *Server) writeLockLocked() error {
	c := s.lockContentLocked()
	text := c.JSON()
	if bytes.Equal(text, s.share.written) {
		return nil
	}
	if err := idelock.Write(s.lockPath, c); err != nil {
		return err
	}
	s.share.written = text
	return nil
}

func (s *Server) lockContentLocked() idelock.Content {
	c := idelock.Content{
		PID:              s.opts.PID,
		WorkspaceFolders: s.folders,
		IDEName:          s.opts.IDEName,
		Transport:        "ws",
		AuthToken:        s.token,
		NvimServer:       s.opts.NvimServer,
	}
	if s.opts.Share {
		c.WorkspaceFolders, c.IDEName = s.shareLocked()
		c.NvimWorkspace, c.NvimActive = s.share.real, s.share.active
	}
	if c.WorkspaceFolders == nil {
		c.WorkspaceFolders = []string{} // the CLI expects an array, never null
	}
	return c
}

// Status is a snapshot of the server: port, lock file, clients and open diffs.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Running:          s.state == stateRunning,
		Port:             s.port,
		LockPath:         s.lockPath,
		WorkspaceFolders: append([]string{}, s.folders...),
		Clients:          []ClientStatus{},
		Diffs:            []DiffStatus{},
		RefusedUpgrades:  s.refused,
		QueuedMentions:   len(s.freshMentionsLocked()),
		IDEName:          s.opts.IDEName,
		Chosen:           true,
	}
	if s.opts.Share {
		_, st.IDEName = s.shareLocked()
		st.Others, st.Chosen = s.othersLocked()
	}
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	sort.Slice(clients, func(i, j int) bool { return clients[i].seq < clients[j].seq })
	for _, c := range clients {
		st.Clients = append(st.Clients, c.status())
	}
	for _, d := range s.diffs {
		st.Diffs = append(st.Diffs, DiffStatus{
			TabName:      d.req.TabName,
			Path:         d.req.NewPath,
			Status:       d.status(),
			NewFile:      d.req.NewFile,
			Client:       d.owner.id,
			Conversation: d.conv,
		})
	}
	sort.Slice(st.Diffs, func(i, j int) bool { return st.Diffs[i].TabName < st.Diffs[j].TabName })
	return st
}

// randomHex returns n CSPRNG bytes as lowercase hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (Go 1.24+: it crashes the program instead)
	return hex.EncodeToString(b)
}

// logfWriter adapts Logf to the io.Writer that net/http's ErrorLog needs.
type logfWriter func(format string, args ...any)

func (w logfWriter) Write(p []byte) (int, error) {
	w("%s", string(p))
	return len(p), nil
}
