package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdiff/mcpdiff"

	"github.com/mcpdiff/mcpdiff/bridge/filetools"
	"github.com/mcpdiff/mcpdiff/internal/atomicfile"
	"github.com/mcpdiff/mcpdiff/internal/connlimit"
	"github.com/mcpdiff/mcpdiff/internal/idelock"
	"github.com/mcpdiff/mcpdiff/internal/neovims"
	"github.com/mcpdiff/mcpdiff/internal/userkey"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// rootFlags collects repeated --root flags.
type rootFlags []string

func (r *rootFlags) String() string     { return strings.Join(*r, ",") }
func (r *rootFlags) Set(v string) error { *r = append(*r, v); return nil }

// serveOptions are the flags of `mcpdiff serve`.
type serveOptions struct {
	roots    rootFlags
	toolsets *string
	http     *string
	nvim     *string
	maxSize  *int64
	fsync    *bool
	limits   httpLimits
}

// httpLimits bound `serve --http`'s slow clients (SPEC section 12; docs/clients.md).
type httpLimits struct {
	header, idle time.Duration
	conns        int
}

// serveFlags declares serve's flags (also what its help lists).
func serveFlags(stderr io.Writer) (*flag.FlagSet, *serveOptions) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &serveOptions{}
	fs.Var(&o.roots, "root", "allowed `folder` (repeatable); default: the client's MCP roots, else the working directory")
	o.toolsets = fs.String("toolsets", "all", "comma-separated `toolsets`: "+strings.Join(filetools.Toolsets, ","))
	o.http = fs.String("http", "", "serve streamable HTTP on this loopback `address` (127.0.0.1:PORT) instead of stdio")
	o.nvim = fs.String("nvim", "", "Neovim's RPC `address` (default $NVIM): files with unsaved changes there are protected")
	o.maxSize = fs.Int64("max-file-size", workspace.DefaultMaxFileSize, "largest text file the tools read or edit, in `bytes`")
	o.fsync = fs.Bool("fsync", false, "fsync each written file and its folder (slower; see docs/behaviour.md)")
	fs.DurationVar(&o.limits.header, "http-header-timeout", 10*time.Second, "with --http: a connection that has not sent a request's headers within this `duration` is closed")
	fs.DurationVar(&o.limits.idle, "http-idle-timeout", 2*time.Minute, "with --http: a kept-alive connection idle for this `duration` is closed")
	fs.IntVar(&o.limits.conns, "http-max-conns", 64, "with --http: the most `connections` open at once; at the limit a new one takes the place of the oldest that is not serving a request")
	return fs, o
}

func runServe(args []string, stderr io.Writer) int {
	fs, o := serveFlags(stderr)
	toolsets, httpAddr, nvimAddr, maxSize, fsync := o.toolsets, o.http, o.nvim, o.maxSize, o.fsync
	*nvimAddr = os.Getenv("NVIM") // the default, unless --nvim says otherwise
	if err := fs.Parse(reorderFlags(args, fs)); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpdiff serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	logger := log.New(stderr, "mcpdiff serve: ", 0)
	cfg := filetools.Config{
		Roots: o.roots, MaxFileSize: *maxSize, Sync: *fsync, KeepSpares: true, Version: mcpdiff.Version, Logf: logger.Printf,
		FileRead: keepHeapWarm().fileRead,
	}
	if *httpAddr != "" {
		if err := checkHTTPAddr(*httpAddr); err != nil {
			fmt.Fprintf(stderr, "mcpdiff serve: %v\n", err)
			return exitUsage
		}
	}
	if err := o.limits.check(); err != nil {
		fmt.Fprintf(stderr, "mcpdiff serve: %v\n", err)
		return exitUsage
	}
	if *toolsets != "" && *toolsets != "all" {
		cfg.Toolsets = strings.Split(*toolsets, ",")
	}
	if *nvimAddr != "" {
		if b, err := neovims.Dial(*nvimAddr); err != nil {
			logger.Printf("Neovim at %s not reachable, serving without buffer checks: %v", *nvimAddr, err)
		} else {
			defer b.Close()
			b.Logf = logger.Printf
			cfg.Buffers = b
		}
	} else {
		cfg.Buffers = neovims.LockFiles{Dirs: idelock.Dirs()}
	}
	srv, err := filetools.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "mcpdiff serve: %v\n", err)
		return exitUsage
	}
	if *httpAddr != "" {
		if err := serveHTTP(srv, *httpAddr, o.limits, logger); err != nil {
			fmt.Fprintf(stderr, "mcpdiff serve: %v\n", err)
			return exitRefused
		}
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = srv.ServeStdio(ctx, os.Stdin, os.Stdout, logger)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "mcpdiff serve: %v\n", err)
		return exitRefused
	}
	return exitOK
}

// reorderFlags lets flags follow positional arguments, as every mcpdiff command allows.
func reorderFlags(args []string, fs *flag.FlagSet) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			if i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return append(flags, rest...)
}

// checkHTTPAddr refuses an --http address that is not loopback IP:PORT: bad usage,
// told before anything starts.
func checkHTTPAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: want 127.0.0.1:PORT", addr)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--http %q: only loopback addresses (127.0.0.1, ::1) are allowed", addr)
	}
	return nil
}

// serveHTTP serves streamable HTTP on addr, a loopback address (checkHTTPAddr has
// passed it). Every request must carry "Authorization: Bearer <token>"; the token is
// printed on start and written, mode 0600, to the file httpTokenPath names.
func serveHTTP(srv *filetools.Server, addr string, limits httpLimits, logger *log.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	token := os.Getenv("MCPDIFF_HTTP_TOKEN")
	if token == "" {
		var b [32]byte
		_, _ = rand.Read(b[:])
		token = hex.EncodeToString(b[:])
	}
	tokenFile := httpTokenPath(port)
	if err := writePrivate(tokenFile, token+"\n"); err != nil {
		ln.Close()
		return err
	}
	defer os.Remove(tokenFile)

	mcpHTTP := srv.HTTP("/mcp")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A web page the user visits can reach 127.0.0.1 too: refuse any request a
		// browser sent from a page that is not on loopback (its Origin), or that came
		// through a name rebound to 127.0.0.1 (its Host), token or not.
		if why := refusedOrigin(r); why != "" {
			http.Error(w, why, http.StatusForbidden)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "missing or wrong bearer token (see "+tokenFile+")", http.StatusUnauthorized)
			return
		}
		mcpHTTP.ServeHTTP(w, r)
	})
	logger.Printf("serving MCP on http://%s/mcp", ln.Addr())
	logger.Printf("bearer token: %s (also in %s)", token, tokenFile)

	// Slow clients are bounded: a request's headers within limits.header, a kept-alive
	// connection idle for limits.idle closed, at most limits.conns connections at
	// once, where a new one takes the place of the oldest that waits for headers or
	// idles (connlimit), so that half-open connections never keep a client out. No
	// write timeout: a client's event stream (GET /mcp) stays open as long as it wants.
	httpSrv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: limits.header,
		IdleTimeout:       limits.idle,
		MaxHeaderBytes:    64 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- httpSrv.Serve(connlimit.Limit(httpSrv, ln, limits.conns)) }()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-stop:
		_ = mcpHTTP.Shutdown(context.Background())
		return httpSrv.Shutdown(context.Background())
	}
}

// check refuses limits that would remove a bound.
func (l httpLimits) check() error {
	if l.header <= 0 || l.idle <= 0 {
		return errors.New("--http-header-timeout and --http-idle-timeout must be positive durations (for example 10s)")
	}
	if l.conns < 2 {
		return errors.New("--http-max-conns must be at least 2")
	}
	return nil
}

// refusedOrigin says why a request must be refused for where it comes from ("" when
// it may go on): an Origin header that is not a loopback origin ("null" included),
// or a Host that is not a loopback name.
func refusedOrigin(r *http.Request) string {
	if origin, ok := r.Header["Origin"]; ok {
		u, err := url.Parse(strings.Join(origin, ","))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackHost(u.Hostname()) {
			return "mcpdiff serves MCP to local clients only: requests from web pages (Origin " + strconv.Quote(strings.Join(origin, ",")) + ") are refused"
		}
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if !loopbackHost(strings.Trim(host, "[]")) {
		return "mcpdiff serves MCP on loopback only: Host " + strconv.Quote(r.Host) + " is refused"
	}
	return ""
}

// loopbackHost reports whether host names this machine's loopback interface.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpTokenPath is where `serve --http` writes its bearer token:
// $XDG_STATE_HOME/mcpdiff/http-<port>.token (default ~/.local/state/mcpdiff/).
func httpTokenPath(port int) string {
	return filepath.Join(userkey.Dir(), "http-"+strconv.Itoa(port)+".token")
}

// writePrivate writes a file only the user can read, in a folder only the user can enter.
func writePrivate(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(content), atomicfile.Options{Mode: 0o600})
}
