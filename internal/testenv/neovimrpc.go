package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	nvimrpc "github.com/neovim/go-client/nvim"
)

// EmbedNeovim starts bin as `nvim --embed --headless -i NONE -n` plus args (its
// user's config unless they say `-u NONE`), in dir, with env (nil: the test's), and
// returns a client of its RPC. The caller closes it, which quits Neovim.
func EmbedNeovim(tb testing.TB, bin, dir string, env []string, args ...string) *nvimrpc.Nvim {
	tb.Helper()
	v, err := nvimrpc.NewChildProcess(
		nvimrpc.ChildProcessCommand(bin),
		nvimrpc.ChildProcessArgs(append([]string{"--embed", "--headless", "-i", "NONE", "-n"}, args...)...),
		nvimrpc.ChildProcessEnv(env),
		nvimrpc.ChildProcessDir(dir),
		nvimrpc.ChildProcessLogf(func(string, ...any) {}),
	)
	if err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	return v
}

// ListeningNeovim is a headless Neovim without a config that listens on a socket,
// as a user's Neovim does for the programs started in its terminal ($NVIM).
type ListeningNeovim struct {
	*nvimrpc.Nvim           // a client of its RPC
	Sock          string    // the socket it listens on
	Cmd           *exec.Cmd // the Neovim process
}

// ListenNeovim starts bin as `nvim --headless -u NONE -i NONE -n --listen SOCK` plus
// args, in dir, with env (nil: the test's), and connects to it. Neovim is killed
// when the test ends.
func ListenNeovim(tb testing.TB, bin, dir string, env []string, args ...string) *ListeningNeovim {
	tb.Helper()
	n := &ListeningNeovim{Sock: filepath.Join(tb.TempDir(), "nvim.sock")}
	n.Cmd = exec.Command(bin, append([]string{"--headless", "-u", "NONE", "-i", "NONE", "-n", "--listen", n.Sock}, args...)...)
	n.Cmd.Dir, n.Cmd.Env = dir, env
	if err := n.Cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	tb.Cleanup(func() { n.Cmd.Process.Kill(); n.Cmd.Wait() })
	EventuallyWithin(tb, WaitLimit, "Neovim to listen on "+n.Sock, func() bool {
		var err error
		n.Nvim, err = nvimrpc.Dial(n.Sock, nvimrpc.DialLogf(func(string, ...any) {}))
		return err == nil
	})
	tb.Cleanup(func() { n.Close() })
	return n
}

// WaitBridge waits, up to limit, until the plugin in v runs its bridge and the bridge
// has written its lock file in configDir/ide (configDir is $CLAUDE_CONFIG_DIR), and
// returns the bridge's port.
func WaitBridge(tb testing.TB, v *nvimrpc.Nvim, configDir string, limit time.Duration) int {
	tb.Helper()
	var port int
	EventuallyWithin(tb, limit, "the bridge to start and write its lock file", func() bool {
		_ = v.ExecLua(`local b = package.loaded["mcpdiff.bridge"]; local i = b and b.info(); return i and i.port or 0`, &port)
		if port == 0 {
			return false
		}
		_, err := os.Stat(filepath.Join(configDir, "ide", strconv.Itoa(port)+".lock"))
		return err == nil
	})
	return port
}

// QuitNeovim closes v, which quits Neovim, and waits for the plugin's bridge, when
// it started one, to end with it: a bridge still running after WaitLimit fails the
// test and is killed.
func QuitNeovim(tb testing.TB, v *nvimrpc.Nvim) {
	tb.Helper()
	var jobPID int
	_ = v.ExecLua(`local b = package.loaded["mcpdiff.bridge"]; return b and b.job_pid() or 0`, &jobPID)
	_ = v.Close()
	if !Within(WaitLimit, func() bool { return !ProcessAlive(jobPID) }) {
		tb.Errorf("the bridge (pid %d) still runs after Neovim quit", jobPID)
		KillProcess(jobPID)
	}
}
