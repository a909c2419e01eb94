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
	doc, err := os.ReadFile(filepath.Join(repoRoot, "doc", "mcpdiff.txt"))
	if err != nil {
		t.Fatal(err)
	}
	help := string(doc)
	help = help[strings.Index(help, "*McpDiffClosed*"):]
	help = help[:strings.Index(help, "\n\n")]
	goSide, err := os.ReadFile(filepath.Join(repoRoot, "nvim", "editor.go"))
	if err != nil {
		t.Fatal(err)
	}
	fromGo := regexp.MustCompile(`"(accepted|closed|failed|rejected|replaced)"`).FindAllStringSubmatch(string(goSide), -1)
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
	nv := strings.Split(os.Getenv("MCPDIFF_NVIMS"), ":")[0]
	if nv == "" {
		nv = "nvim"
	}
	s := newSession(t, nv)
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
