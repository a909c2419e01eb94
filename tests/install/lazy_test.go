package install

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff"
)

// lazyNvim is the lazy.nvim the tests install with: the folder $MCPDIFF_LAZY_NVIM
// names, a checkout of folke/lazy.nvim (CONTRIBUTING.md says which release and how to
// get it). No package registry serves lazy.nvim, so nothing here brings it: without
// the variable, TestLazyNvim is skipped, the one test of the suite that may be.
func lazyNvim(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCPDIFF_LAZY_NVIM")
	if dir == "" {
		t.Skip("MCPDIFF_LAZY_NVIM names no lazy.nvim folder: the installs with the real lazy.nvim did not run (CONTRIBUTING.md says how to run them)")
	}
	if _, err := os.Stat(filepath.Join(dir, "lua", "lazy", "init.lua")); err != nil {
		t.Fatalf("MCPDIFF_LAZY_NVIM=%s is not a lazy.nvim folder: %v", dir, err)
	}
	return dir
}

// lazyMin is the oldest Neovim lazy.nvim supports.
var lazyMin = [2]int{0, 8}

// lazyInit is an init.lua as lazy.nvim's README has users write it: lazy.nvim cloned
// to stdpath("data")/lazy/lazy.nvim (here copied there), then setup() with the specs.
// url_format makes "owner/name" specs clone from the local remotes folder instead
// of GitHub, leaving the rest of lazy.nvim's install path (git clone --filter=blob:none,
// checkout, helptags, build) as it runs for a user.
func lazyInit(specs string) string {
	return fmt.Sprintf(`local lazypath = vim.fn.stdpath("data") .. "/lazy/lazy.nvim"
vim.opt.rtp:prepend(lazypath)
require("lazy").setup({
%s
}, {
  git = { url_format = %q },
  rocks = { enabled = false },
  change_detection = { enabled = false },
})
`, specs, "file://"+remotes+"/%s")
}

// installLazy copies lazy.nvim (the folder lazy) where its bootstrap clones it, as a
// git repository, writes the init.lua with specs, and starts Neovim once headless,
// which installs the missing plugins (lazy.nvim does so from setup(), before start-up
// goes on). It returns what Neovim printed.
func (u *user) installLazy(lazy, nvimBin, specs string) string {
	u.t.Helper()
	dst := filepath.Join(u.data, "nvim", "lazy", "lazy.nvim")
	if err := copyTree(lazy, dst); err != nil {
		u.t.Fatalf("copy lazy.nvim: %v", err)
	}
	// A clone, as the bootstrap makes: lazy.nvim manages itself and reads its commit.
	if err := commitAll(dst, "lazy.nvim"); err != nil {
		u.t.Fatal(err)
	}
	u.writeInit(lazyInit(specs))
	start := time.Now()
	out, err := u.headless(nvimBin, "+qa")
	u.t.Logf("lazy.nvim's first start (clone, helptags, make): %v", time.Since(start).Round(time.Millisecond))
	if err != nil {
		u.t.Fatalf("nvim --headless +qa (lazy.nvim's install): %v\n%s", err, tail(out))
	}
	return out
}

// checkInstalled checks a plugin folder lazy.nvim installed and built: a binary that
// runs, the help tags, and a clean clone (lazy.nvim refuses to update a dirty one).
func (u *user) checkInstalled(plugin, lazyOutput string) {
	u.t.Helper()
	if strings.Contains(strings.ToLower(lazyOutput), "error") {
		u.t.Fatalf("lazy.nvim reported an error:\n%s", tail(lazyOutput))
	}
	if out, err := u.run(plugin, filepath.Join(plugin, "bin", "mcpdiff"), "version"); err != nil || !strings.HasPrefix(out, "mcpdiff ") {
		u.t.Fatalf("%s/bin/mcpdiff version: %v\n%s\nlazy.nvim's output:\n%s", plugin, err, out, tail(lazyOutput))
	}
	fileExists(u.t, filepath.Join(plugin, "doc", "tags"), true)
	if out, err := u.run(plugin, "git", "status", "--porcelain", "--ignored=no"); err != nil || strings.TrimSpace(out) != "" {
		u.t.Fatalf("git status in %s after the install: %v\n%s", plugin, err, out)
	}
}

// The real lazy.nvim installs the plugin as the README says, each way a subtest.
func TestLazyNvim(t *testing.T) {
	t.Parallel()
	lazy := lazyNvim(t)
	for _, c := range []struct {
		name string
		run  func(t *testing.T, lazy string)
	}{
		{"Install", lazyInstall},
		{"OnCommand", lazyOnCommand},
		{"Dir", lazyDir},
		{"WithoutGo", lazyWithoutGo},
		{"ReleaseWithoutGo", lazyReleaseWithoutGo},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, lazy)
		})
	}
}

// The README's spec, `{ "mcpdiff/mcpdiff", build = "make", opts = {...} }`, in a
// clean HOME: lazy.nvim clones it, `make` builds bin/mcpdiff in the plugin folder,
// which stays a clean clone; opts reach setup(), which starts the bridge; :help and
// :checkhealth work.
func lazyInstall(t *testing.T, lazy string) {
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := newUser(t)
		out := u.installLazy(lazy, nv, `{ "`+repo+`", build = "make", opts = { diff = { layout = "inline" }, keymaps = { accept = "<leader>ya" } } },`)
		plugin := filepath.Join(u.data, "nvim", "lazy", "mcpdiff")
		u.checkInstalled(plugin, out)

		s := u.start(nv)
		s.waitBridge(u.claude)
		var opts []string
		s.lua(`local v = require("mcpdiff.config").values; return { v.diff.layout, v.keymaps.accept }`, &opts)
		if want := []string{"inline", "<leader>ya"}; !reflect.DeepEqual(opts, want) {
			t.Fatalf("setup() got diff.layout and keymaps.accept %q, want %q (the spec's opts)", opts, want)
		}
		s.checkHelp(plugin)
		if health := s.checkHealth(); !strings.Contains(health, filepath.Join(plugin, "bin", "mcpdiff")) {
			t.Fatalf(":checkhealth mcpdiff does not name the binary lazy.nvim built:\n%s", health)
		}
	})
}

// A spec lazy-loaded on its commands, installed under another folder name: start-up
// loads no mcpdiff module and starts nothing; the first command loads the plugin,
// calls setup(opts) and works.
func lazyOnCommand(t *testing.T, lazy string) {
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := newUser(t)
		out := u.installLazy(lazy, nv, `{ "`+repo+`", name = "foo.nvim", build = "make",
  cmd = { "McpDiffStart", "McpDiffStatus", "McpDiffClaude", "McpDiffAccept", "McpDiffReject" },
  opts = { diff = { layout = "horizontal" } } },`)
		plugin := filepath.Join(u.data, "nvim", "lazy", "foo.nvim")
		u.checkInstalled(plugin, out)

		s := u.start(nv)
		if mods := s.loadedModules(); len(mods) > 0 {
			t.Fatalf("start-up loaded %v", mods)
		}
		var state struct {
			Loaded  bool `msgpack:"loaded"`
			Command int  `msgpack:"command"`
		}
		s.lua(`return { loaded = vim.g.loaded_mcpdiff == true, command = vim.fn.exists(":McpDiffStart") }`, &state)
		if state.Loaded || state.Command != 2 {
			t.Fatalf("after start-up: plugin/mcpdiff.lua sourced %v, :McpDiffStart defined %d (want false, 2)", state.Loaded, state.Command)
		}
		if locks, _ := filepath.Glob(filepath.Join(u.claude, "ide", "*.lock")); len(locks) > 0 {
			t.Fatalf("a bridge started with Neovim: %v", locks)
		}

		s.lua(`vim.cmd("McpDiffStart")`, nil)
		s.waitBridge(u.claude)
		var layout string
		s.lua(`return require("mcpdiff.config").values.diff.layout`, &layout)
		if layout != "horizontal" {
			t.Fatalf("setup() got diff.layout %q, want the spec's opts (horizontal)", layout)
		}
		s.checkHelp(plugin)
		s.checkHealth()
	})
}

// A `dir =` spec (a clone of one's own, built with `make`): lazy.nvim neither clones
// nor builds it, and runs no :helptags at start-up, so the help works only because
// `make` wrote doc/tags.
func lazyDir(t *testing.T, lazy string) {
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := newUser(t)
		plugin := filepath.Join(u.home, "src", "mcpdiff")
		u.clone(plugin)
		u.make(plugin)
		u.installLazy(lazy, nv, fmt.Sprintf(`{ dir = %q, opts = {} },`, plugin))
		s := u.start(nv)
		s.waitBridge(u.claude)
		s.checkHelp(plugin)
		s.checkHealth()
	})
}

// Without Go, lazy.nvim's build of main (no release) fails with make's one line
// saying so, and the help is there all the same.
func lazyWithoutGo(t *testing.T, lazy string) {
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := newUser(t)
		u.path = withoutGo(t)
		out := u.installLazy(lazy, nv, `{ "`+repo+`", build = "make", opts = {} },`)
		plugin := filepath.Join(u.data, "nvim", "lazy", "mcpdiff")
		if n := strings.Count(out, "needs Go 1.25 or newer"); n != 1 {
			t.Fatalf("lazy.nvim's output names the missing Go %d times, want once:\n%s", n, tail(out))
		}
		if strings.Contains(out, "not found") {
			t.Fatalf("lazy.nvim's output has the shell's error beside make's line:\n%s", tail(out))
		}
		fileExists(t, filepath.Join(plugin, "bin", "mcpdiff"), false)
		fileExists(t, filepath.Join(plugin, "doc", "tags"), true)
	})
}

// On a release, pinned as the README says (version = "*"), with Go off PATH and the
// release served on 127.0.0.1: lazy.nvim's `make` installs the released binary, which
// prints the tag's version, the plugin starts, and :checkhealth has no ERROR and says
// the binary is the released one. Served tampered, the install fails with make's one
// line, and there is no bin/mcpdiff.
func lazyReleaseWithoutGo(t *testing.T, lazy string) {
	spec := `{ "` + repo + `", version = "*", build = "make", opts = {} },`
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := releaseUser(t, serveRelease(t, served))
		out := u.installLazy(lazy, nv, spec)
		plugin := filepath.Join(u.data, "nvim", "lazy", "mcpdiff")
		u.checkInstalled(plugin, out)
		bin := filepath.Join(plugin, "bin", "mcpdiff")
		if got, err := u.run(plugin, bin, "version"); err != nil || !strings.HasPrefix(got, "mcpdiff "+mcpdiff.Version+" (release build") {
			t.Fatalf("%s version: %v %q\nlazy.nvim's output:\n%s", bin, err, got, tail(out))
		}
		s := u.start(nv)
		s.waitBridge(u.claude)
		if health := s.checkHealth(); !strings.Contains(health, "the released binary") {
			t.Fatalf(":checkhealth mcpdiff does not say the binary is the released one:\n%s", health)
		}

		u = releaseUser(t, serveRelease(t, tampered))
		out = u.installLazy(lazy, nv, spec)
		if n := strings.Count(out, "mcpdiff: bin/mcpdiff not installed: "); n != 1 || !strings.Contains(out, "has SHA-256") {
			t.Fatalf("lazy.nvim's output has make's line about the sum %d times, want once:\n%s", n, tail(out))
		}
		fileExists(t, filepath.Join(u.data, "nvim", "lazy", "mcpdiff", "bin", "mcpdiff"), false)
	})
}

// copyTree copies the regular files of src, but its .git, into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}
