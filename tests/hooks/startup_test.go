package hooks

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// initTrace lists the packages a run of the binary initialized (GODEBUG=inittrace=1
// names every package whose initialization did any work, in order).
func initTrace(t *testing.T, w *ws, input string, args ...string) []string {
	t.Helper()
	cmd := w.command([]string{"GODEBUG=inittrace=1"}, args...)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "init ") {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	var pkgs []string
	for _, m := range regexp.MustCompile(`(?m)^init (\S+) @`).FindAllStringSubmatch(string(out), -1) {
		pkgs = append(pkgs, m[1])
	}
	return pkgs
}

// The hook runs, and its process exits, before the MCP server's packages are
// initialized: jsonschema's init (linked by mcp-go's server) takes longer than the
// rest of a hook call, and an agent starts a hook on every edit (internal/hookcmd).
// It fails when a package the hook imports comes to need one that Go initializes
// after jsonschema (an MCP server, net/http).
// Every other command initializes everything; that it shows in the trace proves the
// trace would show it for the hook too.
func TestHookSkipsTheServersStartUp(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	w.Write("a.txt", "a\n")
	const server = "github.com/santhosh-tekuri/jsonschema/v6"
	for _, name := range []string{"PreToolUse", "PostToolUse"} {
		if name == "PostToolUse" {
			w.Write("a.txt", "b\n") // the agent's write
		}
		pkgs := initTrace(t, w, w.event(name, "s", "p", "toolu_1", "a.txt"), "hook")
		// hookcmd's own line never comes: the process exits inside its init.
		if !slices.Contains(pkgs, "github.com/mcpdiff/mcpdiff/internal/agenthooks") {
			t.Fatalf("%s: internal/agenthooks is not in the init trace: %q", name, pkgs)
		}
		for _, p := range pkgs {
			if p == server || strings.HasPrefix(p, "github.com/mark3labs/mcp-go/server") {
				t.Fatalf("%s: the hook's process initialized %s: %q", name, p, pkgs)
			}
		}
	}
	if pkgs := initTrace(t, w, "", "version"); !slices.Contains(pkgs, server) {
		t.Fatalf("`mcpdiff version` did not initialize %s, so the trace cannot tell: %q", server, pkgs)
	}
	if n := len(w.entries()); n != 1 {
		t.Fatalf("the hooks recorded %d entries, want 1", n)
	}
}
