// Package readme runs the commands of the documentation — README.md, CONTRIBUTING.md
// and docs/*.md: each fenced sh block whose first command starts with `mcpdiff` or
// `make` is run with bash in a temp workspace (mcpdiff on PATH, an empty HOME, no
// network), unless an HTML comment right before it says why not:
// `<!-- not run: REASON -->`. A block after `<!-- history: ... -->` runs in a workspace
// whose history the test first makes with `mcpdiff serve` through a real MCP client:
// the example edit id stands for the first edit made. It also checks that what the
// pages name exists: repository paths, links between pages.
package readme

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Suite{}) }

// exampleEdit and exampleConv are the ids the history examples use.
const (
	exampleEdit = "3f2a9c1b"
	exampleConv = "conv_1732252680000_ab12cd34"
)

// block is one fenced sh block of a page.
type block struct {
	file    string // the page, relative to the repository
	section string // the ## heading it is under
	line    int    // its first line's number, for messages
	note    string // the HTML comment right before it, if any
	code    string
}

// pages are the Markdown pages whose commands run here, relative to the repository.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v %v", docs, err)
	}
	out := []string{"README.md", "CONTRIBUTING.md"}
	for _, d := range docs {
		out = append(out, filepath.ToSlash(filepath.Join("docs", filepath.Base(d))))
	}
	return out
}

// repoText is a file of the repository, as text.
func repoText(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// docBlocks are the sh blocks of every page.
func docBlocks(t *testing.T) []block {
	t.Helper()
	var all []block
	for _, page := range pages(t) {
		for _, b := range parseBlocks(repoText(t, page)) {
			b.file = page
			all = append(all, b)
		}
	}
	return all
}

// parseBlocks finds the sh blocks of a Markdown text.
func parseBlocks(text string) []block {
	lines := strings.Split(text, "\n")
	var blocks []block
	section, note := "", ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "## "):
			section, note = strings.TrimPrefix(l, "## "), ""
		case strings.HasPrefix(l, "<!--") && strings.HasSuffix(l, "-->"):
			note = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "<!--"), "-->"))
		case strings.HasPrefix(l, "```"):
			lang := strings.Fields(strings.TrimPrefix(l, "```") + " ")
			start := i + 1
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			}
			if len(lang) > 0 && lang[0] == "sh" {
				blocks = append(blocks, block{section: section, line: start, note: note, code: strings.Join(lines[start:i], "\n")})
			}
			note = ""
		case strings.TrimSpace(l) != "":
			note = ""
		}
	}
	return blocks
}

// firstCommand is the first word of the block's first command line.
func firstCommand(code string) string {
	for _, l := range strings.Split(code, "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			return f[0]
		}
	}
	return ""
}

var notRun = regexp.MustCompile(`^not run: \S`)

// runs says whether block b must run; an error when it is marked as not run without
// a reason.
func runs(b block) (bool, error) {
	if cmd := firstCommand(b.code); cmd != "mcpdiff" && cmd != "make" {
		return false, nil
	}
	if notRun.MatchString(b.note) {
		return false, nil
	}
	if strings.HasPrefix(b.note, "not run") {
		return false, fmt.Errorf("%s:%d: %q must give a reason: <!-- not run: REASON -->", b.file, b.line, b.note)
	}
	return true, nil
}

func TestBlocksToRun(t *testing.T) {
	t.Parallel()
	blocks := parseBlocks("## A\n\n```sh\nmcpdiff status\n```\n<!-- not run: needs an account -->\n```sh\nmake test\n```\n" +
		"<!-- not run -->\n```sh\nmake\n```\n```sh\n# a comment\nclaude mcp list\n```\n<!-- not run: x -->\n\ntext\n```sh\nmake\n```\n")
	want := []string{"run", "skip", "error", "skip", "run"}
	if len(blocks) != len(want) {
		t.Fatalf("blocks: %+v", blocks)
	}
	for i, b := range blocks {
		run, err := runs(b)
		got := map[bool]string{true: "run", false: "skip"}[run]
		if err != nil {
			got = "error"
		}
		if got != want[i] {
			t.Errorf("block %d (%q after %q): %s, want %s", i, b.code, b.note, got, want[i])
		}
	}
}

func TestDocCommands(t *testing.T) {
	t.Parallel()
	ran := map[string]int{}
	for _, b := range docBlocks(t) {
		run, err := runs(b)
		if err != nil {
			t.Error(err)
		}
		if !run {
			continue
		}
		ran[b.file]++
		t.Run(b.file+"/"+strings.ReplaceAll(b.section, " ", "_"), func(t *testing.T) { runBlock(t, b) })
	}
	if ran["README.md"] < 3 {
		t.Fatalf("ran %d of the README's blocks: the sections this test checks are gone", ran["README.md"])
	}
}

// env is a workspace with mcpdiff on PATH, in an empty HOME.
type env struct {
	ws, home, config string
	vars             []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base := testenv.TempDir(t)
	e := &env{ws: filepath.Join(base, "project"), home: filepath.Join(base, "home"), config: filepath.Join(base, "home", ".claude")}
	bin := filepath.Join(base, "bin")
	for _, d := range []string{e.ws, e.home, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(testenv.Binary, filepath.Join(bin, "mcpdiff")); err != nil {
		t.Fatal(err)
	}
	e.vars = testenv.Env("HOME="+e.home, "CLAUDE_CONFIG_DIR="+e.config, "MCPDIFF_BIN="+testenv.Binary,
		"PATH="+bin+":"+os.Getenv("PATH"), "XDG_STATE_HOME="+filepath.Join(e.home, ".local/state"),
		"NO_COLOR=1", "http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9")
	return e
}

func runBlock(t *testing.T, b block) {
	e := newEnv(t)
	code := b.code
	var check func()
	if strings.HasPrefix(b.note, "history:") {
		if !strings.Contains(b.note, exampleEdit) {
			t.Fatalf("%s:%d: the history note must name the example edit %s", b.file, b.line, exampleEdit)
		}
		first := seedHistory(t, e)
		code = strings.ReplaceAll(code, exampleEdit, first[:8])
		check = func() {
			// Every decision in the block ends with the conversation accepted whole.
			got, _ := os.ReadFile(filepath.Join(e.ws, "src", "main.go"))
			if string(got) != mainGo(map[int]string{5: "five", 45: "forty-five", 20: "twenty"}) {
				t.Errorf("src/main.go after the block:\n%s", got)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(2*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", code)
	cmd.Dir, cmd.Env = e.ws, e.vars
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s:%d (%s): %v\n%s\n--- output:\n%s", b.file, b.line, b.section, err, code, out)
	}
	t.Logf("%s:%d:\n%s\n--- output:\n%s", b.file, b.line, code, out)
	if strings.Contains(code, "mcpdiff hooks install --scope user") {
		check = func() {
			got, _ := os.ReadFile(filepath.Join(e.config, "settings.json"))
			if !strings.Contains(string(got), testenv.Binary+" hook") {
				t.Errorf("the user settings after the block do not run the hook:\n%s", got)
			}
		}
	}
	if check != nil {
		check()
	}
}

// mainGo is a 60-line file, with the given lines replaced.
func mainGo(with map[int]string) string {
	var sb strings.Builder
	for i := 1; i <= 60; i++ {
		if s, ok := with[i]; ok {
			sb.WriteString(s + "\n")
		} else {
			sb.WriteString("line " + strconv.Itoa(i) + "\n")
		}
	}
	return sb.String()
}

// seedHistory makes src/main.go and two edits of it in conversation exampleConv
// through `mcpdiff serve`: the first changes lines 5 and 45, the second line 20. It
// returns the first edit's id.
func seedHistory(t *testing.T, e *env) string {
	t.Helper()
	testenv.WriteFile(t, filepath.Join(e.ws, "src", "main.go"), mainGo(nil))
	c := testenv.StartMCP(t, testenv.MCPServer{Args: []string{"serve", "--root", e.ws}, Env: e.vars, Client: "readme-test"})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(time.Minute))
	defer cancel()
	call := func(tool string, args map[string]any) {
		res, err := c.Call(ctx, tool, args)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
	}
	call("write_file", map[string]any{"path": "src/main.go", "content": mainGo(map[int]string{5: "five", 45: "forty-five"}), "mcp_conversation_id": exampleConv})
	call("edit_file", map[string]any{"path": "src/main.go", "old_string": "line 20\n", "new_string": "twenty\n", "mcp_conversation_id": exampleConv})
	list, err := testenv.OpenStore(t, e.ws).Review(ctx, history.Filter{})
	if err != nil || len(list.Entries) != 2 {
		t.Fatalf("the seeded history: %v, %d entries", err, len(list.Entries))
	}
	return list.Entries[0].EditID
}

// A path in backticks that starts with one of the repository's own folders.
var repoPath = regexp.MustCompile("`((?:cmd|bridge|nvim|lua|plugin|tests|internal|scripts|doc|docs)/[A-Za-z0-9_./-]*)")

// TestRepoPathsExist keeps the documentation true after a move: every folder or file
// of the repository the pages, the help and the changelog name in backticks exists.
func TestRepoPathsExist(t *testing.T) {
	t.Parallel()
	root := testenv.RepoRoot()
	for _, doc := range append(pages(t), "doc/mcpdiff.txt", "CHANGELOG.md") {
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

// A Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksExist: every link of a page to a file of the repository (the other
// pages, the pictures) leads to one that exists.
// The README's architecture section says why each top-level folder exists.
func TestReadmeNamesEveryTopLevelFolder(t *testing.T) {
	t.Parallel()
	readme := repoText(t, "README.md")
	_, section, ok := strings.Cut(readme, "\n## Architecture\n")
	if !ok {
		t.Fatal("README.md has no ## Architecture section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	entries, err := os.ReadDir(testenv.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == ".git" || name == "bin" || name == "dist" {
			continue
		}
		if !strings.Contains(section, "`"+name+"/") {
			t.Errorf("README.md's architecture section does not say why %s/ exists", name)
		}
	}
}

func TestDocLinksExist(t *testing.T) {
	t.Parallel()
	root := testenv.RepoRoot()
	links := 0
	for _, page := range pages(t) {
		for i, line := range strings.Split(repoText(t, page), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target, _, _ := strings.Cut(m[1], "#")
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				if _, err := os.Stat(filepath.Join(root, filepath.Dir(page), target)); err != nil {
					t.Errorf("%s:%d links to %s, which is not in the repository", page, i+1, m[1])
				}
			}
		}
	}
	if links < 5 {
		t.Fatalf("found %d links between the pages: the pattern no longer matches them", links)
	}
}

// The README stays a page for users: at most 400 lines, everything else in docs/.
func TestReadmeIsShort(t *testing.T) {
	t.Parallel()
	if n := strings.Count(repoText(t, "README.md"), "\n"); n > 400 {
		t.Fatalf("README.md has %d lines, more than 400: move the details to docs/", n)
	}
}
