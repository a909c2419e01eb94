package mcpdiff

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The syscall names a file may use without a build constraint: they exist, with the
// same meaning, on every system `make cross` builds for (Linux, macOS, Windows,
// FreeBSD). Anything else (Stat_t, Kill, Renameat2, /proc) belongs in a file whose
// name or //go:build line says where it runs, with a portable twin beside it.
var portableSyscalls = map[string]bool{
	"Errno": true, "RawConn": true, "WaitStatus": true,
	"O_NONBLOCK": true, "O_NOCTTY": true,
	"SIGHUP": true, "SIGINT": true, "SIGKILL": true, "SIGPIPE": true, "SIGTERM": true,
}

// A file without a build constraint compiles on every system, so it may not reach
// for what only Linux (or only Unix) has: golang.org/x/sys/unix, syscall names
// outside portableSyscalls, or /proc. This fails where a new one appears, before a
// macOS user's `make` does.
func TestLinuxOnlyCallsStayInTaggedFiles(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || hasOSSuffix(d.Name()) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if constrained(f) {
			return nil
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "golang.org/x/sys/unix" {
				t.Errorf("%s imports golang.org/x/sys/unix without a build constraint", fset.Position(imp.Pos()))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "syscall" && !portableSyscalls[n.Sel.Name] && !isErrno(n.Sel.Name) {
					t.Errorf("%s: syscall.%s is not on every system; move it to a file with a build constraint", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && strings.Contains(n.Value, procFS) {
					t.Errorf("%s: %s names /proc, which only Linux has; move it to a _linux.go file", fset.Position(n.Pos()), n.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// procFS is Linux's process file system, spelt so that this file does not name it.
var procFS = "/" + "proc/"

// isErrno reports whether name is one of the error numbers Go defines on every system
// (on Windows as invented values that its os package maps).
func isErrno(name string) bool {
	return len(name) > 1 && name[0] == 'E' && strings.ToUpper(name) == name
}

// constrained reports whether f has a //go:build line.
func constrained(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) {
				return true
			}
		}
	}
	return false
}

// hasOSSuffix reports whether a file's name limits it to one system (x_linux.go,
// x_darwin_test.go, ...), as go/build reads it.
func hasOSSuffix(name string) bool {
	parts := strings.Split(strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test"), "_")
	if n := len(parts); n > 2 && knownArch[parts[n-1]] {
		parts = parts[:n-1]
	}
	return len(parts) > 1 && knownOS[parts[len(parts)-1]]
}

var (
	knownOS   = map[string]bool{"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true, "illumos": true, "ios": true, "js": true, "linux": true, "netbsd": true, "openbsd": true, "plan9": true, "solaris": true, "wasip1": true, "windows": true}
	knownArch = map[string]bool{"386": true, "amd64": true, "arm": true, "arm64": true, "loong64": true, "mips": true, "mips64": true, "mips64le": true, "mipsle": true, "ppc64": true, "ppc64le": true, "riscv64": true, "s390x": true, "wasm": true}
)

// The plugin runs wherever Neovim does: it starts programs without a shell (a list,
// never a command string, which would need sh and its quoting) and assumes no
// folder of one system.
func TestLuaAssumesNoSystem(t *testing.T) {
	forbidden := []struct{ re, why string }{
		{`/tmp\b`, "a temporary folder: use vim.fn.tempname() or stdpath()"},
		{procFS, "/proc exists only on Linux"},
		{`io\.popen|os\.execute`, "runs a shell: use vim.fn.jobstart or vim.fn.system with a list"},
		{`(system|jobstart|termopen)\(\s*["']`, "a command string runs a shell: pass a list"},
		{`["'](sed|ps|awk|grep|readlink|stat)\s`, "a Unix tool: do it in Lua or in the binary"},
	}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && path != "lua" && path != "plugin" && !strings.HasPrefix(path, "lua"+string(filepath.Separator)) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".lua") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if code, _, _ := strings.Cut(line, "--"); code != "" {
				for _, f := range forbidden {
					if regexp.MustCompile(f.re).MatchString(code) {
						t.Errorf("%s:%d: %s\n\t%s", path, i+1, f.why, strings.TrimSpace(line))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
