package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// Run runs cmd and returns what it wrote and its exit code; killed by a signal, the
// code is 128 plus the signal's number, as a shell reports it. A command that cannot
// start fails the test.
func Run(tb testing.TB, cmd *exec.Cmd) (stdout, stderr string, code int) {
	tb.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	case err != nil:
		tb.Fatalf("run %v: %v", cmd.Args, err)
	}
	return out.String(), errOut.String(), code
}

// FirstMatch reads r line by line until one matches re and returns its first
// submatch, failing the test after WaitLimit. It keeps reading r afterwards, so a
// process writing to it never blocks on a full pipe.
func FirstMatch(tb testing.TB, r io.Reader, re *regexp.Regexp) string {
	tb.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case s := <-found:
		return s
	case <-time.After(WaitLimit):
		tb.Fatalf("no line matched %s within %v", re, WaitLimit)
		return ""
	}
}

// KillProcess kills pid, if it still runs.
func KillProcess(pid int) {
	if p, err := os.FindProcess(pid); err == nil && pid > 0 {
		_ = p.Kill()
	}
}

// Promised is the limit for a check that a command of the binary keeps a time
// mcpdiff promises (a hook answers within 2 s): the promise, scaled, plus how long
// the binary under test takes to start and exit here and now. The -race build takes
// up to a second to start on a loaded machine, which a user's build does in
// milliseconds; the promise is about what the command does once it runs.
func Promised(tb testing.TB, promise time.Duration) time.Duration {
	tb.Helper()
	start := time.Now()
	if out, err := exec.Command(Binary, "version").CombinedOutput(); err != nil {
		tb.Fatalf("%s version: %v %s", Binary, err, out)
	}
	return Scaled(promise) + time.Since(start)
}
