//go:build unix

package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// storeFacts is what `mcpdiff status --health --json` prints.
type storeFacts struct {
	Workspace string   `json:"workspace"`
	Store     string   `json:"store"`
	Format    int      `json:"format"`
	Writable  bool     `json:"writable"`
	Edits     int      `json:"edits"`
	Pending   int      `json:"pending"`
	Warnings  []string `json:"warnings"`
	Info      []string `json:"info"`
	Error     string   `json:"error"`
}

// health runs `mcpdiff status --health --json` in dir and decodes what it printed.
func health(t *testing.T, dir string) (storeFacts, string, int) {
	t.Helper()
	out, errOut, code := cliSplit(t, dir, "status", "--health", "--json")
	var f storeFacts
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("status --health --json printed no JSON object (exit %d): %v\n%s%s", code, err, out, errOut)
	}
	return f, errOut, code
}

// `mcpdiff status --health` tells of the store what :checkhealth mcpdiff shows:
// where it is, its format, whether it is writable, its counts and its notices, as
// readable lines or (--json) one object.
func TestStatusHealth(t *testing.T) {
	t.Parallel()
	// No store above the folder: said, and not a failure.
	empty := testenv.TempDir(t)
	if f, errOut, code := health(t, empty); code != 0 || errOut != "" || f.Store != "" || f.Workspace != empty || f.Edits != 0 {
		t.Fatalf("without a store: exit %d, stderr %q, %+v", code, errOut, f)
	}
	if out, code := cli(t, empty, "status", "--health"); code != 0 || out != "no .mcp/edit_history above "+empty+" yet (made by the first recorded edit)\n" {
		t.Fatalf("without a store: exit %d\n%s", code, out)
	}

	// Three edits, one accepted; asked from a folder below the workspace.
	s, ids := threeEdits(t)
	if out, code := cli(t, s.dir, "accept", ids[0]); code != 0 {
		t.Fatalf("accept: %s", out)
	}
	sub := filepath.Join(s.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(s.dir, ".mcp", "edit_history")
	want := storeFacts{Workspace: s.dir, Store: store, Format: 1, Writable: true, Edits: 3, Pending: 2, Warnings: []string{}, Info: []string{}}
	if f, errOut, code := health(t, sub); code != 0 || errOut != "" || !reflect.DeepEqual(f, want) {
		t.Fatalf("status --health --json: exit %d, stderr %q\n got %+v\nwant %+v", code, errOut, f, want)
	}
	out, code := cli(t, sub, "status", "--health")
	for _, line := range []string{"store " + store + " (format version 1, writable)", "3 edit(s) recorded, 2 pending", "every recorded file holds what its history says"} {
		if code != 0 || !strings.Contains(out, line+"\n") {
			t.Errorf("status --health: exit %d, no line %q:\n%s", code, line, out)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(store, "tmp")); len(entries) != 0 {
		t.Errorf("status --health left files in the store's tmp/: %v", entries)
	}

	// A file changed outside mcpdiff: the note status gives, with the way out.
	s.Write("a.txt", "changed by hand\n")
	f, errOut, code := health(t, s.dir)
	if code != 0 || len(f.Info) != 1 || !strings.Contains(f.Info[0], "a.txt was changed outside mcpdiff") || !strings.Contains(f.Info[0], "mcpdiff restore --file a.txt") || len(f.Warnings) != 0 {
		t.Fatalf("after an outside change: exit %d, stderr %q, %+v", code, errOut, f)
	}
	if out, _ := cli(t, s.dir, "status", "--health"); !strings.Contains(out, "info: a.txt was changed outside mcpdiff") || strings.Contains(out, "every recorded file") {
		t.Fatalf("status --health after an outside change:\n%s", out)
	}

	// A store a newer mcpdiff wrote: the facts it can tell, the reason, exit 1.
	if err := os.WriteFile(filepath.Join(store, "FORMAT"), []byte("mcpdiff-edit-history 99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, errOut, code = health(t, s.dir)
	if code != 1 || f.Format != 99 || f.Store != store || !strings.Contains(f.Error, "newer mcpdiff") || !strings.HasPrefix(errOut, "mcpdiff: ") || !strings.Contains(errOut, "newer mcpdiff") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("a newer store: exit %d, stderr %q, %+v", code, errOut, f)
	}
}

// --health tells of the whole store: a filter with it is bad usage.
func TestStatusHealthRefusesFilters(t *testing.T) {
	t.Parallel()
	dir := testenv.TempDir(t)
	for _, args := range [][]string{{"--conv", "c1"}, {"--file", "a.txt"}, {"--status", "pending"}, {"--review"}} {
		_, errOut, code := cliSplit(t, dir, append([]string{"status", "--health"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "--health tells of the whole store") {
			t.Errorf("status --health %s: exit %d, %q", strings.Join(args, " "), code, errOut)
		}
	}
}
