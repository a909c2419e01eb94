package mcpdiff

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The module's layers, bottom up: this package (the facts read from the plugin's
// files), internal/ (the domains: history, workspace, edits, the other Neovims, the
// agents' hooks, ...), bridge/ (the two MCP servers), nvim/ (the bridge inside
// Neovim), cmd/ (the binary), and tests/. Every import goes to the same layer or
// one below it: a domain that needs the editor or a server asks through a package
// of its own layer (internal/neovims, internal/idelock), never by reaching up.
var layers = []string{"", "internal", "bridge", "nvim", "cmd", "tests"}

const modulePath = "github.com/mcpdiff/mcpdiff"

// layerOf is the index in layers of the package in dir: relative to the module,
// slash-separated (an import path with the module's path taken off).
func layerOf(dir string) int {
	top, _, _ := strings.Cut(dir, "/")
	for i, l := range layers {
		if l != "" && top == l {
			return i
		}
	}
	return 0
}

func TestEveryImportGoesDown(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// A module of its own (tests/bench), and what is not Go.
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" ||
				path == filepath.Join("tests", "bench")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		from := layerOf(dir)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != modulePath && !strings.HasPrefix(p, modulePath+"/") {
				continue
			}
			to := layerOf(strings.TrimPrefix(strings.TrimPrefix(p, modulePath), "/"))
			checked++
			if to > from {
				t.Errorf("%s imports %s, a layer above its own (bottom up: the root package, %s/)",
					path, p, strings.Join(layers[1:], "/, "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("found no import of the module's own packages")
	}
}

// A hook's process runs from internal/hookcmd's init, before the packages that Go
// initializes after jsonschema (internal/hookcmd says why): nothing it imports, at
// any depth, may need an MCP server, jsonschema or net/http, whose paths sort after
// jsonschema's. tests/hooks checks the init trace itself; this says which import
// broke it, without building the binary.
func TestTheHookImportsNoServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", modulePath+"/internal/hookcmd").Output()
	if err != nil {
		t.Fatalf("go list -deps internal/hookcmd: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "net/http" || strings.HasPrefix(p, "github.com/mark3labs/mcp-go/") || strings.HasPrefix(p, "github.com/santhosh-tekuri/") {
			why, _ := exec.Command("go", "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "-deps", modulePath+"/internal/hookcmd").Output()
			t.Fatalf("internal/hookcmd depends on %s: jsonschema would start before the hook runs (imported by:\n%s)", p, importersOf(string(why), p))
		}
	}
}

// importersOf keeps the lines of `go list -f '{{.ImportPath}}: {{.Imports}}'` that import p.
func importersOf(list, p string) string {
	var out []string
	for _, l := range strings.Split(list, "\n") {
		if _, imports, ok := strings.Cut(l, ": "); ok && slices.Contains(strings.Fields(imports), p) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
