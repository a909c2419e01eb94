// Package files benchmarks mcpdiff's file tools side by side with two peer MCP file
// servers, the reference @modelcontextprotocol/server-filesystem (npm) and
// github.com/mark3labs/mcp-filesystem-server (Go), through one client (mcp-go over
// stdio) and one workload: start-up, a read of a 10,000-line file, a one-line edit in
// a 1 MB and an 11 MB file, and 20 pipelined edits to one file.
//
// Run it with `make bench`, or:
//
//	MCPDIFF_BIN=$PWD/bin/mcpdiff go test -run '^$' -bench . -benchtime 1x ./tests/bench/files
//
// The peers are installed by scripts/peers into ~/.cache/mcpdiff/peers (override with
// MCPDIFF_PEERS); a peer that cannot be installed is skipped with a message, so the
// benchmarks also run offline for mcpdiff alone. Each sub-benchmark times several
// repetitions itself (so `-benchtime 1x` is enough) and reports the median as ns/op;
// after the run a markdown table with the ratios is printed. Nothing here fails on
// timing.
package files

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// peers maps a peer's name ("reference", "mark3labs") to its command, and
// peerProblem says why a peer is missing.
var (
	peers       = map[string]string{}
	peerProblem string
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Suite{Build: testenv.PlainBuild, BenchOnly: true,
		Setup: func() error { findPeers(); return nil }, Done: func() { printTable(os.Stdout) }})
}

// findPeers runs scripts/peers, which installs what is missing (once; later runs
// only print what is in the cache) and prints "name command" per installed peer.
func findPeers() {
	fmt.Fprintln(os.Stderr, "bench: looking for the peer servers (scripts/peers; the first run installs them)")
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "scripts", "peers"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, command, ok := strings.Cut(line, " "); ok {
			peers[name] = command
		}
	}
	if err != nil {
		peerProblem = fmt.Sprintf("scripts/peers: %v\n%s", err, strings.TrimSpace(stderr.String()))
		fmt.Fprintln(os.Stderr, "bench: "+peerProblem)
	}
	for _, srv := range []server{reference, mark3labs} {
		if peers[srv.name] == "" {
			fmt.Fprintf(os.Stderr, "bench: %s is not installed: its benchmarks are skipped, mcpdiff's still run\n", srv.name)
		}
	}
}
