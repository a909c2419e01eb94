package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
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

// ProcessAlive tells whether pid still runs (a zombie counts as gone).
func ProcessAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat))
	return len(fields) < 3 || fields[2] != "Z"
}

// StatusKB is a field of /proc/PID/status that Linux gives in kB (VmRSS, VmHWM).
func StatusKB(pid int, field string) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
