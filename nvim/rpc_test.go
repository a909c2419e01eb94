package nvim

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/reviewlist"
)

// The Lua functions Go calls (neovims.CallLua's names) are the ones lua/mcpdiff/rpc.lua
// lists, both ways, each listed once and defined where its entry sends it; and no
// other Go code requires a plugin module.
func TestGoCallsOnlyTheseLuaFunctions(t *testing.T) {
	called := luaNamesGoCalls(t)
	data, err := os.ReadFile("../lua/mcpdiff/rpc.lua")
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`(?m)^\s*\["([^"]+)"\] = function\(`)
	listed := map[string]bool{}
	for _, m := range entry.FindAllStringSubmatch(string(data), -1) {
		if listed[m[1]] {
			t.Errorf("lua/mcpdiff/rpc.lua lists %q twice", m[1])
		}
		listed[m[1]] = true
	}
	if len(listed) == 0 {
		t.Fatal("found no entry in lua/mcpdiff/rpc.lua")
	}
	for _, name := range slices.Sorted(maps.Keys(called)) {
		if !listed[name] {
			t.Errorf("Go calls the Lua function %q, which lua/mcpdiff/rpc.lua does not list", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		if !called[name] {
			t.Errorf("lua/mcpdiff/rpc.lua lists %q, which Go never calls", name)
		}
		module, function, _ := strings.Cut(name, ".")
		target := `require("mcpdiff.` + module + `").` + function + `(`
		if !strings.Contains(string(data), target) {
			t.Errorf("lua/mcpdiff/rpc.lua's %q does not call %s...)", name, target)
		}
		if !luaModuleDefines(t, module, function) {
			t.Errorf("lua/mcpdiff/rpc.lua's %q: module mcpdiff.%s defines no function %s", name, module, function)
		}
	}

	// Every other way into the plugin's Lua from Go goes around the list.
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "tests" || d.Name() == "testenv" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == filepath.Join("..", "nvim", "neovims", "rpc.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range stringLiterals(t, path, src) {
			if strings.Contains(s, `require("mcpdiff.`) || strings.Contains(s, `package.loaded["mcpdiff.`) {
				t.Errorf("%s runs the plugin's Lua without neovims.CallLua: %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// luaNamesGoCalls is every name the Go code of this package and of neovims passes to
// CallLua, each a string literal.
func luaNamesGoCalls(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	inner, err2 := filepath.Glob("neovims/*.go")
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	files = append(files, inner...)
	called := map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := ""
			switch f := c.Fun.(type) {
			case *ast.Ident: // inside neovims
				name = f.Name
			case *ast.SelectorExpr: // neovims.CallLua
				if pkg, ok := f.X.(*ast.Ident); ok && pkg.Name == "neovims" {
					name = f.Sel.Name
				}
			}
			if name != "CallLua" || len(c.Args) < 4 {
				return true
			}
			lit, ok := c.Args[3].(*ast.BasicLit)
			luaName, err := "", error(nil)
			if ok && lit.Kind == token.STRING {
				luaName, err = strconv.Unquote(lit.Value)
			}
			if !ok || lit.Kind != token.STRING || err != nil {
				t.Errorf("%s: CallLua's name is not a string literal", fset.Position(c.Pos()))
				return true
			}
			called[luaName] = true
			return true
		})
	}
	if len(called) == 0 {
		t.Fatal("found no call of CallLua")
	}
	return called
}

// luaModuleDefines reports whether the plugin's module mcpdiff.<module> (a file or a
// folder's init.lua) has `function M.<function>(`.
func luaModuleDefines(t *testing.T, module, function string) bool {
	t.Helper()
	for _, path := range []string{"../lua/mcpdiff/" + module + ".lua", "../lua/mcpdiff/" + module + "/init.lua"} {
		data, err := os.ReadFile(path)
		if err == nil {
			return strings.Contains(string(data), "function M."+function+"(")
		}
	}
	return false
}

func stringLiterals(t *testing.T, path string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// The LuaCATS classes of what Go sends name the fields Go sends, no more, no fewer.
func TestLuaTypesNameWhatGoSends(t *testing.T) {
	classes := luaClasses(t)
	deletion := history.Hunk{Kind: history.KindDelete, Beneath: []history.Hunk{{Kind: history.KindChange}}}
	sent := luaHunks([]history.Hunk{deletion})[0]
	for class, want := range map[string][]string{
		"mcpdiff.EditChange":    slices.Collect(maps.Keys(luaChange(history.Hunk{}))),
		"mcpdiff.PendingChange": slices.Collect(maps.Keys(sent)),
		"mcpdiff.ReviewList":    msgpackFields(reflect.TypeFor[reviewlist.List]()),
		"mcpdiff.BridgeInfo":    {"port", "lock", "token", "version", "pid"},       // attach in bridge.go
		"mcpdiff.DiffRequest":   {"tab", "path", "new_file", "dos", "bomb", "eol"}, // Show in editor.go
		"mcpdiff.DiffTexts":     {"orig", "prop"},
		"mcpdiff.HunksUpdate":   {"files", "reload", "workspaces"}, // storesChanged in review.go
	} {
		got, ok := classes[class]
		if !ok {
			t.Errorf("lua/mcpdiff has no ---@class %s", class)
			continue
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("---@class %s has the fields %q; Go sends %q", class, got, want)
		}
	}
}

// luaClasses is the fields of every ---@class in lua/mcpdiff (with those of the class
// it extends), sorted, by class name.
func luaClasses(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("../lua/mcpdiff/*.lua")
	folders, err2 := filepath.Glob("../lua/mcpdiff/*/*.lua")
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	class := regexp.MustCompile(`^---@class ([\w.]+)(?:: ([\w.]+))?$`)
	field := regexp.MustCompile(`^---@field (\w+)\??\s`)
	fields, parent := map[string][]string{}, map[string]string{}
	for _, f := range append(files, folders...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		current := ""
		for _, line := range strings.Split(string(data), "\n") {
			if m := class.FindStringSubmatch(line); m != nil {
				current, parent[m[1]] = m[1], m[2]
				fields[current] = []string{}
			} else if m := field.FindStringSubmatch(line); m != nil && current != "" {
				fields[current] = append(fields[current], m[1])
			} else {
				current = ""
			}
		}
	}
	out := map[string][]string{}
	for name := range fields {
		all := slices.Clone(fields[name])
		for p := parent[name]; p != ""; p = parent[p] {
			all = append(all, fields[p]...)
		}
		slices.Sort(all)
		out[name] = all
	}
	return out
}

// msgpackFields is the names under which msgpack sends the exported fields of a struct.
func msgpackFields(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("msgpack"), ","); f.IsExported() && name != "-" {
			out = append(out, cmp.Or(name, f.Name))
		}
	}
	return out
}
