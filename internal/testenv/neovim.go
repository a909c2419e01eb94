package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Neovims are the Neovim binaries to run a test on: $MCPDIFF_NVIMS (colon-separated),
// else Debian's /usr/bin/nvim and the Neovim 0.10 that scripts/nvim-0.10 installs,
// those that exist. With none, the test is skipped, or fails when ToolsRequired (as
// in `make test`, where a missing Neovim must not pass); then every one listed must
// exist, and an empty entry (a Neovim that was looked for and not found) fails too.
func Neovims(tb testing.TB) []string {
	tb.Helper()
	if ToolsRequired() {
		for _, p := range neovimCandidates() {
			if _, err := os.Stat(p); err != nil {
				tb.Fatalf("MCPDIFF_REQUIRE_TOOLS=1 and the Neovim %q of MCPDIFF_NVIMS=%q is missing: %v", p, os.Getenv("MCPDIFF_NVIMS"), err)
			}
		}
	}
	out := FoundNeovims()
	if len(out) == 0 {
		SkipWithoutNeovim(tb, "no Neovim found (set MCPDIFF_NVIMS, colon-separated, or install Debian's neovim and run scripts/nvim-0.10)")
	}
	return out
}

// ToolsRequired reports whether a test that lacks a program it needs (a Neovim, an
// agent CLI, tmux, strace: what .ci/run installs) must fail rather than skip
// (MCPDIFF_REQUIRE_TOOLS=1, set by `make test`).
func ToolsRequired() bool { return os.Getenv("MCPDIFF_REQUIRE_TOOLS") == "1" }

// SkipWithoutNeovim skips a test that lacks the Neovim it needs, or fails it when
// ToolsRequired.
func SkipWithoutNeovim(tb testing.TB, why string) {
	tb.Helper()
	SkipWithout(tb, why)
}

// SkipWithout skips a test that lacks a program .ci/run installs (a Neovim, an agent
// CLI, tmux, strace, an awk), or fails it under `make test` (ToolsRequired), where
// every one must be there.
func SkipWithout(tb testing.TB, why string) {
	tb.Helper()
	if ToolsRequired() {
		tb.Fatal(why + "; MCPDIFF_REQUIRE_TOOLS=1 says the tests need it")
	}
	tb.Skip(why)
}

// FoundNeovims are the Neovims of Neovims that exist, without a test to skip or fail.
func FoundNeovims() []string {
	var out []string
	for _, p := range neovimCandidates() {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func neovimCandidates() []string {
	if env := os.Getenv("MCPDIFF_NVIMS"); env != "" {
		return strings.Split(env, ":")
	}
	home, _ := os.UserHomeDir()
	return []string{"/usr/bin/nvim", filepath.Join(home, ".cache/nvim-0.10/bin/nvim")}
}

// NeovimVersion is the first line of `nvim --version` ("NVIM v0.10.4"), or the
// binary's path when it does not run.
func NeovimVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return bin
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first)
}

// EachNeovim runs fn as a subtest per Neovim (see Neovims), named by its version.
func EachNeovim(t *testing.T, fn func(t *testing.T, nvim string)) {
	t.Helper()
	for _, bin := range Neovims(t) {
		t.Run(strings.ReplaceAll(NeovimVersion(bin), " ", "-"), func(t *testing.T) { fn(t, bin) })
	}
}
