package testenv

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Binary is the mcpdiff binary under test, set by Main.
var Binary string

// raceLogs is where the binary's data race reports go (GORACE log_path).
var raceLogs string

// Build says how Main gets the binary when $MCPDIFF_BIN is not set.
type Build int

const (
	// RaceBuild builds with -race: the end-to-end suites, where the binary's
	// goroutines (the bridge, serve, hooks) run for real.
	RaceBuild Build = iota
	// PlainBuild builds without, and without cgo as make does: benchmarks, which time
	// the binary users run.
	PlainBuild
)

// Suite says how Main runs a suite.
type Suite struct {
	Build Build
	// Setup, when not nil, runs before the tests, once the binary is known; its error
	// fails the suite.
	Setup func() error
	// Done, when not nil, runs after the tests (benchmarks print their tables).
	Done func()
	// BenchOnly: without -bench (under `go test ./...`) the tests run with nothing
	// built and no Setup.
	BenchOnly bool
}

// Main runs a suite of tests that run the mcpdiff binary, and exits. The binary is
// $MCPDIFF_BIN, else built into a temp folder as s.Build says. Every process the
// suite starts inherits GORACE (use Env for a hand-made environment): a -race binary
// exits at once (no atexit sleep) and writes its reports to a folder that Main reads
// after the tests; any report fails the suite, printed in full. They also inherit an
// XDG_STATE_HOME of the suite's own, so the stores they and the tests make are
// signed with a key of the suite's (see ShareKey), never the user's.
func Main(m *testing.M, s Suite) {
	os.Exit(run(m, s))
}

func run(m *testing.M, s Suite) int {
	flag.Parse()
	if s.BenchOnly && !Benchmarking() {
		return m.Run()
	}
	if err := noStoreAbove(os.TempDir()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The suite's sandbox: its temp folders (TMPDIR, hence t.TempDir), races and key,
	// removed at its end. The name is short: the Unix sockets of the tests (Neovim's
	// --listen) live below it, within the 108 bytes of a socket path.
	dir, err := os.MkdirTemp("", "md")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("TMPDIR", dir)
	raceLogs = filepath.Join(dir, "races")
	if err := os.Mkdir(raceLogs, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	os.Setenv("GORACE", goraceValue())
	Binary = os.Getenv("MCPDIFF_BIN")
	if Binary == "" {
		if Binary, err = BuildBinary(dir, s.Build); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if s.Setup != nil {
		if err := s.Setup(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	if s.Done != nil {
		s.Done()
	}
	if reports := RaceReports(); reports != "" {
		fmt.Fprintf(os.Stderr, "FAIL: data races in processes of %s the tests started:\n%s\n", Binary, reports)
		return 1
	}
	return code
}

// noStoreAbove refuses to run the suites below a folder an edit history lives in:
// mcpdiff finds a store by walking up from a file, so such a store would take the
// tests' workspaces as its own (their hooks recording into it, or refusing it as
// another user's).
func noStoreAbove(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".mcp", "edit_history")); err == nil {
			return fmt.Errorf("an edit history at %s would hold the tests' workspaces below %s: move it away (or set TMPDIR to a folder with none above it), then run the tests again", filepath.Join(d, ".mcp"), dir)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// BuildBinary builds cmd/mcpdiff into dir as b says and returns its path.
func BuildBinary(dir string, b Build) (string, error) {
	bin := filepath.Join(dir, "mcpdiff")
	args := []string{"build", "-o", bin}
	if b == RaceBuild {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/mcpdiff")...)
	build.Dir = RepoRoot()
	if b == PlainBuild {
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
	}
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build mcpdiff: %v\n%s", err, out)
	}
	return bin, nil
}

func goraceValue() string {
	return "atexit_sleep_ms=0 log_path=" + filepath.Join(raceLogs, "race")
}

// LookPath finds an executable in the PATH given (not this process's, as
// exec.LookPath does): where a program started with that PATH finds name.
func LookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// Env is an environment of exactly kv plus PATH, GORACE and the suite's
// XDG_STATE_HOME (its key, see Main), for processes that must not see the user's
// settings. A later entry of kv wins.
func Env(kv ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + os.Getenv("XDG_STATE_HOME")}
	if raceLogs != "" {
		env = append(env, "GORACE="+goraceValue())
	}
	return append(env, kv...)
}

// RaceReports is every data race report written so far by processes the suite
// started, or "".
func RaceReports() string {
	if raceLogs == "" {
		return ""
	}
	files, _ := filepath.Glob(filepath.Join(raceLogs, "race*"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&b, "%s:\n%s\n", f, data)
	}
	return b.String()
}
