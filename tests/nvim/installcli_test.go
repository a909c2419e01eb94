//go:build unix

package nvimtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// usePath sets Neovim's $PATH to dirs followed by the test's own PATH (which has no
// mcpdiff), as a shell profile would have set it before Neovim started.
func (s *session) usePath(dirs ...string) {
	s.t.Helper()
	s.lua(`vim.env.PATH = ...`, nil, strings.Join(append(dirs, os.Getenv("PATH")), ":"))
}

// installCli runs the command (":McpDiffInstallCli ...") and returns the one
// message it showed.
func (s *session) installCli(command string) message {
	s.t.Helper()
	s.lua(`_G.test_messages = {}`, nil)
	s.cmd(command)
	msgs := s.messages()
	if len(msgs) != 1 {
		s.t.Fatalf(":%s showed %d messages, want 1: %+v", command, len(msgs), msgs)
	}
	return msgs[0]
}

// wantMessage fails unless msg has that level and holds every one of want.
func wantMessage(t *testing.T, msg message, level int, want ...string) {
	t.Helper()
	if msg.Level != level {
		t.Fatalf("message %q has level %d, want %d", msg.Msg, msg.Level, level)
	}
	for _, w := range want {
		if !strings.Contains(msg.Msg, w) {
			t.Fatalf("message %q lacks %q", msg.Msg, w)
		}
	}
}

const (
	levelInfo  = 2 // vim.log.levels
	levelWarn  = 3
	levelError = 4
)

// wantLink fails unless link is a symbolic link to target.
func wantLink(t *testing.T, link, target string) {
	t.Helper()
	got, err := os.Readlink(link)
	if err != nil || got != target {
		t.Fatalf("%s: a link to %q (%v), want one to %s", link, got, err, target)
	}
}

// :McpDiffInstallCli links the plugin's binary into ~/.local/bin (made when it is on
// PATH but missing), after which `mcpdiff` runs it from a shell; run again, it says
// the link is there already.
func TestInstallCliLinks(t *testing.T) {
	t.Parallel()
	eachStarted(t, options{"auto_start": false}, func(t *testing.T, s *session) {
		dir := filepath.Join(s.home, ".local", "bin")
		link := filepath.Join(dir, "mcpdiff")
		s.usePath(dir)
		wantMessage(t, s.installCli("McpDiffInstallCli"), levelInfo,
			"linked "+link+" to "+testenv.Binary, "`mcpdiff` in a shell runs this plugin's binary")
		wantLink(t, link, testenv.Binary)
		shell := exec.Command("sh", "-c", "mcpdiff version")
		shell.Env = testenv.Env("PATH=" + dir + ":" + os.Getenv("PATH"))
		if out, err := shell.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "mcpdiff "+mcpdiff.Version) {
			t.Fatalf("mcpdiff version in a shell after the link: %v\n%s", err, out)
		}
		if got := luaValue[string](s, `return vim.fn.exepath("mcpdiff")`); got != link {
			t.Fatalf("exepath(\"mcpdiff\") = %q, want %s", got, link)
		}
		wantMessage(t, s.installCli("McpDiffInstallCli"), levelInfo, link+" already links to "+testenv.Binary)
		wantLink(t, link, testenv.Binary)

		// Another folder of PATH, named as the argument (~ expanded).
		other := filepath.Join(s.home, "bin")
		s.usePath(other, dir)
		wantMessage(t, s.installCli("McpDiffInstallCli ~/bin"), levelInfo, "linked "+filepath.Join(other, "mcpdiff"))
		wantLink(t, filepath.Join(other, "mcpdiff"), testenv.Binary)
	})
}

// Each refusal says why and what to do, and changes nothing: a folder not on PATH, a
// file that is not a link, a link to another file (replaced only with the bang), and
// the plugin's binary missing. A `mcpdiff` earlier on PATH is named after linking.
func TestInstallCliRefuses(t *testing.T) {
	t.Parallel()
	eachStarted(t, options{"auto_start": false}, func(t *testing.T, s *session) {
		dir := filepath.Join(s.home, ".local", "bin")
		link := filepath.Join(dir, "mcpdiff")

		s.usePath() // ~/.local/bin is not on PATH
		wantMessage(t, s.installCli("McpDiffInstallCli"), levelError,
			dir+" is not on PATH", "export PATH=", ":McpDiffInstallCli DIR")
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			t.Fatalf("a refused install made %s (%v)", dir, err)
		}

		s.usePath(dir)
		testenv.WriteFile(t, link, "#!/bin/sh\necho mine\n")
		wantMessage(t, s.installCli("McpDiffInstallCli!"), levelError,
			link+" is there and is not a link (a file)", "left alone")
		if got := testenv.ReadFile(t, link); got != "#!/bin/sh\necho mine\n" {
			t.Fatalf("the user's file after a refused install: %q", got)
		}
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}

		elsewhere := filepath.Join(s.home, "old-plugin", "bin", "mcpdiff")
		if err := os.Symlink(elsewhere, link); err != nil {
			t.Fatal(err)
		}
		wantMessage(t, s.installCli("McpDiffInstallCli"), levelError,
			link+" links to "+elsewhere, testenv.Binary, ":McpDiffInstallCli! replaces the link")
		wantLink(t, link, elsewhere)
		wantMessage(t, s.installCli("McpDiffInstallCli!"), levelInfo, "linked "+link+" to "+testenv.Binary)
		wantLink(t, link, testenv.Binary)

		// A mcpdiff in a folder before it on PATH: linked, with a warning naming it.
		first := filepath.Join(s.home, "first")
		testenv.WriteFile(t, filepath.Join(first, "mcpdiff"), "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(first, "mcpdiff"), 0o755); err != nil {
			t.Fatal(err)
		}
		s.usePath(first, dir)
		wantMessage(t, s.installCli("McpDiffInstallCli"), levelWarn,
			link+" already links to", filepath.Join(first, "mcpdiff")+" comes first on PATH")

		s.lua(`require("mcpdiff").setup({ auto_start = false, bin = ... })`, nil, filepath.Join(s.home, "no-such-binary"))
		wantMessage(t, s.installCli("McpDiffInstallCli"), levelError, "no-such-binary", "missing")
	})
}

// :checkhealth mcpdiff without `mcpdiff` on PATH warns and suggests
// :McpDiffInstallCli, and every command it suggests names the binary's full path so
// that it can be pasted as it is; once linked, they say `mcpdiff`.
func TestHealthNamesTheBinary(t *testing.T) {
	t.Parallel()
	eachStarted(t, options{"auto_start": false}, func(t *testing.T, s *session) {
		dir := filepath.Join(s.home, ".local", "bin")
		s.usePath(dir)
		path := s.writeFile("a.txt", "one\n")
		s.recordEdit("conv_1_hb", path, "one\n", "two\n")
		testenv.WriteFile(t, path, "three\n") // changed outside mcpdiff: a restore is suggested

		lines := s.checkhealth()
		wantHealth(t, lines, "WARNING", []string{"`mcpdiff` is not a command in your shell", testenv.Binary},
			":McpDiffInstallCli", ".local/bin")
		wantHealthInfo(t, lines, "`"+testenv.Binary+" restore --file a.txt`")
		wantHealth(t, lines, "OK", []string{"review them with :McpDiffStatus or `" + testenv.Binary + " status`"})
		for _, l := range lines {
			if strings.Contains(l, "`mcpdiff ") {
				t.Fatalf(":checkhealth suggests a bare `mcpdiff` command while none is on PATH: %q\n%s", l, strings.Join(lines, "\n"))
			}
		}

		s.installCli("McpDiffInstallCli")
		lines = s.checkhealth()
		wantHealth(t, lines, "OK", []string{"`mcpdiff` in a shell runs it", filepath.Join(dir, "mcpdiff")})
		wantHealthInfo(t, lines, "`mcpdiff restore --file a.txt`")
		noHealthLevel(t, lines, "ERROR")

		// Another mcpdiff first on PATH: a warning, and the full path again.
		first := filepath.Join(s.home, "first")
		testenv.WriteFile(t, filepath.Join(first, "mcpdiff"), "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(first, "mcpdiff"), 0o755); err != nil {
			t.Fatal(err)
		}
		s.usePath(first, dir)
		lines = s.checkhealth()
		wantHealth(t, lines, "WARNING", []string{"`mcpdiff` in a shell runs " + filepath.Join(first, "mcpdiff") + ", not this binary"},
			":McpDiffInstallCli!")
		wantHealthInfo(t, lines, "`"+testenv.Binary+" restore --file a.txt`")
	})
}
