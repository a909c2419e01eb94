//go:build unix

package claude

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// call is one tool call the scripted model makes.
type call struct {
	tool  string
	input map[string]any
}

// scriptAPI is a fake Messages API that answers each prompt with a fixed sequence of
// tool calls, one per request, then "done". The prompt is recognised by its text;
// the step by how many of that prompt's tool results the conversation holds (tool
// ids name the prompt and the step: toolu_fake_p<prompt>_<step>).
type scriptAPI struct {
	srv      *httptest.Server
	prompts  []string
	calls    [][]call
	mu       sync.Mutex
	requests []string
	done     map[int]bool // prompts answered with "done"
}

func newScriptAPI(t *testing.T) *scriptAPI {
	a := &scriptAPI{done: map[int]bool{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// script sets the tool calls made in answer to prompt.
func (a *scriptAPI) script(prompt string, calls ...call) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.prompts = append(a.prompts, prompt)
	a.calls = append(a.calls, calls)
}

func (a *scriptAPI) URL() string { return a.srv.URL }

// finished reports whether the model said "done" to prompt.
func (a *scriptAPI) finished(prompt string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, p := range a.prompts {
		if p == prompt {
			return a.done[i]
		}
	}
	return false
}

// received reports whether a request held text.
func (a *scriptAPI) received(text string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.requests {
		if strings.Contains(r, text) {
			return true
		}
	}
	return false
}

func toolID(prompt, step int) string { return fmt.Sprintf("toolu_fake_p%d_%d", prompt, step) }

func (a *scriptAPI) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		w.Write([]byte(`{"input_tokens":100}`))
		return
	}
	raw, _ := io.ReadAll(r.Body)
	body := string(raw)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, body)
	// The newest prompt is the one whose text occurs last.
	prompt, at := -1, -1
	for i, p := range a.prompts {
		if j := strings.LastIndex(body, p); j > at {
			prompt, at = i, j
		}
	}
	if prompt < 0 {
		streamAnswer(w, []map[string]any{{"type": "text", "text": "no script for this prompt"}}, "end_turn")
		return
	}
	step := 0
	for step < len(a.calls[prompt]) && strings.Contains(body, `"tool_use_id":"`+toolID(prompt, step)+`"`) {
		step++
	}
	if step == len(a.calls[prompt]) {
		a.done[prompt] = true
		streamAnswer(w, []map[string]any{{"type": "text", "text": "done"}}, "end_turn")
		return
	}
	c := a.calls[prompt][step]
	streamAnswer(w, []map[string]any{
		{"type": "text", "text": fmt.Sprintf("Step %d.", step+1)},
		{"type": "tool_use", "id": toolID(prompt, step), "name": c.tool, "input": c.input},
	}, "tool_use")
}
