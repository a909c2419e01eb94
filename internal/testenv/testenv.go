// Package testenv is what the tests and benchmarks of mcpdiff share: the binary under
// test (built with -race, its data races collected and turned into failures), the
// Neovims to run on, started embedded or listening on a socket and quit once the
// plugin's bridge has ended (EmbedNeovim, ListenNeovim, QuitNeovim), an environment
// that reads nothing of the real user's, temp folders and files, running commands, an
// MCP client of a server run over stdio (StartMCP), waiting on a condition or a
// channel with a deadline, golden files updated with one switch, benchmark tables and
// files, and stores: big edit histories written in a second (WriteStore) and edits
// recorded as the file tools record them (CreateStore, Record, RecordEdit, Entries).
//
// The environment it reads:
//
//	MCPDIFF_BIN            the binary under test; `make test` passes a -race build,
//	                       `make bench` a plain one (without it: built into a temp folder)
//	MCPDIFF_NVIMS          Neovim binaries, colon-separated (default: /usr/bin/nvim and
//	                       ~/.cache/nvim-0.10/bin/nvim when present)
//	MCPDIFF_REQUIRE_TOOLS=1
//	                       a test that needs a program .ci/run installs (a Neovim,
//	                       an agent CLI, tmux, strace) fails, not skips, without it
//	                       (`make test` sets it)
//	UPDATE_SNAPSHOTS=1     golden files are rewritten instead of compared
//	MCPDIFF_TEST_TIMEOUT_SCALE
//	                       the factor (default 1) every deadline of the tests is
//	                       multiplied by: waits, contexts, limits of subprocesses
//	                       (package timeouts)
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv/timeouts"
)

// The stores tests make are signed with a key in $XDG_STATE_HOME/mcpdiff: in a test
// process it is a folder of the tests' own (Main gives each suite a fresh one), never
// the user's.
func init() {
	if testing.Testing() {
		os.Setenv("XDG_STATE_HOME", filepath.Join(os.TempDir(), fmt.Sprintf("mcpdiff-test-state-%d", os.Getuid())))
	}
}

// Scaled is d times $MCPDIFF_TEST_TIMEOUT_SCALE (package timeouts): every deadline
// of the suites goes through it.
func Scaled(d time.Duration) time.Duration { return timeouts.Scaled(d) }

// WaitLimit bounds every wait; reaching it is a failure, never a pace.
var WaitLimit = Scaled(20 * time.Second)

// RepoRoot is the checkout's root folder.
func RepoRoot() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..")
}

// Eventually polls cond until it holds, failing the test after WaitLimit.
func Eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	EventuallyWithin(tb, WaitLimit, what, cond)
}

// EventuallyWithin polls cond until it holds, failing the test after limit.
func EventuallyWithin(tb testing.TB, limit time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Within(limit, cond) {
		tb.Fatalf("timed out waiting for %s", what)
	}
}

// Within polls cond until it holds or limit has passed, and tells whether it held:
// for a caller that says more than Eventually when it fails, or does not fail.
func Within(limit time.Duration, cond func() bool) bool {
	return WithinEvery(limit, 5*time.Millisecond, cond)
}

// WithinEvery is Within for a cond too costly to poll more often than every.
func WithinEvery(limit, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}

// Receive waits for a value on ch and returns it, failing the test after WaitLimit.
func Receive[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	v, _ := ReceiveOrClosed(tb, ch, nil, what) // a nil channel is never closed
	return v
}

// ReceiveOrClosed waits for a value on ch, failing the test after WaitLimit. When
// closed is closed first, a value sent just before still counts; without one, ok is
// false (the caller says what ended).
func ReceiveOrClosed[T any](tb testing.TB, ch <-chan T, closed <-chan struct{}, what string) (v T, ok bool) {
	tb.Helper()
	select {
	case v = <-ch:
		return v, true
	case <-closed:
		select {
		case v = <-ch:
			return v, true
		default:
			return v, false
		}
	case <-time.After(WaitLimit):
		tb.Fatalf("timed out waiting for %s", what)
		return v, false
	}
}

// Updating tells whether golden files are rewritten (UPDATE_SNAPSHOTS=1) rather than
// compared.
func Updating() bool { return os.Getenv("UPDATE_SNAPSHOTS") == "1" }

// Snapshot compares got with the golden file at path, or writes it when Updating.
// It reports whether they matched (or the file was written); on a mismatch it has
// already failed the test, saying how to accept the change.
func Snapshot(tb testing.TB, path string, got []byte) bool {
	tb.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return true
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with UPDATE_SNAPSHOTS=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("%s changed; if that is deliberate, run the test again with UPDATE_SNAPSHOTS=1\n got: %s\nwant: %s", path, got, want)
		return false
	}
	return true
}
