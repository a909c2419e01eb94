package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The markers of docs/benchmarks.md between which `make bench` writes its tables.
const (
	benchBegin = "<!-- begin: make bench writes the tables of its last run here (scripts/bench-tables) -->"
	benchEnd   = "<!-- end: the tables of the last run -->"
)

// benchLog is what a `make bench` run prints: go test's lines around the tables.
func benchLog(figure string) string {
	return "goos: linux\nBenchmarkReject-2   1   9100000 ns/op\n" +
		"\n### Edit history at scale (median of the repetitions, min in brackets)\n\n" +
		"| measurement | figure | goal |\n|---|---|---|\n| reject 1 of 1,000 edits | " + figure + " | < 100 ms: met |\n\n" +
		"The diff of a 100,000-line file: see `go test`.\nPASS\nok  \tgithub.com/mcpdiff/mcpdiff/tests/bench/history\t12.3s\n" +
		"\n### Neovim bridge (NVIM v0.10.4, median of the repetitions)\n\n" +
		"| measurement | mcpdiff | claudecode.nvim | goal |\n|---|---|---|---|\n| openDiff → diff drawn | 8 ms | 37 ms | < 20 ms: met |\nPASS\n"
}

// runBenchTables runs scripts/bench-tables on log and doc (file contents) in a temp
// folder and returns its exit code, output and doc afterwards.
func runBenchTables(t *testing.T, log, doc string) (int, string, string) {
	t.Helper()
	dir := testenv.TempDir(t)
	logPath, docPath := filepath.Join(dir, "bench.log"), filepath.Join(dir, "benchmarks.md")
	testenv.WriteFile(t, logPath, log)
	testenv.WriteFile(t, docPath, doc)
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "scripts", "bench-tables"), logPath, docPath)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("scripts/bench-tables: %v", err)
		}
		code = exit.ExitCode()
	}
	if _, err := os.Stat(docPath + ".tmp"); err == nil {
		t.Fatalf("scripts/bench-tables left %s.tmp", docPath)
	}
	return code, string(out), testenv.ReadFile(t, docPath)
}

// outside is doc without what lies between the markers.
func outside(t *testing.T, doc string) string {
	t.Helper()
	before, rest, ok := strings.Cut(doc, benchBegin)
	_, after, ok2 := strings.Cut(rest, benchEnd)
	if !ok || !ok2 {
		t.Fatalf("the page lacks the markers:\n%s", doc)
	}
	return before + after
}

// `make bench` writes its tables into docs/benchmarks.md: between the markers, in
// place of the last run's, under a line naming the day, commit and load; the rest of
// the page stays byte for byte.
func TestBenchTablesWritten(t *testing.T) {
	t.Parallel()
	page := repoText(t, "docs/benchmarks.md")
	code, out, doc := runBenchTables(t, benchLog("9.1 ms (min 8.9 ms, n=9)"), page)
	if code != 0 {
		t.Fatalf("scripts/bench-tables: exit %d\n%s", code, out)
	}
	if outside(t, doc) != outside(t, page) {
		t.Fatalf("the page outside the markers changed:\n%s", doc)
	}
	for _, want := range []string{"Run on ", " at commit ", "load average ",
		"### Edit history at scale", "| reject 1 of 1,000 edits | 9.1 ms (min 8.9 ms, n=9) | < 100 ms: met |",
		"### Neovim bridge (NVIM v0.10.4", "| openDiff → diff drawn | 8 ms | 37 ms | < 20 ms: met |"} {
		if !strings.Contains(doc, want) {
			t.Fatalf("the page after the run lacks %q:\n%s", want, doc)
		}
	}
	for _, noise := range []string{"goos:", "PASS", "ok  \t", "BenchmarkReject", "see `go test`"} {
		if strings.Contains(doc[strings.Index(doc, benchBegin):], noise) {
			t.Fatalf("the tables carry go test's line %q:\n%s", noise, doc)
		}
	}

	// The next run replaces them.
	_, _, again := runBenchTables(t, benchLog("7.7 ms (min 7.1 ms, n=9)"), doc)
	if strings.Contains(again, "9.1 ms") || strings.Count(again, "### Edit history at scale") != 1 ||
		!strings.Contains(again, "7.7 ms (min 7.1 ms, n=9)") || outside(t, again) != outside(t, page) {
		t.Fatalf("a second run did not replace the first one's tables:\n%s", again)
	}
}

// A run that printed no table, or a page without its markers, is refused with a
// message, and the page stays as it was.
func TestBenchTablesRefuses(t *testing.T) {
	t.Parallel()
	page := repoText(t, "docs/benchmarks.md")
	code, out, doc := runBenchTables(t, "FAIL\tgithub.com/mcpdiff/mcpdiff/tests/bench/ide\n", page)
	if code == 0 || !strings.Contains(out, "holds no tables") || doc != page {
		t.Fatalf("a log without tables: exit %d, %q, page changed: %v", code, out, doc != page)
	}
	noMarkers := strings.Replace(page, benchEnd, "", 1)
	code, out, doc = runBenchTables(t, benchLog("9 ms"), noMarkers)
	if code == 0 || !strings.Contains(out, "0 times, want once") || doc != noMarkers {
		t.Fatalf("a page without its end marker: exit %d, %q, page changed: %v", code, out, doc != noMarkers)
	}
}
