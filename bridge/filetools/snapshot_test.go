package filetools

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Every tool's schema, description and annotations are what the model sees; a change
// to them must be deliberate. UPDATE_SNAPSHOTS=1 go test ./bridge/filetools rewrites the
// snapshots in testdata/toolsnaps.
func TestToolSchemaSnapshots(t *testing.T) {
	srv, err := New(Config{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	tools := srv.mcp.ListTools()
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
		testenv.Snapshot(t, filepath.Join(dir, name+".json"), got)
	}
}
