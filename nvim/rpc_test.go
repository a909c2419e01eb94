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

// The Lua functions Go calls (CallLua's names) are the ones lua/mcpdiff/rpc.lua
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
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == filepath.Join("..", "internal", "neovims", "rpc.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range stringLiterals(t, path, src) {
			if strings.Contains(s, `require("mcpdiff.`) || strings.Contains(s, `package.loaded["mcpdiff.`) {
				t.Errorf("%s runs the plugin's Lua without CallLua: %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// luaNamesGoCalls is every name Go code (this package's and internal/neovims')
// passes to CallLua, each a string literal.
func luaNamesGoCalls(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	others, err2 := filepath.Glob("../internal/neovims/*.go")
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	files = append(files, others...)
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
			fun := c.Fun
			if sel, ok := fun.(*ast.SelectorExpr); ok {
				fun = sel.Sel
			}
			if id, ok := fun.(*ast.Ident); !ok || id.Name != "CallLua" || len(c.Args) < 4 {
				return true
			}
			lit, ok := c.Args[3].(*ast.BasicLit)
			name, err := "", error(nil)
			if ok && lit.Kind == token.STRING {
				name, err = strconv.Unquote(lit.Value)
			}
			if !ok || lit.Kind != token.STRING || err != nil {
				t.Errorf("%s: CallLua's name is not a string literal", fset.Position(c.Pos()))
				return true
			}
			called[name] = true
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
	deletion := history.PendingChange{Kind: history.KindDelete, Beneath: []history.PendingChange{{Kind: history.KindChange}}}
	sent := luaPending([]history.PendingChange{deletion})[0]
	for class, want := range map[string][]string{
		"mcpdiff.EditChange":    slices.Collect(maps.Keys(luaChange(history.PendingChange{}))),
		"mcpdiff.PendingChange": slices.Collect(maps.Keys(sent)),
		"mcpdiff.ReviewList":    msgpackFields(reflect.TypeFor[reviewlist.List]()),
		"mcpdiff.BridgeInfo":    {"port", "lock", "token", "version", "pid"},       // attach in bridge.go
		"mcpdiff.DiffRequest":   {"tab", "path", "new_file", "dos", "bomb", "eol"}, // Show in editor.go
		"mcpdiff.DiffTexts":     {"orig", "prop"},
		"mcpdiff.ChangesUpdate": {"files", "reload", "workspaces"}, // storesChanged in review.go
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

// The LuaCATS types of what Go sends name its values too: a field or parameter typed
// as a union of string literals lists every value Go sends there, no more, no fewer.
func TestLuaTypesNameTheValuesGoSends(t *testing.T) {
	for _, c := range []struct {
		file, tag, name string // ---@<tag> <name> "a"|"b" in lua/mcpdiff/<file>
		want            []string
	}{
		{"rpc.lua", "param", "reason", goConstants(t, "editor.go", "closeReason")}, // diff.close
		{"changes.lua", "field", "kind", []string{history.KindAdd, history.KindChange, history.KindDelete}},
	} {
		data, err := os.ReadFile("../lua/mcpdiff/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		line := regexp.MustCompile(`(?m)^\s*---@` + c.tag + ` ` + c.name + `\??\s+((?:"[^"]*"\|?)+)`)
		found := line.FindAllStringSubmatch(string(data), -1)
		if len(found) != 1 {
			t.Errorf("lua/mcpdiff/%s: %d lines ---@%s %s with a union of strings, want one", c.file, len(found), c.tag, c.name)
			continue
		}
		var got []string
		for _, v := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(found[0][1], -1) {
			got = append(got, v[1])
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("lua/mcpdiff/%s: ---@%s %s lists %q; Go sends %q", c.file, c.tag, c.name, got, want)
		}
	}
}

// goConstants is the values of the string constants of type typ in this package's
// file.
func goConstants(t *testing.T, file, typ string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, ok := spec.Type.(*ast.Ident); !ok || id.Name != typ {
			return true
		}
		for _, v := range spec.Values {
			if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				out = append(out, s)
			}
		}
		return true
	})
	if len(out) == 0 {
		t.Fatalf("%s has no constant of type %s", file, typ)
	}
	return out
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
