package mcpdiff

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestVersionIsSemantic(t *testing.T) {
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(Version) {
		t.Fatalf("Version = %q, want MAJOR.MINOR.PATCH", Version)
	}
}

// The version is written once, in lua/mcpdiff/version.lua; the install examples of the
// README and the help that pin a release (tag = "vX.Y.Z", and the README's "is this
// one") name it, as does any page of docs/ or CONTRIBUTING.md that pins one, so a
// release that forgets them fails here.
func TestDocsPinThisVersion(t *testing.T) {
	pin := regexp.MustCompile(`tag(?:'\s*:|\s*=)\s*["']v(\d+\.\d+\.\d+)["']|` + "`v(\\d+\\.\\d+\\.\\d+)` is this one")
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	mustPin := map[string]bool{"README.md": true, "doc/mcpdiff.txt": true}
	for _, doc := range append([]string{"README.md", "doc/mcpdiff.txt", "CONTRIBUTING.md"}, pages...) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		found := pin.FindAllStringSubmatch(string(data), -1)
		if len(found) == 0 && mustPin[doc] {
			t.Errorf("%s pins no version (tag = \"v%s\")", doc, Version)
		}
		for _, m := range found {
			if v := m[1] + m[2]; v != Version {
				t.Errorf("%s: %q names v%s, but this is v%s (lua/mcpdiff/version.lua)", doc, m[0], v, Version)
			}
		}
	}
}
