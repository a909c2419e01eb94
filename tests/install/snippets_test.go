package install

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoSnippet matches the repository an install snippet names: lazy.nvim's and
// packer.nvim's `{ "owner/name"`, vim-plug's `Plug 'owner/name'`, and a git clone
// from GitHub.
var repoSnippet = regexp.MustCompile(`\{ "([^"/\s]+/[^"\s]+)", (?:build|run) = |Plug '([^'/\s]+/[^'\s]+)'|git clone https://github\.com/([^/\s]+/[^/\s]+)`)

// Every install snippet of the README and the help names the real repository, so each
// can be copied as it is: one per plugin manager (lazy.nvim, packer.nvim, vim-plug, a
// clone), and no placeholder anywhere.
func TestSnippetsNameTheRepository(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"README.md", "doc/mcpdiff.txt"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(text, "<owner>") {
			t.Errorf("%s still says <owner>", doc)
		}
		found := map[string]int{}
		for _, m := range repoSnippet.FindAllStringSubmatch(text, -1) {
			named := m[1] + m[2] + m[3]
			if named != repo {
				t.Errorf("%s: %q names %s, want %s", doc, m[0], named, repo)
			}
			found[strings.Fields(m[0])[0]]++
		}
		for _, manager := range []string{"{", "Plug", "git"} {
			if found[manager] == 0 {
				t.Errorf("%s: no install snippet of the form %q naming %s (found %v)", doc, manager, repo, found)
			}
		}
		if found["{"] < 2 {
			t.Errorf("%s: want the lazy.nvim and packer.nvim specs, found %d", doc, found["{"])
		}
	}
}
