package filetools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Every tool's schema, description and annotations are what the model sees; a change
// to them must be deliberate. UPDATE_SNAPSHOTS=1 go test ./bridge rewrites the
// snapshots in testdata/toolsnaps.
func TestToolSchemaSnapshots(t *testing.T) {
	srv, err := New(Config{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	tools := srv.MCP().ListTools()
	names := make([]string, 0, len(tools))
	for name := range tools {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) != 15 {
		t.Fatalf("%d tools: %v", len(names), names)
	}
	dir := filepath.Join("testdata", "toolsnaps")
	for _, name := range names {
		got, err := json.MarshalIndent(tools[name].Tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, name+".json")
		if os.Getenv("UPDATE_SNAPSHOTS") != "" {
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: no snapshot (run with UPDATE_SNAPSHOTS=1 to create it): %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s's schema changed; if that is deliberate, run UPDATE_SNAPSHOTS=1 go test ./bridge\n got: %s\nwant: %s", name, got, want)
		}
	}
}
