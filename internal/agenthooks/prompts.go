package agenthooks

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/atomicfile"
)

// What each agent's prompt event leaves for the writes that follow it: the prompt's
// title and, for agents that name no prompt in their tool events (Gemini CLI, Copilot
// CLI), the marker of the current prompt, which starts a new conversation. One small
// file per agent session in mcpdiff's state folder, outside every workspace (a
// prompt says nothing about which store its writes will land in).

// promptsDir is the folder of those files in the state folder.
const promptsDir = "prompts"

// stalePrompt is the age from which a session's file is swept.
const stalePrompt = 30 * 24 * time.Hour

// promptState is one agent session's last prompt.
type promptState struct {
	Turn  string `json:"turn"`
	Title string `json:"title"`
}

func promptFile(stateDir string, a *Agent, session string) string {
	h := sha256.Sum256([]byte(session))
	return filepath.Join(stateDir, promptsDir, a.Name+"-"+hex.EncodeToString(h[:12])+".json")
}

// savePrompt records a prompt of session, replacing the last one.
func savePrompt(stateDir string, a *Agent, session string, st promptState) error {
	if stateDir == "" {
		return fmt.Errorf("no state folder (set HOME or XDG_STATE_HOME)")
	}
	path := promptFile(stateDir, a, session)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(st)
	if err := atomicfile.Write(path, data, atomicfile.Options{Mode: 0o600}); err != nil {
		return err
	}
	sweepPrompts(filepath.Dir(path))
	return nil
}

// loadPrompt is session's last prompt, nil when none is known.
func loadPrompt(stateDir string, a *Agent, session string) *promptState {
	if stateDir == "" || session == "" {
		return nil
	}
	data, err := os.ReadFile(promptFile(stateDir, a, session))
	if err != nil {
		return nil
	}
	var st promptState
	if json.Unmarshal(data, &st) != nil {
		return nil
	}
	return &st
}

// sweepPrompts removes the files of sessions not heard of for long. Best effort.
func sweepPrompts(dir string) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-stalePrompt)
	for _, n := range names {
		if info, err := n.Info(); err == nil && info.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(dir, n.Name()))
		}
	}
}

// newTurn is a fresh prompt marker: the time, which also orders them.
func newTurn() string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return strconv.FormatInt(time.Now().UnixNano(), 36) + hex.EncodeToString(r[:])
}

// prompt handles a prompt event: what the next writes need to know of it.
func prompt(c *Call, o Options, a *Agent) Result {
	st := promptState{Turn: c.Turn, Title: Title(c.Prompt)}
	if !a.turnIDs {
		st.Turn = newTurn()
	}
	if c.Session == "" {
		return note("the %s event has no session id; its title is not recorded", c.Event)
	}
	if err := savePrompt(o.StateDir, a, c.Session, st); err != nil {
		return note("the prompt's title will not be recorded: %v", err)
	}
	return ok()
}

// conversation is the history conversation of a write, and its title when known.
func conversation(c *Call, o Options, a *Agent) (id, title string) {
	turn := c.Turn
	st := loadPrompt(o.StateDir, a, c.Session)
	if !a.turnIDs && st != nil {
		turn = st.Turn
	}
	if st != nil && st.Turn == turn {
		title = st.Title
	}
	if c.Title != "" {
		title = c.Title
	}
	if a == Claude {
		return ConversationID(c.Session, turn), title
	}
	if c.Session == "" && turn == "" {
		return a.Name + "_" + newTurn(), title
	}
	return conversationID(a.Name, c.Session, turn), title
}
