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
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// binary is the mcpdiff under test: $MCPDIFF_BIN, else built into a temp folder.
var binary string

// peers maps a peer's name ("reference", "mark3labs") to its command, and
// peerProblem says why a peer is missing.
var (
	peers       = map[string]string{}
	peerProblem string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

// run is TestMain's body, so that its deferred clean-up runs before os.Exit.
func run(m *testing.M) int {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		return m.Run() // `go test ./...`: nothing to build or install
	}
	binary = os.Getenv("MCPDIFF_BIN")
	if binary == "" {
		dir, err := os.MkdirTemp("", "mcpdiff-bench")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "mcpdiff")
		build := exec.Command("go", "build", "-o", binary, "./cmd/mcpdiff")
		build.Dir = repoDir()
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build mcpdiff: %v\n%s", err, out)
			return 1
		}
	}
	findPeers()
	code := m.Run()
	printTable(os.Stdout)
	return code
}

func repoDir() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "..")
}

// findPeers runs scripts/peers, which installs what is missing (once; later runs
// only print what is in the cache) and prints "name command" per installed peer.
func findPeers() {
	fmt.Fprintln(os.Stderr, "bench: looking for the peer servers (scripts/peers; the first run installs them)")
	cmd := exec.Command(filepath.Join(repoDir(), "scripts", "peers"))
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
