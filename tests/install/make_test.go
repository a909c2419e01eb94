package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// `make` writes doc/tags byte for byte as Neovim's :helptags does, so that a by-hand
// install has `:help mcpdiff` without running :helptags.
func TestMakeWritesHelpTags(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	plugin := filepath.Join(u.home, "mcpdiff")
	u.clone(plugin)
	if out, err := u.run(plugin, "make", "doc/tags"); err != nil {
		t.Fatalf("make doc/tags: %v\n%s", err, out)
	}
	// A clone stays clean: plugin managers refuse to update dirty ones.
	if out, _ := u.run(plugin, "git", "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("git status after make doc/tags:\n%s", out)
	}
	eachNvim(t, [2]int{0, 7}, func(t *testing.T, nv string) {
		doc := filepath.Join(t.TempDir(), "doc")
		if err := os.MkdirAll(doc, 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(plugin, "doc", "mcpdiff.txt"), filepath.Join(doc, "mcpdiff.txt"))
		if out, err := u.headless(nv, "-u", "NONE", "-c", "helptags "+doc, "-c", "qa!"); err != nil || out != "" {
			t.Fatalf(":helptags %s: %v\n%s", doc, err, out)
		}
		sameBytes(t, "make's doc/tags", filepath.Join(plugin, "doc", "tags"), filepath.Join(doc, "tags"))
	})
}

// helptagsCorners holds each rule of :helptags: where a *tag* may stand, what it may
// hold, escaping in the search pattern, examples, several files, the encoding line.
var helptagsCorners = map[string]string{
	"a.txt": "*a.txt*\tcorners é\n" +
		"*a/b* *c\\d* *e|f* x*g* *h*i *j*\t*k*\n" +
		"**  *l* *m*n*o* *p**q*\n" +
		"text *in-text* more *bad tag* *end*\n" +
		"example >\n    *skipped1*\n\t*skipped2*\n\n    *skipped3*\n*after-example*\n" +
		"lua example >lua\n    *not-an-example*\n<\n>\n  *skipped4*\n*z*\n",
	"b.txt": "*b.txt*\tsecond file, ü\n*zz* *AA* *_under*\n",
}

// The awk script behind doc/tags follows :helptags of Neovim 0.10 on every rule, under
// Linux's and macOS's awk. (0.7
// does not skip examples; mcpdiff's help keeps no tag in one, as the test above checks.)
func TestHelpTagsCorners(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	doc := filepath.Join(u.home, "doc")
	if err := os.MkdirAll(doc, 0o755); err != nil {
		t.Fatal(err)
	}
	var files []string
	for name, text := range helptagsCorners {
		files = append(files, filepath.Join(doc, name))
		if err := os.WriteFile(filepath.Join(doc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Debian's awk is mawk; macOS's is the one-true-awk, Debian's original-awk.
	var ours []string
	for _, awk := range []string{"awk", "original-awk"} {
		if _, err := testenv.LookPath(awk, u.path); err != nil {
			testenv.SkipWithout(t, awk+" is not installed (.ci/run installs it)")
		}
		tags := filepath.Join(u.home, awk+".tags")
		script := "LC_ALL=C " + awk + " -f " + filepath.Join(repoRoot, "scripts", "helptags.awk") + " " + strings.Join(files, " ") +
			" | LC_ALL=C sort > " + tags
		if out, err := u.run(u.home, "sh", "-c", script); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		ours = append(ours, tags)
	}
	eachNvim(t, [2]int{0, 10}, func(t *testing.T, nv string) {
		os.Remove(filepath.Join(doc, "tags"))
		if out, err := u.headless(nv, "-u", "NONE", "-c", "helptags "+doc, "-c", "qa!"); err != nil || out != "" {
			t.Fatalf(":helptags %s: %v\n%s", doc, err, out)
		}
		for _, tags := range ours {
			sameBytes(t, "helptags.awk under "+filepath.Base(tags), tags, filepath.Join(doc, "tags"))
		}
	})
}

// Without Go, `make` fails with one line that says what to install, and still writes
// doc/tags.
func TestMakeWithoutGo(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.path = withoutGo(t)
	plugin := filepath.Join(u.home, "mcpdiff")
	u.clone(plugin)
	out, err := u.run(plugin, "make")
	if err == nil {
		t.Fatalf("make without Go succeeded:\n%s", out)
	}
	lines := nonEmptyLines(out)
	if len(lines) != 1 || !strings.Contains(lines[0], "needs Go 1.25 or newer") ||
		!strings.Contains(lines[0], "https://go.dev/dl/") || !strings.Contains(lines[0], "'go' is not on PATH") {
		t.Fatalf("make without Go printed %d lines, want one naming Go, its version and where to get it:\n%s", len(lines), out)
	}
	fileExists(t, filepath.Join(plugin, "bin", "mcpdiff"), false)
	tags, err := os.ReadFile(filepath.Join(plugin, "doc", "tags"))
	if err != nil || !strings.Contains(string(tags), "mcpdiff\tmcpdiff.txt\t/*mcpdiff*\n") {
		t.Fatalf("doc/tags after make without Go: %v\n%s", err, tags)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
