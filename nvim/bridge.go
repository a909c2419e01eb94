package nvim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/bridge/ide"
	"github.com/mcpdiff/mcpdiff/internal/jsonscan"
	"github.com/mcpdiff/mcpdiff/internal/neovims"
)

// Environment variables the plugin sets when it restarts a bridge that died, so that
// the new IDE server comes back on the same address and Claude Code reconnects.
const (
	EnvPort  = "MCPDIFF_IDE_PORT"
	EnvToken = "MCPDIFF_IDE_TOKEN"
	// EnvNeovim is what the plugin knows of its Neovim when it starts the bridge
	// (JSON of require("mcpdiff.bridge").neovim_info()): with it the lock file is
	// written without waiting for Neovim, which answers nothing until its start-up
	// is over.
	EnvNeovim = "MCPDIFF_NEOVIM"
)

// BridgeOptions configures RunBridge.
type BridgeOptions struct {
	Version string // reported to the plugin, which checks it against its own
	// NewRecorder, optional, makes the recorder of diffs accepted in Neovim for the
	// workspace folders (Neovim's cwd and LSP roots, known once attached).
	NewRecorder func(folders []string) ide.Recorder
	// AfterDiffs, optional, is the IDE server's ide.Options.AfterDiffs.
	AfterDiffs func()
	LockDir    string // "" = $CLAUDE_CONFIG_DIR/ide or ~/.claude/ide
	Logf       func(format string, args ...any)
}

// bridge is one `mcpdiff nvim` process: a Neovim on stdio and an IDE server.
type bridge struct {
	v      *nvimrpc.Nvim
	editor *Editor
	opts   BridgeOptions
	logf   func(format string, args ...any)

	review *reviewer // pending changes and reloads, following the stores

	mu       sync.Mutex
	server   *ide.Server  // nil until attached
	pid      int          // Neovim's, once the server runs
	lsp      []string     // LSP workspace folders, kept when the cwd changes
	recorder ide.Recorder // records accepted diffs; follows the cwd
}

// RunBridge serves the Neovim at the other end of in/out (the plugin's
// jobstart(..., {rpc = true})) until Neovim closes the channel or ctx ends. It starts
// the IDE server once Neovim told it its PID and cwd, and on the way out stops it:
// pending diffs are answered as rejected, the port closes and the lock file goes.
func RunBridge(ctx context.Context, in io.Reader, out io.WriteCloser, opts BridgeOptions) error {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	v, err := nvimrpc.New(in, out, out, logf)
	if err != nil {
		return fmt.Errorf("attach to Neovim: %w", err)
	}
	b := &bridge{v: v, editor: NewEditor(v, logf), opts: opts, logf: logf}
	// The lock file first, which is what Claude Code waits for: from what the plugin
	// put in the environment, the IDE server starts before the rest is set up.
	var started error
	if info, ok := b.envNeovimInfo(); ok {
		started = b.startServer(info)
	}
	b.review = newReviewer(v, logf)
	defer b.review.close()
	served := make(chan error, 1)
	if err := b.registerHandlers(); err != nil {
		v.Close() // attach's calls to Neovim then fail at once
		served <- err
	} else {
		go func() { served <- v.Serve() }()
	}
	attached := make(chan error, 1)
	go func() {
		if started != nil {
			attached <- started
			return
		}
		attached <- b.attach(ctx)
	}()

	runErr := b.wait(ctx, served, attached)
	stopErr := b.stop()
	v.Close()
	b.editor.Close()
	return errors.Join(runErr, stopErr)
}

// wait returns when Neovim closes the channel or ctx ends, and never before attach
// is over (so no server starts after the caller stopped it).
func (b *bridge) wait(ctx context.Context, served, attached <-chan error) error {
	select {
	case err := <-attached:
		if err != nil {
			return err
		}
		select {
		case err := <-served:
			return connectionError(err)
		case <-ctx.Done():
			return nil
		}
	case err := <-served:
		<-attached // fails at once: the connection is closed
		return connectionError(err)
	case <-ctx.Done():
		b.v.Close()
		<-attached
		return nil
	}
}

func connectionError(err error) error {
	if err != nil {
		return fmt.Errorf("neovim connection: %w", err)
	}
	return nil
}

// handlers are the methods the Lua plugin calls on the bridge (its notify_go and
// request): the one list of their names, which TestLuaCallsOnlyTheseHandlers checks
// every call of lua/mcpdiff against.
func (b *bridge) handlers() map[string]any {
	return map[string]any{
		"mcpdiff_accept": func(buf int, changed, empty bool, format luaFormat) {
			b.editor.accept(buf, changed, empty, format)
		},
		"mcpdiff_reject": func(buf int) { b.editor.reject(buf) },
		"mcpdiff_selection": func(params map[string]any) {
			if s := b.ideServer(); s != nil {
				s.Broadcast("selection_changed", params)
			}
		},
		"mcpdiff_mention": func(params map[string]any) {
			if s := b.ideServer(); s != nil {
				s.AtMention(params)
			}
		},
		"mcpdiff_cwd": func(cwd string) { b.setCwd(cwd) },
		"mcpdiff_current": func(file string) {
			if s := b.ideServer(); s != nil {
				s.SetCurrentFile(file)
			}
		},
		"mcpdiff_focus": func() {
			if s := b.ideServer(); s != nil {
				s.Touch()
			}
		},
		"mcpdiff_status":  b.status,
		"mcpdiff_buffers": b.review.setBuffers,
		"mcpdiff_changes": b.review.changes,
		"mcpdiff_pending": b.review.pending,
		"mcpdiff_review":  b.review.list,
		"mcpdiff_saved":   b.review.saved,
	}
}

func (b *bridge) registerHandlers() error {
	for method, fn := range b.handlers() {
		if err := b.v.RegisterHandler(method, fn); err != nil {
			return fmt.Errorf("register %s: %w", method, err)
		}
	}
	return nil
}

func (b *bridge) ideServer() *ide.Server {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.server
}

// neovimInfo is what the bridge needs to know about its Neovim to start.
type neovimInfo struct {
	PID int      `msgpack:"pid" json:"pid"`
	Cwd string   `msgpack:"cwd" json:"cwd"`
	LSP []string `msgpack:"lsp" json:"lsp"`
	// v:servername: where Claude Code's hook asks about unsaved buffers.
	Server string `msgpack:"server" json:"server"`
	// The file of the current buffer ("" for none): it names this Neovim while
	// others share its workspace.
	File string `msgpack:"file" json:"file"`
}

// envNeovimInfo is Neovim's description from the environment the plugin set.
func (b *bridge) envNeovimInfo() (neovimInfo, bool) {
	env := os.Getenv(EnvNeovim)
	if env == "" {
		return neovimInfo{}, false
	}
	info, err := parseNeovimInfo(env)
	if err != nil || info.PID <= 0 || info.Cwd == "" {
		b.logf("nvim: ignoring a malformed $%s: %q", EnvNeovim, env)
		return neovimInfo{}, false
	}
	return info, true
}

// parseNeovimInfo reads the JSON of a neovimInfo with jsonscan: encoding/json's
// first use in a process (its code paged in, the type's decoder built) took most of
// a millisecond before the lock file could be written. What jsonscan does not read
// goes to encoding/json.
func parseNeovimInfo(text string) (neovimInfo, error) {
	var info neovimInfo
	sc := jsonscan.New(text)
	ok := sc.Object(func(key string) bool {
		var ok bool
		switch { // keys match as encoding/json matches them: ignoring case
		case strings.EqualFold(key, "pid"):
			var pid int64
			pid, ok = sc.Int()
			info.PID = int(pid)
		case strings.EqualFold(key, "cwd"):
			info.Cwd, ok = sc.String()
		case strings.EqualFold(key, "server"):
			info.Server, ok = sc.String()
		case strings.EqualFold(key, "file"):
			info.File, ok = sc.String()
		case strings.EqualFold(key, "lsp"):
			info.LSP = nil
			ok = sc.Null() || sc.Array(func() bool {
				folder, ok := sc.String()
				info.LSP = append(info.LSP, folder)
				return ok
			})
		default:
			_, ok = sc.Skip()
		}
		return ok
	}) && sc.End()
	if ok {
		return info, nil
	}
	info = neovimInfo{}
	return info, json.Unmarshal([]byte(text), &info)
}

// attach starts the IDE server unless it runs already (asking Neovim for its
// description first), and tells the plugin where it listens. It runs while Serve
// reads Neovim's answers (a call before Serve would block forever).
func (b *bridge) attach(ctx context.Context) error {
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if b.ideServer() == nil {
		var info neovimInfo
		err := neovims.CallLua(callCtx, b.v, "read Neovim's pid and cwd", "bridge.neovim_info", &info)
		if err == nil {
			err = b.startServer(info)
		}
		if err != nil {
			return err
		}
	}
	b.mu.Lock()
	s, pid := b.server, b.pid
	b.mu.Unlock()
	report := map[string]any{
		"port":    s.Port(),
		"lock":    s.LockPath(),
		"token":   s.Token(),
		"version": b.opts.Version,
		"pid":     pid,
	}
	return neovims.CallLua(callCtx, b.v, "report the bridge", "bridge._attached", nil, report)
}

// startServer starts the IDE server of the Neovim info describes: its lock file is
// written when this returns.
func (b *bridge) startServer(info neovimInfo) error {
	port, _ := strconv.Atoi(os.Getenv(EnvPort))
	workspace := folders(info.Cwd, info.LSP)
	var recorder ide.Recorder
	if b.opts.NewRecorder != nil {
		recorder = b.opts.NewRecorder(workspace)
	}
	s := ide.NewServer(ide.Options{
		Editor:     b.editor,
		LockDir:    b.opts.LockDir,
		PID:        info.PID,
		Workspace:  workspace,
		Port:       port,
		Token:      os.Getenv(EnvToken),
		Version:    b.opts.Version,
		Recorder:   recorder,
		Logf:       b.logf,
		OnClients:  b.reportClients,
		AfterDiffs: b.opts.AfterDiffs,

		NvimServer: info.Server,
		Share:      true,
	})
	if err := s.Start(); err != nil {
		return fmt.Errorf("start the IDE server: %w", err)
	}
	s.SetCurrentFile(info.File) // after the lock file: it names the file only when shared
	b.mu.Lock()
	b.server, b.pid, b.lsp, b.recorder = s, info.PID, info.LSP, recorder
	b.mu.Unlock()
	return nil
}

// folders is the lock file's workspaceFolders: the cwd first, then LSP roots.
func folders(cwd string, lsp []string) []string {
	out := []string{cwd}
	for _, f := range lsp {
		if f != cwd {
			out = append(out, f)
		}
	}
	return out
}

func (b *bridge) setCwd(cwd string) {
	b.mu.Lock()
	s, lsp, recorder := b.server, b.lsp, b.recorder
	b.mu.Unlock()
	if s == nil {
		return
	}
	fs := folders(cwd, lsp)
	if err := s.SetWorkspace(fs); err != nil {
		b.logf("nvim: update the workspace to %s: %v", cwd, err)
	}
	if r, ok := recorder.(interface{ SetFolders([]string) }); ok {
		r.SetFolders(fs) // accepted diffs are recorded in the new workspace's history
	}
}

// status answers :McpDiffStatus (an rpcrequest: it must not call back into Neovim).
func (b *bridge) status() (map[string]any, error) {
	s := b.ideServer()
	if s == nil {
		return map[string]any{"running": false}, nil
	}
	data, err := json.Marshal(s.Status())
	if err != nil {
		return nil, fmt.Errorf("encode the status: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode the status: %w", err)
	}
	return out, nil
}

// reportClients tells the plugin the number of connected clients, so it tracks the
// selection only while someone listens.
func (b *bridge) reportClients(n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := neovims.CallLua(ctx, b.v, "report clients", "bridge._clients", nil, n); err != nil {
		b.logf("tell Neovim the number of clients: %v", err)
	}
}

func (b *bridge) stop() error {
	s := b.ideServer()
	if s == nil {
		return nil
	}
	if err := s.Stop(); err != nil {
		return fmt.Errorf("stop the IDE server: %w", err)
	}
	return nil
}
