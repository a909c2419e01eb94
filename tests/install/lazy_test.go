package install

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// lazyVersion is the vendored lazy.nvim's tag (testdata/README.md).
const lazyVersion = "v11.17.5"

// lazyArchive is the vendored lazy.nvim: a folder lazy.nvim/ in a .tar.gz.
var lazyArchive = filepath.Join("testdata", "lazy.nvim-"+lazyVersion+".tar.gz")

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

// installLazy copies the vendored lazy.nvim where its bootstrap clones it (as a git
// repository), writes the
// init.lua with specs, and starts Neovim once headless, which installs the missing
// plugins (lazy.nvim does so from setup(), before start-up goes on). It returns what
// Neovim printed.
func (u *user) installLazy(nvimBin, specs string) string {
	u.t.Helper()
	dst := filepath.Join(u.data, "nvim", "lazy", "lazy.nvim")
	if err := untar(lazyArchive, "lazy.nvim/", dst); err != nil {
		u.t.Fatalf("unpack lazy.nvim: %v", err)
	}
	// A clone, as the bootstrap makes: lazy.nvim manages itself and reads its commit.
	if err := commitAll(dst, "lazy.nvim "+lazyVersion); err != nil {
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

// The README's spec, `{ "mcpdiff/mcpdiff", build = "make", opts = {...} }`, in a
// clean HOME: lazy.nvim clones it, `make` builds bin/mcpdiff in the plugin folder,
// which stays a clean clone; opts reach setup(), which starts the bridge; :help and
// :checkhealth work.
func TestLazyNvimInstall(t *testing.T) {
	t.Parallel()
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := newUser(t)
		out := u.installLazy(nv, `{ "`+repo+`", build = "make", opts = { diff = { layout = "inline" }, keymaps = { accept = "<leader>ya" } } },`)
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
func TestLazyNvimOnCommand(t *testing.T) {
	t.Parallel()
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := newUser(t)
		out := u.installLazy(nv, `{ "`+repo+`", name = "foo.nvim", build = "make",
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
func TestLazyNvimDir(t *testing.T) {
	t.Parallel()
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := newUser(t)
		plugin := filepath.Join(u.home, "src", "mcpdiff")
		u.clone(plugin)
		u.make(plugin)
		u.installLazy(nv, fmt.Sprintf(`{ dir = %q, opts = {} },`, plugin))
		s := u.start(nv)
		s.waitBridge(u.claude)
		s.checkHelp(plugin)
		s.checkHealth()
	})
}

// Without Go, lazy.nvim's build fails with make's one line saying so, and the help
// is there all the same.
func TestLazyNvimWithoutGo(t *testing.T) {
	t.Parallel()
	eachNvim(t, lazyMin, func(t *testing.T, nv string) {
		u := newUser(t)
		u.path = withoutGo(t)
		out := u.installLazy(nv, `{ "`+repo+`", build = "make", opts = {} },`)
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

// untar writes the regular files of the .tar.gz archive under prefix into dst.
func untar(archive, prefix, dst string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	r := tar.NewReader(gz)
	for {
		h, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		rel, ok := strings.CutPrefix(h.Name, prefix)
		if !ok || h.Typeflag != tar.TypeReg || !filepath.IsLocal(rel) {
			continue
		}
		path := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", archive, h.Name, err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
}
