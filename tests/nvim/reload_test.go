//go:build unix

package nvimtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// The reload rule (lua/mcpdiff/buffers.lua): a buffer without unsaved changes is
// re-read when its file no longer has the stamp the buffer read or wrote it with,
// whatever asked; a buffer with unsaved changes never is.

// countReads has Neovim count, from now on, each read of a file into a buffer.
func (s *session) countReads() {
	s.t.Helper()
	s.lua(`
_G.test_reads = {}
vim.api.nvim_create_autocmd("BufReadPost", { callback = function(args)
  local name = vim.api.nvim_buf_get_name(args.buf)
  _G.test_reads[name] = (_G.test_reads[name] or 0) + 1
end })`, nil)
}

// reads is how often the buffer of path read its file since countReads.
func (s *session) reads(path string) int {
	s.t.Helper()
	return luaValue[int](s, `return _G.test_reads[...] or 0`, path)
}

// reloadNow applies the rule to path's buffers and returns how many were re-read.
func (s *session) reloadNow(path string) int {
	s.t.Helper()
	return luaValue[int](s, `return require("mcpdiff.buffers").reload({ ... })`, path)
}

// expectUnsaved fails unless the buffer of path still holds lines, unsaved.
func (s *session) expectUnsaved(path string, lines ...string) {
	s.t.Helper()
	got := s.bufferLines(path)
	modified := luaValue[bool](s, `return vim.bo[vim.fn.bufnr(...)].modified`, path)
	if strings.Join(got, "\n") != strings.Join(lines, "\n") || !modified {
		s.t.Fatalf("the buffer with unsaved changes holds %q (modified %v), want %q unsaved", got, modified, lines)
	}
}

// writeAtomically replaces path's content as the file tools and most editors do:
// a new file renamed over it.
func writeAtomically(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	testenv.WriteFile(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestReloadRule(t *testing.T) {
	t.Parallel()
	eachStarted(t, options{"auto_start": false}, func(t *testing.T, s *session) {
		path := s.writeFile("a.txt", "one\ntwo\n")
		s.countReads()
		s.cmd("edit " + path)
		if n := s.reloadNow(path); n != 0 {
			t.Fatalf("a file unchanged since its buffer read it was read again (%d)", n)
		}

		// Rewritten in place with the same size and modification time.
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		testenv.WriteFile(t, path, "ONE\nTWO\n")
		if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
		if n := s.reloadNow(path); n != 1 || strings.Join(s.bufferLines(path), "\n") != "ONE\nTWO" {
			t.Fatalf("after a rewrite: %d reloaded, the buffer holds %q", n, s.bufferLines(path))
		}
		if n := s.reloadNow(path); n != 0 {
			t.Fatal("read again though nothing changed since the reload")
		}

		// The user's own save is what the buffer holds.
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "uno" })`, nil)
		s.cmd("write")
		if n := s.reloadNow(path); n != 0 {
			t.Fatal("read again after the user's own save")
		}

		// A file that went away leaves its buffer alone.
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if n := s.reloadNow(path); n != 0 || strings.Join(s.bufferLines(path), "\n") != "uno\nTWO" {
			t.Fatalf("after the file was removed: %d reloaded, the buffer holds %q", n, s.bufferLines(path))
		}

		// A buffer with unsaved changes is never read again.
		writeAtomically(t, path, "theirs\n")
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine" })`, nil)
		if n := s.reloadNow(path); n != 0 {
			t.Fatal("a buffer with unsaved changes was read again")
		}
		s.expectUnsaved(path, "mine", "TWO")
		if got := s.reads(path); got != 2 {
			t.Fatalf("the buffer read its file %d times, want 2 (the :edit and one reload)", got)
		}
	})
}

// Every trigger goes through the rule: an agent's change to a recorded file (the
// store's watch), a decision in Neovim, a decision from the shell, a file tool of
// `mcpdiff serve`, and an accepted diff written by the client. Each change is read
// once, however many of them report it; the buffer with unsaved changes is never
// touched.
func TestEveryReloadTriggerFollowsTheRule(t *testing.T) {
	t.Parallel()
	eachConnected(t, nil, func(t *testing.T, s *session, c *ideClient) {
		a0, a1, a2, a3 := "a one\na two\n", "a ONE\na two\n", "a ONE\na TWO\n", "a 1\na 2\n"
		a := s.writeFile("a.txt", a0)
		b := s.writeFile("b.txt", "b one\n")
		s.cmd("edit " + b)
		s.lua(`vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine" })`, nil)
		s.cmd("hide edit " + a)
		s.countReads()

		// The store's watch: b changed under its unsaved buffer, then a.
		s.recordEdit("conv_1_aa", b, "b one\n", "b ONE\n")
		id := s.recordEdit("conv_2_aa", a, a0, a1)
		s.waitBuffer(a, a1)
		s.waitHunks(a, "change 1-1", "1:McpDiffChange")
		s.expectUnsaved(b, "mine")

		// A decision in Neovim.
		s.cmd("McpDiffReject " + id)
		s.waitBuffer(a, a0)

		// A decision from the shell, which asks the Neovim of its terminal.
		cmd := s.command("accept", id)
		cmd.Env = append(cmd.Env, "NVIM="+s.serverName())
		if out, stderr, code := testenv.Run(t, cmd); code != 0 {
			t.Fatalf("accept: exit %d, %s %s", code, out, stderr)
		}
		s.waitBuffer(a, a1)

		// A file tool of `mcpdiff serve` told of this Neovim; it refuses b.
		mcp := testenv.StartMCP(t, testenv.MCPServer{Args: []string{"serve", "--root", s.ws}, Dir: s.ws,
			Env: append(testenv.HomeVars(s.home), "NVIM="+s.serverName())})
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(time.Minute))
		defer cancel()
		if res, err := mcp.Call(ctx, "edit_file", map[string]any{"path": a, "old_string": "a two", "new_string": "a TWO"}); err != nil || res.IsError {
			t.Fatalf("edit_file a.txt: %v %+v", err, res)
		}
		s.waitBuffer(a, a2)
		if res, err := mcp.Call(ctx, "edit_file", map[string]any{"path": b, "old_string": "b ONE", "new_string": "b 1"}); err != nil || !res.IsError {
			t.Fatalf("edit_file b.txt with unsaved changes in Neovim: %v %+v", err, res)
		}
		s.expectUnsaved(b, "mine")

		// An accepted diff, written by the client once answered.
		s.acceptWithWrite(c, a, a3, tabName("a.txt", 1))
		s.waitBuffer(a, a3)
		eventually(t, "the accepted diff in the history", func() bool {
			entries := s.historyEntries()
			return entries[len(entries)-1].Status == "accepted" && entries[len(entries)-1].FilePath == a
		})

		if got := s.reads(a); got != 5 {
			t.Fatalf("a.txt was read %d times for its 5 changes", got)
		}
		s.expectUnsaved(b, "mine")
	})
}
