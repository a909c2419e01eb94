//go:build unix

package claude

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	nvimrpc "github.com/neovim/go-client/nvim"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// TestRealClaudeCodeWithTwoNeovims: two Neovims running mcpdiff in one project.
// Claude Code's /ide lists them as two entries a user tells apart (the file each has
// open, and its pid), and either can be picked there; `claude --ide` started in
// another terminal connects to the one started or focused last, never to none; and a
// claude started with a Neovim's port (as :McpDiffClaude starts it) connects to that
// Neovim whichever holds the project.
func TestRealClaudeCodeWithTwoNeovims(t *testing.T) {
	t.Parallel()
	requireTools(t)
	for _, bin := range testenv.Neovims(t) {
		t.Run(nvimVersion(bin), func(t *testing.T) {
			w := newWorld(t)
			main := w.write("main.go", "package main\n")
			api := newScriptAPI(t)
			a, portA := w.startNeovim(bin)
			if err := a.Command("edit " + main); err != nil {
				t.Fatal(err)
			}
			b, portB := w.startNeovim(bin)
			pidA, pidB := neovimPID(t, a), neovimPID(t, b)
			nameA, nameB := fmt.Sprintf("Neovim (main.go, pid %d)", pidA), fmt.Sprintf("Neovim (pid %d)", pidB)
			eventually(t, "the two lock files to share the project", func() bool {
				return strings.Contains(w.lockText(portA), nameA) && strings.Contains(w.lockText(portB), nameB)
			}, func() string { return w.lockText(portA) + "\n" + w.lockText(portB) })

			// In another terminal, --ide: the Neovim started last.
			tm := w.startClaude(api.URL(), 0, "--ide")
			eventually(t, "claude --ide to connect to the Neovim started last", func() bool {
				return readyClients(b) == 1
			}, func() string { return tm.screen() + neovimState(b) })
			eventually(t, "Claude Code's prompt", func() bool { return promptReady(tm.screen()) }, tm.screen)
			tm.typeLine("/ide")
			eventually(t, "/ide to list both Neovims, the connected one checked", func() bool {
				s := tm.screen()
				return strings.Contains(s, "Connect to an IDE") && strings.Contains(s, "✔ "+nameB) && strings.Contains(s, nameA)
			}, tm.screen)
			if n := readyClients(a); n != 0 {
				t.Fatalf("the other Neovim has %d clients too", n)
			}
			// Picked in /ide, the other one connects.
			pressUntil(t, func() { tm.send("Down") }, "Down to the other Neovim", func() bool {
				return strings.Contains(selectedLine(tm.screen()), nameA)
			}, tm.screen)
			tm.press("Enter", "the other Neovim picked", func() bool { return readyClients(a) == 1 })
			eventually(t, "claude to leave the first Neovim", func() bool { return readyClients(b) == 0 }, tm.screen)

			// The user goes back to the first Neovim: the next claude --ide finds it.
			if err := a.Command("doautocmd FocusGained"); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the focused Neovim to hold the project", func() bool {
				return strings.Contains(w.lockText(portA), `"workspaceFolders":["`+w.ws+`"]`)
			}, func() string { return w.lockText(portA) })
			w.startClaude(api.URL(), 0, "--ide")
			eventually(t, "claude --ide to connect to the Neovim focused last", func() bool {
				return readyClients(a) == 2
			}, func() string { return neovimState(a) })

			// Started with B's port, as B's :McpDiffClaude does: B, though A holds it.
			w.startClaude(api.URL(), portB)
			eventually(t, "claude with CLAUDE_CODE_SSE_PORT to connect to its Neovim", func() bool {
				return readyClients(b) == 1
			}, func() string { return neovimState(b) })
			if n := readyClients(a); n != 2 {
				t.Fatalf("the focused Neovim has %d clients, want 2", n)
			}
		})
	}
}

// selectedLine is the line of a Claude Code list that its cursor (❯) is on.
func selectedLine(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "❯") {
			return l
		}
	}
	return ""
}

// lockText is the lock file of the bridge on port.
func (w *world) lockText(port int) string {
	b, _ := os.ReadFile(filepath.Join(w.config, "ide", fmt.Sprintf("%d.lock", port)))
	return string(b)
}

// readyClients counts the Claude Code clients of a Neovim's bridge whose MCP
// handshake is done.
func readyClients(v *nvimrpc.Nvim) int {
	var n int
	v.ExecLua(`
local st = require("mcpdiff.bridge").status()
local n = 0
for _, c in ipairs(st and st.clients or {}) do
  if c.ready and (c.claudePid or 0) > 0 then n = n + 1 end
end
return n`, &n)
	return n
}

func neovimPID(t *testing.T, v *nvimrpc.Nvim) int {
	t.Helper()
	var pid int
	if err := v.Call("getpid", &pid); err != nil {
		t.Fatal(err)
	}
	return pid
}
