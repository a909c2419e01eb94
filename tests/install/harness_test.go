// Package install installs the plugin as users do — with the real lazy.nvim, as a
// folder on 'runtimepath', as a native package — from a git repository of this
// checkout, in a clean HOME and XDG folders, and checks what a new user relies on:
// `make` builds bin/mcpdiff and doc/tags, `:help mcpdiff` opens, the bridge starts,
// `:checkhealth mcpdiff` has no ERROR, and a missing Go is one clear line. Without Go,
// on a release tag, `make` installs the released binary: the suite makes a release of
// the checkout (scripts/release, the sums committed and tagged as a release does) and
// serves it on 127.0.0.1, whole or broken in each way a download can be.
//
// Nothing here uses the network: plugin managers clone a local repository, Go builds
// from the module cache (GOPROXY=off) that `go mod download` filled, and releases
// come from 127.0.0.1. lazy.nvim comes from the folder $MCPDIFF_LAZY_NVIM names.
//
// Every test runs on each Neovim in $MCPDIFF_NVIMS (colon-separated; default
// /usr/bin/nvim and ~/.cache/nvim-0.10/bin/nvim when present); lazy.nvim needs 0.8 or
// newer and runs on those only.
package install

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// waitLimit bounds every wait, and commandLimit every command (a build of the binary,
// lazy.nvim's whole install); reaching one is a failure, never a pace.
var (
	waitLimit    = testenv.Scaled(60 * time.Second)
	commandLimit = testenv.Scaled(5 * time.Minute)
)

var (
	repoRoot string   // this checkout
	remotes  string   // a folder of git repositories plugin managers clone from
	srcRepo  string   // remotes/mcpdiff/mcpdiff: the checkout's files, committed
	suiteTmp string   // the suite's scratch folder
	nvims    []string // Neovim binaries to run every test on
	goEnv    []string // what `go build` needs to build from the module cache alone
	modCache string   // that module cache
)

// repo is the GitHub repository the install snippets of the README and the help name
// (TestSnippetsNameTheRepository); plugin managers name its folder after its last part.
const repo = "mcpdiff/mcpdiff"

func TestMain(m *testing.M) {
	code, err := setupSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/install:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setupSuite(m *testing.M) (int, error) {
	repoRoot = testenv.RepoRoot()
	nvims = testenv.FoundNeovims()
	if len(nvims) == 0 {
		return 0, fmt.Errorf("no Neovim found: set MCPDIFF_NVIMS")
	}
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		return 0, fmt.Errorf("go env: %v", err)
	}
	dirs := strings.Fields(string(out))
	if len(dirs) != 2 {
		return 0, fmt.Errorf("go env GOMODCACHE GOCACHE printed %q", out)
	}
	// The build cache is shared with the developer's: it only saves time, and the
	// module cache is the one `go mod download` filled.
	modCache = dirs[0]
	goEnv = []string{"GOMODCACHE=" + dirs[0], "GOCACHE=" + dirs[1], "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS="}

	tmp, err := os.MkdirTemp("", "mcpdiff-install-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	suiteTmp = tmp
	remotes = filepath.Join(tmp, "remotes")
	srcRepo = filepath.Join(remotes, filepath.FromSlash(repo))
	if err := snapshotCheckout(srcRepo); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// snapshotCheckout commits the checkout's files as they are on disk (tracked and new
// ones, not ignored ones: what a push would publish) into a new repository at dst.
func snapshotCheckout(dst string) error {
	list, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files in %s: %v", repoRoot, err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src := filepath.Join(repoRoot, name)
		info, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		} else if err != nil {
			return err
		}
		target := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			link, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return commitAll(dst, "snapshot of the checkout")
}

// commitAll makes dir a git repository with its files as the one commit.
func commitAll(dir, message string) error {
	return git(dir, [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", message}}...)
}

// git runs each git command in dir, as a committer with no configuration of their own.
func git(dir string, commands ...[]string) error {
	for _, args := range commands {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
	}
	return nil
}

// nvimVersion is the version `nvim --version` prints first, as [major, minor, patch].
func nvimVersion(t *testing.T, bin string) [3]int {
	t.Helper()
	var v [3]int
	if _, err := fmt.Sscanf(testenv.NeovimVersion(bin), "NVIM v%d.%d.%d", &v[0], &v[1], &v[2]); err != nil {
		t.Fatalf("%s --version: no version: %v", bin, err)
	}
	return v
}

// eachNvim runs fn as a subtest per Neovim binary whose version is at least min.
func eachNvim(t *testing.T, min [2]int, fn func(t *testing.T, nvimBin string)) {
	t.Helper()
	ran := false
	for _, bin := range nvims {
		v := nvimVersion(t, bin)
		if v[0] < min[0] || v[0] == min[0] && v[1] < min[1] {
			continue
		}
		ran = true
		t.Run(fmt.Sprintf("nvim-%d.%d.%d", v[0], v[1], v[2]), func(t *testing.T) { fn(t, bin) })
	}
	if !ran {
		testenv.SkipWithoutNeovim(t, fmt.Sprintf("needs Neovim %d.%d or newer in MCPDIFF_NVIMS (have %v)", min[0], min[1], nvims))
	}
}

// eventually polls cond until it holds, failing the test after waitLimit.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.EventuallyWithin(t, waitLimit, what, cond)
}

// user is a new user's machine: an empty HOME and XDG folders, a workspace to start
// Neovim in, and PATH.
type user struct {
	t      *testing.T
	home   string
	data   string // $XDG_DATA_HOME: where plugin managers install
	claude string // $CLAUDE_CONFIG_DIR: where the bridge writes its lock file
	ws     string // Neovim's working directory
	path   string
	extra  []string // more environment variables, such as MCPDIFF_RELEASE_URL
}

func newUser(t *testing.T) *user {
	t.Helper()
	base := t.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	u := &user{t: t, home: filepath.Join(base, "home"), claude: filepath.Join(base, "claude"),
		ws: filepath.Join(base, "ws"), path: os.Getenv("PATH")}
	u.data = filepath.Join(u.home, ".local", "share")
	for _, d := range []string{u.home, u.claude, u.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

func (u *user) env() []string {
	return append(append(testenv.HomeVars(u.home),
		"PATH="+u.path,
		"CLAUDE_CONFIG_DIR="+u.claude,
		"SHELL=/bin/sh",
		"TERM=xterm-256color",
		"GIT_CONFIG_NOSYSTEM=1",
	), append(goEnv, u.extra...)...)
}

// run runs a command as the user, in dir, and returns its combined output; one that
// has not ended within commandLimit is killed and fails the test.
func (u *user) run(dir, name string, args ...string) (string, error) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, u.env()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		u.t.Fatalf("%s %s in %s did not end within %v:\n%s", name, strings.Join(args, " "), dir, commandLimit, out)
	}
	return string(out), err
}

// clone clones the snapshot of the checkout into dir, as a user cloning the plugin.
func (u *user) clone(dir string) {
	u.t.Helper()
	if out, err := u.run(u.home, "git", "clone", "-q", srcRepo, dir); err != nil {
		u.t.Fatalf("git clone %s %s: %v\n%s", srcRepo, dir, err, out)
	}
}

// make runs `make` in a plugin folder and fails the test if it fails.
func (u *user) make(dir string) {
	u.t.Helper()
	start := time.Now()
	out, err := u.run(dir, "make")
	if err != nil {
		u.t.Fatalf("make in %s: %v\n%s", dir, err, out)
	}
	u.t.Logf("make in %s: %v", filepath.Base(dir), time.Since(start).Round(time.Millisecond))
}

// writeInit writes Neovim's init.lua for this user and returns its path.
func (u *user) writeInit(lua string) string {
	u.t.Helper()
	path := filepath.Join(u.home, ".config", "nvim", "init.lua")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		u.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(lua), 0o644); err != nil {
		u.t.Fatal(err)
	}
	return path
}

// headless runs `nvim --headless` with the user's init.lua and the given arguments
// (a first start, which lets a plugin manager install) and returns its output.
func (u *user) headless(nvimBin string, args ...string) (string, error) {
	u.t.Helper()
	return u.run(u.ws, nvimBin, append([]string{"--headless", "-i", "NONE", "-n"}, args...)...)
}

// session is a Neovim started by the user with their init.lua, driven over RPC.
type session struct {
	t *testing.T
	v *nvimrpc.Nvim
}

// start starts Neovim with the user's init.lua (as `nvim` does) and waits for the
// end of its start-up.
func (u *user) start(nvimBin string) *session {
	u.t.Helper()
	v := testenv.EmbedNeovim(u.t, nvimBin, u.ws, u.env())
	s := &session{t: u.t, v: v}
	u.t.Cleanup(func() { testenv.QuitNeovim(u.t, v) })
	eventually(u.t, "Neovim's start-up to end (VimEnter)", func() bool {
		var entered int
		return v.Eval("v:vim_did_enter", &entered) == nil && entered == 1
	})
	return s
}

// lua runs a Lua chunk in Neovim (its arguments are `...`).
func (s *session) lua(code string, result any, args ...any) {
	s.t.Helper()
	if err := s.v.ExecLua(code, result, args...); err != nil {
		s.t.Fatalf("lua: %v\n%s", err, code)
	}
}

// checkHelp checks that `:help mcpdiff` opens the help file of the plugin in dir.
func (s *session) checkHelp(dir string) {
	s.t.Helper()
	var got struct {
		Err     string `msgpack:"err"`
		Name    string `msgpack:"name"`
		Buftype string `msgpack:"buftype"`
	}
	s.lua(`
local ok, err = pcall(vim.cmd, "help mcpdiff")
if not ok then return { err = tostring(err) } end
return { err = "", name = vim.api.nvim_buf_get_name(0), buftype = vim.bo.buftype }`, &got)
	if got.Err != "" {
		s.t.Fatalf(":help mcpdiff: %s", got.Err)
	}
	want := filepath.Join(dir, "doc", "mcpdiff.txt")
	if got.Buftype != "help" || got.Name != want {
		s.t.Fatalf(":help mcpdiff opened %q (buftype %q), want %s", got.Name, got.Buftype, want)
	}
	s.lua(`vim.cmd("helpclose")`, nil)
}

// checkHealth runs `:checkhealth mcpdiff` and fails on any ERROR; it returns the report.
func (s *session) checkHealth() string {
	s.t.Helper()
	var lines []string
	s.lua(`vim.cmd("checkhealth mcpdiff"); return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "mcpdiff: binary") {
		s.t.Fatalf(":checkhealth mcpdiff did not run mcpdiff's checks:\n%s", text)
	}
	if strings.Contains(text, "ERROR") {
		s.t.Fatalf(":checkhealth mcpdiff reports an error:\n%s", text)
	}
	return text
}

// waitBridge waits for the bridge to run and write its lock file, and returns its port.
func (s *session) waitBridge(lockDir string) int {
	s.t.Helper()
	return testenv.WaitBridge(s.t, s.v, lockDir, waitLimit)
}

// loadedModules lists the mcpdiff Lua modules loaded so far.
func (s *session) loadedModules() []string {
	s.t.Helper()
	var mods []string
	s.lua(`
local mods = {}
for name in pairs(package.loaded) do
  if name == "mcpdiff" or name:find("^mcpdiff%.") then table.insert(mods, name) end
end
table.sort(mods)
return mods`, &mods)
	return mods
}

// nonEmptyLines splits output into its lines that hold more than blanks.
func nonEmptyLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// withoutGo returns $PATH as on a machine without Go: each folder of $PATH that holds
// `go` is replaced by one with links to everything else in it.
func withoutGo(t *testing.T) string {
	t.Helper()
	var dirs []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err != nil {
			dirs = append(dirs, dir)
			continue
		}
		shadow := t.TempDir()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() == "go" || e.Name() == "gofmt" {
				continue
			}
			if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(shadow, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, shadow)
	}
	path := strings.Join(dirs, string(filepath.ListSeparator))
	if p, err := testenv.LookPath("go", path); err == nil {
		t.Fatalf("go is still on the PATH made without it: %s", p)
	}
	return path
}

// tail is the end of a long output, without terminal colours, for failure messages.
func tail(out string) string {
	out = regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(out, "")
	if len(out) > 4000 {
		out = "..." + out[len(out)-4000:]
	}
	return out
}

// fileExists fails the test unless path exists (want) or does not (!want).
func fileExists(t *testing.T, path string, want bool) {
	t.Helper()
	_, err := os.Stat(path)
	if got := err == nil; got != want {
		t.Fatalf("%s exists: %v, want %v (%v)", path, got, want, err)
	}
}

// sameBytes fails the test unless the two files hold the same bytes.
func sameBytes(t *testing.T, what, gotPath, wantPath string) {
	t.Helper()
	got, err := os.ReadFile(gotPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %s differs from %s\n--- got\n%s\n--- want\n%s", what, gotPath, wantPath, got, want)
	}
}
