package install

import (
	"fmt"
	"path/filepath"
	"testing"
)

// Without a plugin manager, on every Neovim (0.7.2 included): clone, `make`, and a
// setup() call in init.lua; the folder on 'runtimepath' by hand, or a native package
// under pack/*/start (the layout packer.nvim and vim-plug also produce). Then
// `:help mcpdiff` opens, the bridge starts and `:checkhealth mcpdiff` has no ERROR.
func TestInstallByHand(t *testing.T) {
	t.Parallel()
	layouts := []struct {
		name   string
		folder func(u *user) string
		init   func(folder string) string
	}{
		{"runtimepath", func(u *user) string { return filepath.Join(u.home, "src", "any-name") },
			func(folder string) string {
				return fmt.Sprintf("vim.opt.rtp:prepend(%q)\nrequire(\"mcpdiff\").setup({})\n", folder)
			}},
		{"package", func(u *user) string {
			return filepath.Join(u.data, "nvim", "site", "pack", "plugins", "start", "mcpdiff") // the README's git clone
		},
			func(string) string { return "require(\"mcpdiff\").setup({})\n" }},
	}
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) {
			// One clone and build per layout, used by every Neovim.
			u := newUser(t)
			folder := layout.folder(u)
			u.clone(folder)
			u.make(folder)
			fileExists(t, filepath.Join(folder, "bin", "mcpdiff"), true)
			u.writeInit(layout.init(folder))
			eachNvim(t, [2]int{0, 7}, func(t *testing.T, nv string) {
				u.t = t
				s := u.start(nv)
				s.waitBridge(u.claude)
				s.checkHelp(folder)
				s.checkHealth()
			})
		})
	}
}
