//go:build unix

package serve

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// headlessNeovim is a Neovim editing a.txt ("one\ntwo\n") in a fresh folder.
type headlessNeovim struct {
	*testenv.ListeningNeovim
	dir, file string
}

func startNeovim(t *testing.T, bin string) *headlessNeovim {
	t.Helper()
	dir := testenv.TempDir(t)
	file := filepath.Join(dir, "a.txt")
	testenv.WriteFile(t, file, "one\ntwo\n")
	return &headlessNeovim{ListeningNeovim: testenv.ListenNeovim(t, bin, dir, nil, file), dir: dir, file: file}
}

// serve starts mcpdiff serve on the folder, told about this Neovim through $NVIM.
func (n *headlessNeovim) serve(t *testing.T) *session {
	return startWith(t, n.dir, testenv.MCPServer{Args: []string{"--root", n.dir}, Env: []string{"NVIM=" + n.Sock}})
}

// With Neovim reachable ($NVIM / --nvim), a file with unsaved changes in it is never
// overwritten, and clean buffers of changed files are reloaded.
func TestServeRespectsNeovimBuffers(t *testing.T) {
	t.Parallel()
	testenv.EachNeovim(t, func(t *testing.T, bin string) {
		n := startNeovim(t, bin)
		v, s := n.Nvim, n.serve(t)
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

// A buffer check that gets no answer refuses the write (the buffer may hold unsaved
// work); once Neovim has exited, the tools go on without checks.
func TestServeRefusesWhenNeovimCannotBeAsked(t *testing.T) {
	t.Parallel()
	testenv.EachNeovim(t, func(t *testing.T, bin string) {
		n := startNeovim(t, bin)
		s, cmd, file := n.serve(t), n.Cmd, n.file
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

func joinLines(lines [][]byte) []byte {
	var out []byte
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}
