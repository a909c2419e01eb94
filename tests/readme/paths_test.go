package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// A path in backticks that starts with one of the repository's own folders.
var repoPath = regexp.MustCompile("`((?:cmd|bridge|nvim|lua|plugin|tests|internal|scripts|doc|third_party)/[A-Za-z0-9_./-]*)")

// TestRepoPathsExist keeps the README and the help true after a move: every folder or
// file of the repository they name in backticks exists.
func TestRepoPathsExist(t *testing.T) {
	root := testenv.RepoRoot()
	for _, doc := range []string{"README.md", "doc/mcpdiff.txt", "CHANGELOG.md"} {
		data, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range repoPath.FindAllStringSubmatch(line, -1) {
				p := strings.TrimRight(m[1], ".")
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("%s:%d names %s, which is not in the repository", doc, i+1, p)
				}
			}
		}
	}
}
