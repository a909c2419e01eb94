//go:build unix

// Package clients checks the section "Setting up each client" of docs/clients.md: each
// stdio and HTTP configuration it shows for Claude Code, Gemini CLI, Codex CLI,
// OpenCode and Cursor is read from that page, set up as a user would in an empty HOME
// and project, and
// used by the real CLI, whose list-the-servers command must show `mcpdiff serve`
// connected (and not connected when the server has another token).
//
// The CLIs run in a network namespace with only loopback (`unshare -rn`), so nothing
// reaches the network. Each CLI is skipped, saying why, when it is not installed in
// ~/.cache/mcpdiff/<name> ($MCPDIFF_CLIENTS_DIR); .ci/run installs them. Cursor's CLI
// is not on npm: its entries are used by an MCP client of this test the way Cursor's
// documentation says Cursor uses them.
package clients

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

var (
	repoRoot   string
	clientsDir string // where the CLIs' npm packages are installed
)

// The fake model API for Codex runs as this test binary, started inside the network
// namespace: MCPDIFF_FAKE_RESPONSES=<addr> serves there, appending each request body
// to the file MCPDIFF_FAKE_RESPONSES_LOG and creating it once listening.
const (
	fakeAddrEnv = "MCPDIFF_FAKE_RESPONSES"
	fakeLogEnv  = "MCPDIFF_FAKE_RESPONSES_LOG"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(fakeAddrEnv); addr != "" {
		serve := serveFakeResponses
		if script := os.Getenv(fakeScriptEnv); script != "" {
			serve = func(addr, log string) error { return serveScripted(addr, log, script) }
		}
		if err := serve(addr, os.Getenv(fakeLogEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "fake Responses API:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.Main(m, testenv.Suite{Setup: setupSuite})
}

func setupSuite() error {
	repoRoot = testenv.RepoRoot()
	clientsDir = os.Getenv("MCPDIFF_CLIENTS_DIR")
	if clientsDir == "" {
		home, _ := os.UserHomeDir()
		clientsDir = filepath.Join(home, ".cache", "mcpdiff")
	}
	return nil
}

// serveFakeResponses answers every request as OpenAI's Responses API streams an
// empty answer, and logs the request bodies: what Codex sends the model, tools
// included.
func serveFakeResponses(addr, logPath string) error {
	log, err := os.OpenFile(logPath+".tmp", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(log, "%s %s %s\n", r.Method, r.URL.Path, body)
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []map[string]any{
			{"type": "response.created", "response": map[string]any{"id": "resp_1"}},
			{"type": "response.completed", "response": map[string]any{"id": "resp_1", "output": []any{},
				"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}},
		} {
			data, _ := json.Marshal(ev)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
		}
	})
	srv := &http.Server{Addr: addr, Handler: handler}
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	// The log's final name tells the script the server listens.
	if err := os.Rename(logPath+".tmp", logPath); err != nil {
		return err
	}
	return srv.Serve(ln)
}

// A config is one configuration the page shows: a command line to run in the
// project, or a file to write there.
type config struct {
	client string // the CLI's command name: claude, gemini, codex, opencode, cursor
	http   bool   // connects to `mcpdiff serve --http` rather than starting it
	line   string // a shell command line, or
	file   string // a file (relative to the project) and
	body   string // its content
}

func (c config) String() string {
	kind := "stdio"
	if c.http {
		kind = "http"
	}
	return c.client + "-" + kind
}

// httpURL is the address the page's HTTP configurations use.
const httpURL = "http://127.0.0.1:8123/mcp"

// clientsPage is the page that shows the configurations, and section their section.
const (
	clientsPage = "docs/clients.md"
	section     = "## Setting up each client"
)

// pageConfigs reads the configurations of the page's section: each
// `claude|gemini|codex ... mcp add` line of its sh blocks, and each block whose info
// string names a file ("json opencode.json").
func pageConfigs(t *testing.T) []config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, clientsPage))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n"+section+"\n")
	if start < 0 {
		t.Fatalf("%s has no section %q", clientsPage, section)
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	fileClients := map[string]string{"opencode.json": "opencode", ".cursor/mcp.json": "cursor"}
	var configs []config
	for _, m := range regexp.MustCompile("(?ms)^```([a-z]+)(?: (\\S+))?\n(.*?)^```").FindAllStringSubmatch(section, -1) {
		lang, file, body := m[1], m[2], m[3]
		if file != "" {
			client, ok := fileClients[file]
			if !ok {
				t.Fatalf("%s: a block for %s, which this test does not know", clientsPage, file)
			}
			configs = append(configs, config{client: client, http: strings.Contains(body, httpURL), file: file, body: body})
			continue
		}
		if lang != "sh" {
			continue
		}
		for _, line := range strings.Split(body, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[1] == "mcp" && f[2] == "add" {
				configs = append(configs, config{client: f[0], http: strings.Contains(line, httpURL), line: line})
			}
		}
	}
	// Every client has both, so that the page cannot lose one unnoticed.
	for _, client := range []string{"claude", "gemini", "codex", "opencode", "cursor"} {
		for _, http := range []bool{false, true} {
			n := 0
			for _, c := range configs {
				if c.client == client && c.http == http {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%s's %q has %d %s configurations for %s, want 1", clientsPage, section, n, map[bool]string{false: "stdio", true: "HTTP"}[http], client)
			}
		}
	}
	return configs
}
