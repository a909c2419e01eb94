// Command testsummary runs `go test -json`, shows its events as plain `go test`
// shows them, keeps them, and sums up several runs: how the Makefile's test targets
// run the tests.
//
//	testsummary -log FILE go test -json ARGS...
//	    runs the command, writes its events to FILE, prints each package's result
//	    line and the output of each test that failed (as go test does without -v),
//	    and exits 1 when the command failed or a test did
//	testsummary -slowest N FILE...
//	    after the runs: the tests that were skipped, with their reasons, and the N
//	    slowest tests (those without subtests, so that parallel subtests count)
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

func main() {
	logPath := flag.String("log", "", "run the command given as arguments and write its events to this file")
	slowest := flag.Int("slowest", 0, "sum up the event files named as arguments: skipped tests and the N slowest")
	flag.Parse()
	var err error
	switch {
	case *logPath != "" && *slowest == 0 && flag.NArg() > 0:
		var failed bool
		failed, err = run(*logPath, flag.Args())
		if err == nil && failed {
			os.Exit(1)
		}
	case *slowest > 0 && *logPath == "":
		err = summarize(os.Stdout, *slowest, flag.Args())
	default:
		err = errors.New("usage: testsummary -log FILE go test -json ARGS..., or testsummary -slowest N FILE")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
}

// run runs argv, shows its events (show) and reports whether anything failed.
func run(logPath string, argv []string) (failed bool, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return false, err
	}
	failed, showErr := show(events, os.Stdout, logPath)
	if err := cmd.Wait(); err != nil {
		if _, exited := err.(*exec.ExitError); !exited {
			return false, err
		}
		failed = true
	}
	fmt.Printf("%s: %v\n", logPath, time.Since(start).Round(time.Second))
	return failed, showErr
}

// show copies the events of in to logPath and prints what go test prints without -v.
// It reports whether anything failed.
func show(in io.Reader, out io.Writer, logPath string) (failed bool, err error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return false, err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return false, err
	}
	defer log.Close()
	buffered := map[string][]string{} // a test's output, until it passes or fails
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		fmt.Fprintf(log, "%s\n", line)
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line) // go test's own words (a build error, say)
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "output" && e.Test != "":
			buffered[key] = append(buffered[key], e.Output)
		case e.Action == "output" && e.Output == "PASS\n": // go test leaves it out too
		case e.Action == "output" || e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Action == "fail" || e.Action == "build-fail":
			failed = true
			fmt.Fprint(out, strings.Join(buffered[key], ""))
			delete(buffered, key)
		case e.Action == "pass" || e.Action == "skip":
			delete(buffered, key)
		}
	}
	return failed, sc.Err()
}

// result is one test's end.
type result struct {
	name    string
	action  string
	elapsed float64
	output  []string
}

// summarize prints the skipped tests of the event files and their n slowest tests
// without subtests.
func summarize(out io.Writer, n int, files []string) error {
	results := map[string]*result{}
	parents := map[string]bool{}
	for _, f := range files {
		// The main run's tests go by their names; those of another run (the portable
		// pass runs some tests again) say which run they were in.
		run := strings.TrimSuffix(filepath.Base(f), ".json")
		if run == "all" {
			run = ""
		}
		if err := readResults(f, run, results, parents); err != nil {
			return err
		}
	}
	var skipped, leaves []*result
	for key, r := range results {
		if r.action == "skip" {
			skipped = append(skipped, r)
		}
		if !parents[key] && r.action != "skip" {
			leaves = append(leaves, r)
		}
	}
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].name < skipped[j].name })
	if len(skipped) > 0 {
		fmt.Fprintf(out, "\nSkipped (%d):\n", len(skipped))
		for _, r := range skipped {
			fmt.Fprintf(out, "  %s: %s\n", r.name, skipReason(r.output))
		}
	}
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].elapsed > leaves[j].elapsed })
	if len(leaves) > n {
		leaves = leaves[:n]
	}
	fmt.Fprintf(out, "\nThe %d slowest tests:\n", len(leaves))
	for _, r := range leaves {
		fmt.Fprintf(out, "  %7.2fs  %s\n", r.elapsed, r.name)
	}
	return nil
}

func readResults(path, run string, results map[string]*result, parents map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" {
			continue
		}
		pkg := e.Package[strings.LastIndex(e.Package, "/")+1:]
		key := run + " " + pkg + " " + e.Test
		r := results[key]
		if r == nil {
			r = &result{name: pkg + "." + e.Test}
			if run != "" {
				r.name += " (" + run + ")"
			}
			results[key] = r
			// Every prefix: t.Run("a/b") makes a test two levels down.
			for i, c := range e.Test {
				if c == '/' {
					parents[run+" "+pkg+" "+e.Test[:i]] = true
				}
			}
		}
		switch e.Action {
		case "output":
			r.output = append(r.output, e.Output)
		case "pass", "fail", "skip":
			r.action, r.elapsed = e.Action, e.Elapsed
		}
	}
	return sc.Err()
}

// skipReason is what a skipped test said: the lines of its output other than go
// test's own.
func skipReason(output []string) string {
	var said []string
	for _, l := range output {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		said = append(said, l)
	}
	if len(said) == 0 {
		return "(no reason given)"
	}
	return strings.Join(said, " ")
}
