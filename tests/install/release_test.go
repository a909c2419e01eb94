package install

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The release the tests serve: built once, by scripts/release from the snapshot of
// the checkout, for this system; its sums committed on top of main and that commit
// tagged, as a release does (main stays no release). The commit is made in a clone
// and only its tag pushed to srcRepo, whose branch and files the tests running
// beside it clone meanwhile.
var (
	releaseOnce sync.Once
	releaseErr  error
	releaseBin  []byte // the binary, as served
)

// releaseTag is the tag of this version's release.
var releaseTag = "v" + mcpdiff.Version

// releaseName is the name of this system's binary in the release.
var releaseName = "mcpdiff-" + mcpdiff.Version + "-" + runtime.GOOS + "-" + runtime.GOARCH

// makeRelease builds the release (once) and returns the binary's bytes.
func makeRelease(t *testing.T) []byte {
	t.Helper()
	releaseOnce.Do(func() { releaseBin, releaseErr = buildRelease() })
	if releaseErr != nil {
		t.Fatal(releaseErr)
	}
	return releaseBin
}

func buildRelease() ([]byte, error) {
	build := filepath.Join(suiteTmp, "release-build")
	if out, err := exec.Command("git", "clone", "-q", srcRepo, build).CombinedOutput(); err != nil {
		return nil, &buildError{"git clone", err, out}
	}
	// The Go on PATH: this release is served here, not published.
	cmd := exec.Command("sh", "scripts/release", runtime.GOOS+"/"+runtime.GOARCH)
	cmd.Dir = build
	cmd.Env = append(append(os.Environ(), goEnv...), "MCPDIFF_RELEASE_TOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, &buildError{"scripts/release", err, out}
	}
	sums, err := os.ReadFile(filepath.Join(build, "release", "SHA256SUMS"))
	if err != nil {
		return nil, err
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("scripts/release wrote an empty release/SHA256SUMS")
	}
	err = git(build, []string{"add", "release/SHA256SUMS"}, []string{"commit", "-q", "-m", "release " + releaseTag},
		[]string{"tag", releaseTag}, []string{"push", "-q", "origin", "refs/tags/" + releaseTag})
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(build, "dist", releaseName))
}

type buildError struct {
	what string
	err  error
	out  []byte
}

func (e *buildError) Error() string { return e.what + ": " + e.err.Error() + "\n" + string(e.out) }

// How the fake release page answers for the binary.
const (
	served    = "served"    // the release's bytes
	tampered  = "tampered"  // other bytes: a script that would leave a mark if it ran
	truncated = "truncated" // half of the bytes, then the connection closes
	missing   = "missing"   // 404
	silent    = "silent"    // accepts the request and never answers
)

// releaseServer is the project's release page on 127.0.0.1, laid out as GitHub's
// (BASE/vX.Y.Z/NAME), answering for the binary as mode says; it counts requests.
type releaseServer struct {
	url      string
	requests atomic.Int32
	paths    chan string
	ranMark  string // the file the tampered binary would write
}

func serveRelease(t *testing.T, mode string) *releaseServer {
	t.Helper()
	bin := makeRelease(t)
	s := &releaseServer{paths: make(chan string, 16), ranMark: filepath.Join(t.TempDir(), "tampered-binary-ran")}
	evil := []byte("#!/bin/sh\n: > " + s.ranMark + "\necho mcpdiff " + mcpdiff.Version + "\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		select {
		case s.paths <- r.URL.Path:
		default:
		}
		if r.URL.Path != "/"+releaseTag+"/"+releaseName {
			http.NotFound(w, r)
			return
		}
		switch mode {
		case served:
			w.Write(bin)
		case tampered:
			w.Write(evil)
		case truncated:
			w.Header().Set("Content-Length", strconv.Itoa(len(bin)))
			w.Write(bin[:len(bin)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // ends the connection mid-body
		case missing:
			http.NotFound(w, r)
		case silent:
			<-r.Context().Done()
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	s.url = srv.URL
	return s
}

// releaseUser is a user without Go whose `make` fetches from s.
func releaseUser(t *testing.T, s *releaseServer) *user {
	t.Helper()
	u := newUser(t)
	u.path = withoutGo(t)
	// A short wait for the server that never answers, but long enough for a loaded
	// machine to start sending the release.
	wait := int(testenv.Scaled(2*time.Second).Seconds() + 0.5)
	u.extra = []string{"MCPDIFF_RELEASE_URL=" + s.url, "MCPDIFF_RELEASE_TIMEOUT=" + strconv.Itoa(max(wait, 1))}
	return u
}

// cloneRelease clones the release tag into dir, as a plugin manager pinned to it does.
func (u *user) cloneRelease(dir string) {
	u.t.Helper()
	if out, err := u.run(u.home, "git", "clone", "-q", "--branch", releaseTag, srcRepo, dir); err != nil {
		u.t.Fatalf("git clone --branch %s: %v\n%s", releaseTag, err, out)
	}
}

// makeFails runs `make` in plugin, which must fail with one line holding every one
// of want, and returns that line.
func (u *user) makeFails(plugin string, want ...string) string {
	u.t.Helper()
	out, err := u.run(plugin, "make")
	if err == nil {
		u.t.Fatalf("make succeeded:\n%s", out)
	}
	lines := nonEmptyLines(out)
	if len(lines) != 1 {
		u.t.Fatalf("make printed %d lines, want one:\n%s", len(lines), out)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			u.t.Fatalf("make's line lacks %q:\n%s", w, out)
		}
	}
	u.t.Logf("make: %s", lines[0])
	return lines[0]
}

// leftBehind lists what is in plugin beyond the clone and doc/tags.
func leftBehind(t *testing.T, plugin string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", plugin, "status", "--porcelain", "--ignored", "--untracked-files=all").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	var extra []string
	for _, l := range nonEmptyLines(string(out)) {
		if l != "!! doc/tags" {
			extra = append(extra, l)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(plugin, "bin")); err == nil {
		for _, e := range entries {
			extra = append(extra, "bin/"+e.Name())
		}
	}
	return extra
}

// On a release tag without Go, `make` downloads this system's binary from the release
// page (GitHub's layout), checks it against the tag's release/SHA256SUMS and installs
// it as bin/mcpdiff, executable, in one line; the clone stays clean. Running make
// again downloads nothing, also after a checkout touched the sources. The plugin runs
// the binary, and :checkhealth says it is the released one, of the plugin's version.
func TestReleaseWithoutGo(t *testing.T) {
	t.Parallel()
	s := serveRelease(t, served)
	u := releaseUser(t, s)
	plugin := filepath.Join(u.home, "src", "mcpdiff")
	u.cloneRelease(plugin)
	out, err := u.run(plugin, "make")
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	if lines := nonEmptyLines(out); len(lines) != 1 || !strings.Contains(lines[0], "installed bin/mcpdiff, the "+releaseTag+" release binary for "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Fatalf("make printed, want one line saying what it installed:\n%s", out)
	}
	if path := <-s.paths; path != "/"+releaseTag+"/"+releaseName {
		t.Fatalf("make fetched %s", path)
	}
	bin := filepath.Join(plugin, "bin", "mcpdiff")
	got, err := os.ReadFile(bin)
	if err != nil || !bytes.Equal(got, makeRelease(t)) {
		t.Fatalf("bin/mcpdiff is not the released binary (%v)", err)
	}
	if info, _ := os.Stat(bin); info.Mode().Perm()&0o111 == 0 {
		t.Fatalf("bin/mcpdiff is not executable: %v", info.Mode())
	}
	if out, err := u.run(plugin, bin, "version"); err != nil || !strings.HasPrefix(out, "mcpdiff "+mcpdiff.Version+" (release build") {
		t.Fatalf("bin/mcpdiff version: %v %q", err, out)
	}
	fileExists(t, filepath.Join(plugin, "doc", "tags"), true)
	if out, _ := u.run(plugin, "git", "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("git status after make:\n%s", out)
	}

	if out, err := u.run(plugin, "make"); err != nil || strings.Contains(out, "installed") {
		t.Fatalf("make again: %v\n%s", err, out)
	}
	if err := os.Chtimes(filepath.Join(plugin, "go.mod"), time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if out, err := u.run(plugin, "make"); err != nil || !strings.Contains(out, "is the "+releaseTag+" release binary") {
		t.Fatalf("make after the sources changed: %v\n%s", err, out)
	}
	if n := s.requests.Load(); n != 1 {
		t.Fatalf("three makes made %d requests, want 1", n)
	}

	u.writeInit(fmt.Sprintf("vim.opt.rtp:prepend(%q)\nrequire(\"mcpdiff\").setup({})\n", plugin))
	eachNvim(t, [2]int{0, 7}, func(t *testing.T, nv string) {
		u.t = t
		sess := u.start(nv)
		sess.waitBridge(u.claude)
		health := sess.checkHealth()
		if !strings.Contains(health, bin+" is version "+mcpdiff.Version+", as the Lua plugin is: the released binary") {
			t.Fatalf(":checkhealth mcpdiff does not say bin/mcpdiff is the released binary of the plugin's version:\n%s", health)
		}
	})
}

// Each way the install without Go can fail is one line saying what to do, and leaves
// nothing in the plugin folder; a download whose sum is wrong is never run.
func TestReleaseRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		mode     string
		prepare  func(t *testing.T, u *user, plugin string)
		want     []string
		requests int32
	}{
		{name: "sum differs", mode: tampered, requests: 1,
			want: []string{"has SHA-256", "release/SHA256SUMS of " + releaseTag + " says", "was not run", "install Go 1.25 or newer"}},
		{name: "truncated", mode: truncated, requests: 1, want: []string{"could not download", releaseName, "install Go 1.25 or newer"}},
		{name: "404", mode: missing, requests: 1, want: []string{"could not download", "404", "install Go 1.25 or newer"}},
		{name: "no answer", mode: silent, requests: 1, want: []string{"could not download", releaseName, "check the network"}},
		{name: "no server", mode: served, requests: 0, want: []string{"could not download", "check the network"},
			prepare: func(t *testing.T, u *user, _ string) { u.extra[0] = "MCPDIFF_RELEASE_URL=http://" + closedPort(t) }},
		{name: "no binary for the system", mode: served, requests: 0, want: []string{"has no binary for freebsd/arm64", "install Go 1.25 or newer"},
			prepare: func(t *testing.T, u *user, _ string) { u.path = fakeUname(t, "FreeBSD", "arm64") + ":" + u.path }},
		{name: "read-only plugin folder", mode: served, requests: 0, want: []string{"cannot write in", "/bin (a read-only plugin folder?)"},
			prepare: func(t *testing.T, _ *user, plugin string) { readOnly(t, plugin) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := serveRelease(t, c.mode)
			u := releaseUser(t, s)
			plugin := filepath.Join(u.home, "src", "mcpdiff")
			u.cloneRelease(plugin)
			if c.prepare != nil {
				c.prepare(t, u, plugin)
			}
			u.makeFails(plugin, append([]string{"mcpdiff: bin/mcpdiff not installed: "}, c.want...)...)
			if n := s.requests.Load(); n != c.requests {
				t.Fatalf("%d requests, want %d", n, c.requests)
			}
			if extra := leftBehind(t, plugin); len(extra) > 0 {
				t.Fatalf("left in the plugin folder: %q", extra)
			}
			fileExists(t, s.ranMark, false)
		})
	}
}

// A plugin folder that cannot be written at all, its doc/ too, is one line as well:
// make stops at doc/tags, which it writes first.
func TestReleaseReadOnlyDoc(t *testing.T) {
	t.Parallel()
	s := serveRelease(t, served)
	u := releaseUser(t, s)
	plugin := filepath.Join(u.home, "src", "mcpdiff")
	u.cloneRelease(plugin)
	readOnly(t, plugin)
	readOnly(t, filepath.Join(plugin, "doc"))
	u.makeFails(plugin, "mcpdiff: doc/tags not written: cannot write in "+filepath.Join(plugin, "doc")+" (a read-only plugin folder?)")
	if n := s.requests.Load(); n != 0 {
		t.Fatalf("%d requests", n)
	}
	fileExists(t, filepath.Join(plugin, "bin"), false)
	fileExists(t, filepath.Join(plugin, "doc", "tags"), false)
}

// Without Go on main, or anywhere not a release tag, make says that building needs
// Go, which is not there, and where to get it (TestMakeWithoutGo has the line), and
// asks nothing of the network.
func TestReleaseNotOnATag(t *testing.T) {
	t.Parallel()
	s := serveRelease(t, served)
	u := releaseUser(t, s)
	plugin := filepath.Join(u.home, "mcpdiff")
	u.clone(plugin)
	u.makeFails(plugin, "is not "+releaseTag, "needs Go 1.25 or newer", "https://go.dev/dl/")
	if n := s.requests.Load(); n != 0 {
		t.Fatalf("%d requests off a release tag", n)
	}
	if extra := leftBehind(t, plugin); len(extra) > 0 {
		t.Fatalf("left in the plugin folder: %q", extra)
	}
}

// A bin/mcpdiff of another version (an update to a new release tag) is replaced only
// by a download that is checked: a bad one leaves it as it was.
func TestReleaseReplacesAnotherVersion(t *testing.T) {
	t.Parallel()
	bad := serveRelease(t, tampered)
	u := releaseUser(t, bad)
	plugin := filepath.Join(u.home, "src", "mcpdiff")
	u.cloneRelease(plugin)
	bin := filepath.Join(plugin, "bin", "mcpdiff")
	old := []byte("#!/bin/sh\necho 'mcpdiff 0.0.1 (commit 0000000)'\n")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, old, 0o755); err != nil {
		t.Fatal(err)
	}
	// Built before the update checked out the tag's files.
	if err := os.Chtimes(bin, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	u.makeFails(plugin, "has SHA-256")
	if got, err := os.ReadFile(bin); err != nil || !bytes.Equal(got, old) {
		t.Fatalf("the old bin/mcpdiff changed after a failed download: %v %q", err, got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(bin)); len(entries) != 1 {
		t.Fatalf("bin/ holds %d files, want the old binary alone", len(entries))
	}

	good := serveRelease(t, served)
	u.extra[0] = "MCPDIFF_RELEASE_URL=" + good.url
	if out, err := u.run(plugin, "make"); err != nil || !strings.Contains(out, "installed bin/mcpdiff") {
		t.Fatalf("make with the release served: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(bin); !bytes.Equal(got, makeRelease(t)) {
		t.Fatal("bin/mcpdiff is not the released binary")
	}
}

// closedPort is a 127.0.0.1 address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// fakeUname is a folder with a uname that names another system.
func fakeUname(t *testing.T, system, machine string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\ncase \"$1\" in -m) echo " + machine + " ;; *) echo " + system + " ;; esac\n"
	if err := os.WriteFile(filepath.Join(dir, "uname"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readOnly makes a folder (not what it holds) unwritable until the test ends, for
// root too (chattr +i).
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i %s: %v %s", dir, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}
