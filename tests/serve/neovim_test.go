package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
	nvimrpc "github.com/neovim/go-client/nvim"
)

// headlessNeovim is a Neovim editing a.txt ("one\ntwo\n") in a fresh folder.
type headlessNeovim struct {
	dir, file, sock string
	cmd             *exec.Cmd
	v               *nvimrpc.Nvim
}

func startNeovim(t *testing.T, bin string) *headlessNeovim {
	t.Helper()
	n := &headlessNeovim{dir: testenv.TempDir(t), sock: filepath.Join(t.TempDir(), "nvim.sock")}
	n.file = filepath.Join(n.dir, "a.txt")
	os.WriteFile(n.file, []byte("one\ntwo\n"), 0o644)
	n.cmd = exec.Command(bin, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--listen", n.sock, n.file)
	n.cmd.Dir = n.dir
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.cmd.Process.Kill(); n.cmd.Wait() })
	n.v = dialWithin(t, n.sock, 10*time.Second)
	t.Cleanup(func() { n.v.Close() })
	return n
}

// serve starts mcpdiff serve on the folder, told about this Neovim through $NVIM.
func (n *headlessNeovim) serve(t *testing.T) *session {
	return startWith(t, n.dir, testenv.MCPServer{Args: []string{"--root", n.dir}, Env: []string{"NVIM=" + n.sock}})
}

// With Neovim reachable ($NVIM / --nvim), a file with unsaved changes in it is never
// overwritten, and clean buffers of changed files are reloaded.
func TestServeRespectsNeovimBuffers(t *testing.T) {
	for _, bin := range testenv.Neovims(t) {
		t.Run(nvimVersion(t, bin), func(t *testing.T) {
			n := startNeovim(t, bin)
			v, s := n.v, n.serve(t)
			buf, _ := v.CurrentBuffer()
			if err := v.SetBufferLines(buf, 0, 1, true, [][]byte{[]byte("ONE (unsaved)")}); err != nil {
				t.Fatal(err)
			}
			s.fails("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"}, "unsaved changes")
			s.expect("a.txt", "one\ntwo\n")

			if err := v.Command("edit!"); err != nil { // the user discards their change
				t.Fatal(err)
			}
			s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})
			s.expect("a.txt", "one\nTWO\n")
			lines, err := v.BufferLines(buf, 0, -1, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(joinLines(lines)); got != "one\nTWO\n" {
				t.Fatalf("buffer not reloaded: %q", got)
			}
		})
	}
}

// A buffer check that gets no answer refuses the write (the buffer may hold unsaved
// work); once Neovim has exited, the tools go on without checks.
func TestServeRefusesWhenNeovimCannotBeAsked(t *testing.T) {
	for _, bin := range testenv.Neovims(t) {
		t.Run(nvimVersion(t, bin), func(t *testing.T) {
			n := startNeovim(t, bin)
			s, cmd, file := n.serve(t), n.cmd, n.file
			s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "ONE"})

			// A stopped Neovim cannot answer (as one stuck in a prompt).
			if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			s.fails("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"},
				"could not ask Neovim whether "+file+" has unsaved changes", "retry")
			s.expect("a.txt", "ONE\ntwo\n")
			if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}

			cmd.Process.Kill()
			cmd.Wait()
			s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})
			s.ok("edit_file", map[string]any{"path": "a.txt", "old_string": "ONE", "new_string": "one"})
			s.expect("a.txt", "one\nTWO\n")
			if !strings.Contains(s.stderr.String(), "no more checks for unsaved changes") {
				t.Errorf("stderr does not say the checks stopped:\n%s", s.stderr.String())
			}
		})
	}
}

// nvimVersion is "v0.7.2" for a Neovim binary.
func nvimVersion(t *testing.T, bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	return strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "NVIM ")
}

func dialWithin(t *testing.T, sock string, d time.Duration) *nvimrpc.Nvim {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		v, err := nvimrpc.Dial(sock, nvimrpc.DialLogf(func(string, ...any) {}))
		if err == nil {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("Neovim never listened on %s: %v", sock, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for the socket to appear, bounded by the deadline
	}
}

func joinLines(lines [][]byte) []byte {
	var out []byte
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}
