//go:build unix

package nvimtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The help file must index with :helptags and every |link| in it must resolve.
func TestHelpFile(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "doc", "mcpdiff.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, m := range regexp.MustCompile(`\|([^| \t]+)\|`).FindAllStringSubmatch(string(doc), -1) {
		links = append(links, m[1])
	}
	eachNvim(t, func(t *testing.T, nv string) {
		// :helptags writes doc/tags: index a copy, not the checkout.
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "doc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "doc", "mcpdiff.txt"), doc, 0o644); err != nil {
			t.Fatal(err)
		}
		s := newSession(t, nv)
		var failures []string
		s.lua(`
local root, links = ...
vim.opt.rtp:prepend(root)
local failures = {}
local ok, err = pcall(vim.cmd, "helptags " .. root .. "/doc")
if not ok then table.insert(failures, "helptags: " .. tostring(err)) end
for _, link in ipairs(links) do
  local found, e = pcall(vim.cmd, "help " .. link)
  if not found then table.insert(failures, link .. ": " .. tostring(e)) end
end
return failures`, &failures, root, links)
		if len(failures) > 0 {
			t.Fatalf("help file problems: %q", failures)
		}
	})
}

// Every reason of User McpDiffClosed, as the Lua table lists them, is described in
// the help, and every reason the Go side passes is one of them.
func TestCloseReasonsAreDocumented(t *testing.T) {
	t.Parallel()
	help := between(repoFile(t, "doc/mcpdiff.txt"), "*McpDiffClosed*", "\n\n")
	fromGo := regexp.MustCompile(`closeReason = "([^"]+)"`).FindAllStringSubmatch(repoFile(t, "nvim/editor.go"), -1)
	if len(fromGo) < 3 {
		t.Fatalf("nvim/editor.go: want the closeReason constants, found %q", fromGo)
	}
	eachNvim(t, func(t *testing.T, nv string) {
		s := newSession(t, nv)
		var reasons []string
		s.lua(`vim.opt.rtp:prepend(...)
local r = vim.tbl_keys(require("mcpdiff.diff").close_reasons) table.sort(r) return r`, &reasons, repoRoot)
		if len(reasons) < 6 {
			t.Fatalf("close_reasons: %q", reasons)
		}
		for _, r := range reasons {
			if !strings.Contains(help, `"`+r+`"`) {
				t.Errorf("the help of McpDiffClosed does not describe the reason %q", r)
			}
		}
		for _, m := range fromGo {
			if !slices.Contains(reasons, m[1]) {
				t.Errorf("nvim/editor.go passes the reason %q, which close_reasons lacks", m[1])
			}
		}
	})
}

// The defaults block of :help mcpdiff-config is what lua/mcpdiff/config.lua's option
// table renders, so the help can never show a default the code does not have.
// UPDATE_SNAPSHOTS=1 rewrites the block from the table.
func TestHelpShowsTheConfigDefaults(t *testing.T) {
	t.Parallel()
	helpPath := filepath.Join(repoRoot, "doc", "mcpdiff.txt")
	doc, err := os.ReadFile(helpPath)
	if err != nil {
		t.Fatal(err)
	}
	const openMark, closeMark = "The defaults: >lua\n\n", "\n<\n"
	text := string(doc)
	start := strings.Index(text, openMark)
	if start < 0 {
		t.Fatalf("no %q in %s", openMark, helpPath)
	}
	start += len(openMark)
	end := start + strings.Index(text[start:], closeMark)
	s := newSession(t, testenv.Neovims(t)[0])
	var lines []string
	s.lua(`vim.opt.rtp:prepend(...) return require("mcpdiff.config").help_defaults()`, &lines, repoRoot)
	want := strings.Join(lines, "\n")
	if got := text[start:end]; got != want {
		if testenv.Updating() {
			if err := os.WriteFile(helpPath, []byte(text[:start]+want+text[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("the defaults block of :help mcpdiff-config differs from config.lua's options (UPDATE_SNAPSHOTS=1 rewrites it)\n got:\n%s\nwant:\n%s", got, want)
	}
}

// The keys the help, the README and docs/ name (a <leader> key, or ]x and [x) are
// defaults of config.lua's keymaps, and :help mcpdiff-keymaps lists every default: a
// changed default fails here until the prose follows it. The README's suggested
// mappings (vim.keymap.set lines) are the user's own keys, not defaults.
func TestDocsNameTheDefaultKeys(t *testing.T) {
	t.Parallel()
	s := newSession(t, testenv.Neovims(t)[0])
	var defaults []string
	s.lua(`vim.opt.rtp:prepend(...)
local out = {}
for _, o in ipairs(require("mcpdiff.config").options) do
  if o[1]:match("^keymaps%.") and type(o[2]) == "string" then table.insert(out, o[2]) end
end
return out`, &defaults, repoRoot)
	if len(defaults) < 8 {
		t.Fatalf("keymap defaults: %q", defaults)
	}
	key := regexp.MustCompile("<leader>[a-z]+|(?:^|[\\s`(])([][][a-z])(?:$|[\\s`),.])")
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v %v", pages, err)
	}
	docs := []string{"doc/mcpdiff.txt", "README.md"}
	for _, p := range pages {
		docs = append(docs, filepath.Join("docs", filepath.Base(p)))
	}
	for _, doc := range docs {
		for i, line := range strings.Split(repoFile(t, doc), "\n") {
			if strings.Contains(line, "vim.keymap.set(") {
				continue
			}
			for _, m := range key.FindAllStringSubmatch(line, -1) {
				k := m[0]
				if m[1] != "" {
					k = m[1]
				}
				if !slices.Contains(defaults, k) {
					t.Errorf("%s:%d names the key %s, which no keymap of config.lua has as its default", doc, i+1, k)
				}
			}
		}
	}
	section := between(repoFile(t, "doc/mcpdiff.txt"), "*mcpdiff-keymaps*", "*mcpdiff-review*")
	for _, k := range defaults {
		if !strings.Contains(section, k) {
			t.Errorf(":help mcpdiff-keymaps does not list the default key %s", k)
		}
	}
}

// repoFile is a file of the repository, as text.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// between is the part of text from the first from to the first end after it.
func between(text, from, end string) string {
	text = text[strings.Index(text, from):]
	return text[:strings.Index(text, end)]
}
