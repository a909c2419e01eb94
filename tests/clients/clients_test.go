//go:build unix

package clients

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// cliTimeout bounds one run of a CLI; reaching it is a failure, never a pace.
var cliTimeout = testenv.Scaled(3 * time.Minute)

// A cli is an agent CLI installed from npm into clientsDir/<pkg>.
type cli struct {
	pkg, bin, npm string
	// list is the command that lists the configured servers; connected tells from
	// its output whether it shows mcpdiff connected.
	list      []string
	connected func(out string) bool
}

// mcpdiffLine is the line of a list command's output that names the server.
func mcpdiffLine(out string, prefix *regexp.Regexp) string {
	for _, l := range strings.Split(stripANSI(out), "\n") {
		if prefix.MatchString(l) {
			return l
		}
	}
	return ""
}

var clis = map[string]cli{
	"claude": {pkg: "claude-code", bin: "claude", npm: "@anthropic-ai/claude-code@2.1.330", list: []string{"mcp", "list"},
		connected: func(out string) bool {
			l := mcpdiffLine(out, regexp.MustCompile(`^mcpdiff: `))
			return strings.HasSuffix(l, "✔ Connected") || strings.HasSuffix(l, "✓ Connected")
		}},
	"gemini": {pkg: "gemini-cli", bin: "gemini", npm: "@google/gemini-cli@0.61.0", list: []string{"mcp", "list"},
		connected: func(out string) bool {
			return strings.HasSuffix(mcpdiffLine(out, regexp.MustCompile(`^. mcpdiff: `)), " - Connected")
		}},
	"opencode": {pkg: "opencode", bin: "opencode", npm: "opencode-ai@1.18.33", list: []string{"mcp", "list"},
		connected: func(out string) bool {
			return strings.HasSuffix(mcpdiffLine(out, regexp.MustCompile(`✓ mcpdiff `)), "connected")
		}},
	// `codex mcp list` shows the configuration without starting the server: the
	// test runs a session against the fake model API and looks for mcpdiff's tools in
	// what Codex sends the model (codexSession).
	"codex": {pkg: "codex", bin: "codex", npm: "@openai/codex@0.169.0", list: []string{"mcp", "list"},
		connected: func(out string) bool {
			return strings.Contains(mcpdiffLine(out, regexp.MustCompile(`^mcpdiff `)), " enabled ")
		}},
}

func stripANSI(s string) string {
	return regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]").ReplaceAllString(s, "")
}

func TestReadmeConfigs(t *testing.T) {
	t.Parallel()
	if err := exec.Command("unshare", "-rn", "sh", "-c", "ip link set lo up").Run(); err != nil {
		testenv.SkipWithout(t, fmt.Sprintf("the CLIs run in a network namespace with only loopback, and `unshare -rn sh -c 'ip link set lo up'` failed here (%v): needs util-linux, iproute2 and user namespaces (or root)", err))
	}
	for _, c := range pageConfigs(t) {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			if c.client == "cursor" {
				checkCursor(t, c)
				return
			}
			cl := clis[c.client]
			bin := filepath.Join(clientsDir, cl.pkg, "node_modules", ".bin", cl.bin)
			if env := os.Getenv("MCPDIFF_CLAUDE_BIN"); c.client == "claude" && env != "" {
				bin = env // as tests/claude finds it
			}
			if _, err := os.Stat(bin); err != nil {
				testenv.SkipWithout(t, fmt.Sprintf("%s is not installed at %s: run `npm install %s` in %s (.ci/run does)", cl.bin, bin, cl.npm, filepath.Dir(filepath.Dir(filepath.Dir(bin)))))
			}
			p := newProject(t, filepath.Dir(bin))
			p.configure(c)
			start := time.Now()
			out := p.run(c.http, p.token, append([]string{cl.bin}, cl.list...)...)
			t.Logf("%s %s: %v", cl.bin, strings.Join(cl.list, " "), time.Since(start).Round(time.Millisecond))
			if !cl.connected(out) {
				t.Fatalf("%s %s does not show mcpdiff connected, with docs/clients.md's %s:\n%s", cl.bin, strings.Join(cl.list, " "), c, out)
			}
			if c.client == "codex" {
				p.codexSession(c, true)
			}
			if !c.http {
				return
			}
			// The check can fail: a server with another token is not connected to.
			if c.client == "codex" {
				p.codexSession(c, false)
				return
			}
			out = p.run(true, "not-"+p.token, append([]string{cl.bin}, cl.list...)...)
			if cl.connected(out) || mcpdiffLine(out, regexp.MustCompile(`mcpdiff`)) == "" {
				t.Fatalf("%s %s, server with another token: want mcpdiff listed and not connected:\n%s", cl.bin, strings.Join(cl.list, " "), out)
			}
		})
	}
}

// project is an empty HOME and a project folder, with mcpdiff and one CLI on PATH.
type project struct {
	t     *testing.T
	dir   string // the project: the CLI's working directory
	work  string // logs and the fake API's request log
	token string // $MCPDIFF_HTTP_TOKEN in the user's shell
	env   []string
	// fakeScript is the scripted fake model API's script (agents_test.go), "" for the
	// plain one.
	fakeScript string
}

func newProject(t *testing.T, cliBinDir string) *project {
	t.Helper()
	base := t.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	home, bin := filepath.Join(base, "home"), filepath.Join(base, "bin")
	p := &project{t: t, dir: filepath.Join(base, "project"), work: filepath.Join(base, "work"), token: randomToken(t)}
	for _, d := range []string{home, bin, p.dir, p.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(testenv.Binary, filepath.Join(bin, "mcpdiff")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.env = append(testenv.HomeVars(home),
		"PATH="+bin+string(filepath.ListSeparator)+cliBinDir+string(filepath.ListSeparator)+os.Getenv("PATH"),
		"MCPDIFF_HTTP_TOKEN="+p.token,
		"TERM=dumb",
		"NO_COLOR=1",
		"LANG=C.UTF-8",
		// OpenCode installs its plugin package into every config folder it loads
		// (npm's own code, in the background, waited for before the prompt runs);
		// offline, npm's retries take 70 s before it gives up. Told it is offline,
		// npm gives up at once, and OpenCode goes on as it does after its timeout.
		"npm_config_offline=true",
	)
	// Gemini CLI starts no server in a folder the user has not trusted; this is the
	// file its trust prompt writes.
	trusted := filepath.Join(home, ".gemini", "trustedFolders.json")
	if err := os.MkdirAll(filepath.Dir(trusted), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trusted, []byte(`{"`+p.dir+`": "TRUST_FOLDER"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func randomToken(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// configure sets the configuration up as docs/clients.md says: runs its line in the
// project, or writes its file there.
func (p *project) configure(c config) {
	p.t.Helper()
	if c.file != "" {
		path := filepath.Join(p.dir, c.file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			p.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			p.t.Fatal(err)
		}
		return
	}
	p.run(false, "", "sh", "-c", c.line)
}

// script runs in the network namespace: it brings loopback up, starts `mcpdiff serve
// --http` on the address docs/clients.md names when $SERVER_TOKEN is set and the fake model API
// when $FAKE_LOG is, waits for them to listen, and runs its arguments in the project.
const script = `
set -e
ip link set lo up
waitfor() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		if [ $i -gt 3000 ]; then echo "timed out waiting for $1" >&2; exit 1; fi
		sleep 0.01
	done
}
pids=
trap 'for p in $pids; do kill $p 2>/dev/null || true; done; wait' EXIT
if [ -n "$SERVER_TOKEN" ]; then
	MCPDIFF_HTTP_TOKEN="$SERVER_TOKEN" mcpdiff serve --http 127.0.0.1:8123 2>>"$WORK/serve.log" &
	pids="$pids $!"
	waitfor "$XDG_STATE_HOME/mcpdiff/http-8123.token"
fi
if [ -n "$FAKE_LOG" ]; then
	MCPDIFF_FAKE_RESPONSES=127.0.0.1:8124 MCPDIFF_FAKE_RESPONSES_LOG="$FAKE_LOG" MCPDIFF_FAKE_SCRIPT="$FAKE_SCRIPT" "$SELF" &
	pids="$pids $!"
	waitfor "$FAKE_LOG"
fi
cd "$PROJECT"
set +e
"$@"
`

// run runs args in the project, inside a network namespace with only loopback, with
// `mcpdiff serve --http` running there when http is set (with serverToken), and
// returns the combined output; a failing command fails the test.
func (p *project) run(http bool, serverToken string, args ...string) string {
	p.t.Helper()
	return p.runWith(http, serverToken, "", args...)
}

func (p *project) runWith(http bool, serverToken, fakeLog string, args ...string) string {
	p.t.Helper()
	self, err := os.Executable()
	if err != nil {
		p.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"-rn", "sh", "-c", script, "sh"}, args...)...)
	cmd.Env = append(append([]string{}, p.env...), "PROJECT="+p.dir, "WORK="+p.work, "SELF="+self, "FAKE_LOG="+fakeLog, "FAKE_SCRIPT="+p.fakeScript)
	if http {
		cmd.Env = append(cmd.Env, "SERVER_TOKEN="+serverToken)
	}
	cmd.Dir = p.dir
	// The whole group goes on a timeout: the CLI, the servers it started, ours.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		p.t.Fatalf("%q did not end within %v:\n%s", args, cliTimeout, out)
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(p.work, "serve.log"))
		p.t.Fatalf("%q: %v\n%s\nmcpdiff serve --http's log:\n%s", args, err, out, log)
	}
	return string(out)
}

// codexSession runs one `codex exec` turn against the fake model API and checks
// whether the request Codex sends the model holds mcpdiff's tools (namespace
// mcp__mcpdiff, described by the instructions mcpdiff serve gives at initialize).
func (p *project) codexSession(c config, want bool) {
	p.t.Helper()
	token := p.token
	if !want {
		token = "not-" + p.token
	}
	logPath := filepath.Join(p.work, "requests-"+map[bool]string{true: "ok", false: "wrong-token"}[want]+".log")
	provider := `model_providers.mcpdiff_test={name="fake",base_url="http://127.0.0.1:8124/v1",wire_api="responses",env_key="FAKE_OPENAI_KEY"}`
	start := time.Now()
	out := p.runWith(c.http, token, logPath, "env", "FAKE_OPENAI_KEY=test", "codex", "exec", "--skip-git-repo-check",
		"-c", "model_provider=mcpdiff_test", "-c", provider, "Which tools do you have?")
	p.t.Logf("codex exec (want mcpdiff's tools: %v): %v", want, time.Since(start).Round(time.Millisecond))
	requests, err := os.ReadFile(logPath)
	if err != nil {
		p.t.Fatal(err)
	}
	if !strings.Contains(string(requests), "POST /v1/responses") {
		p.t.Fatalf("codex exec sent the model API no request:\n%s\n%s", out, requests)
	}
	got := strings.Contains(string(requests), "mcp__mcpdiff") && strings.Contains(string(requests), "mcpdiff's file tools")
	if got != want {
		p.t.Fatalf("codex exec with docs/clients.md's %s: mcpdiff's tools in the model request: %v, want %v\n%s", c, got, want, out)
	}
}

// listen listens on addr (the fake model API).
func listen(addr string) (net.Listener, error) {
	return net.Listen("tcp", addr)
}
