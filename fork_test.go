package mcpdiff

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// third_party/jsonschema is the pinned release plus third_party/jsonschema.patch and
// nothing else, so that updating it is one command (scripts/jsonschema-fork). The
// release comes from Go's module cache (.ci/run fills it): never from the network.
func TestJSONSchemaForkIsUpstreamPlusPatch(t *testing.T) {
	cmd := exec.Command("sh", "scripts/jsonschema-fork", "--check")
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "module cache") && os.Getenv("MCPDIFF_REQUIRE_TOOLS") != "1" {
			t.Skipf("jsonschema's release is not in Go's module cache (.ci/run downloads it): %s", out)
		}
		t.Fatalf("scripts/jsonschema-fork --check: %v\n%s", err, out)
	}
}
