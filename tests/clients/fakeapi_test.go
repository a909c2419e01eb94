//go:build unix

package clients

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
)

// A scripted fake model API, for the agents' own edits: the model's answer to a
// prompt is a list of tool calls, step k sent once the conversation holds k tool
// results after the prompt, then "done". One server speaks the three APIs the CLIs
// use: OpenAI's Responses (Codex), Chat Completions (OpenCode, Copilot CLI) and
// Gemini's streamGenerateContent (Gemini CLI).

// fakeScriptEnv names the script file (JSON: []scriptedPrompt) when the fake API runs.
const fakeScriptEnv = "MCPDIFF_FAKE_SCRIPT"

// scriptedPrompt is the model's side of one prompt: the calls, found by a word of the
// user's prompt.
type scriptedPrompt struct {
	Prompt string       `json:"prompt"`
	Calls  []scriptCall `json:"calls"`
}

// scriptCall is one tool call: the tool's name and arguments (for Codex's freeform
// apply_patch, Input is the patch).
type scriptCall struct {
	Name  string         `json:"name"`
	Args  map[string]any `json:"args,omitempty"`
	Input string         `json:"input,omitempty"`
}

type fakeAPI struct {
	mu     sync.Mutex
	script []scriptedPrompt
	log    io.Writer
}

func serveScripted(addr, logPath, scriptPath string) error {
	data, err := os.ReadFile(scriptPath)
	if err != nil {
		return err
	}
	f := &fakeAPI{}
	if err := json.Unmarshal(data, &f.script); err != nil {
		return err
	}
	log, err := os.OpenFile(logPath+".tmp", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	f.log = log
	srv := &http.Server{Addr: addr, Handler: f}
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	if err := os.Rename(logPath+".tmp", logPath); err != nil {
		return err
	}
	return srv.Serve(ln)
}

// step finds the prompt's calls and how many of them have their results: the texts
// are the conversation's user texts in order, results the tool results after the
// last of them.
func (f *fakeAPI) step(texts []string, results int) *scriptCall {
	if len(texts) == 0 {
		return nil
	}
	last := texts[len(texts)-1]
	for _, p := range f.script {
		if strings.Contains(last, p.Prompt) {
			if results < len(p.Calls) {
				return &p.Calls[results]
			}
			return nil
		}
	}
	return nil
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	fmt.Fprintf(f.log, "%s %s %s\n", r.Method, r.URL.Path, body)
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-4.1","object":"model"},{"id":"gpt-5.5","object":"model"},{"id":"fake","object":"model"}]}`)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		f.responses(w, body)
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		f.chat(w, body)
	case strings.Contains(r.URL.Path, ":streamGenerateContent"):
		f.gemini(w, body, true)
	case strings.Contains(r.URL.Path, ":generateContent"):
		f.gemini(w, body, false)
	case strings.Contains(r.URL.Path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"totalTokens":10}`)
	default:
		http.NotFound(w, r)
	}
}

func sse(w http.ResponseWriter, event string, v any) {
	data, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
}

// responses is OpenAI's Responses API, streamed, as Codex uses it.
func (f *fakeAPI) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"input"`
	}
	_ = json.Unmarshal(body, &req)
	var texts []string
	results := 0
	for _, it := range req.Input {
		switch {
		case it.Role == "user":
			var parts []struct {
				Text string `json:"text"`
			}
			var s string
			if json.Unmarshal(it.Content, &parts) == nil {
				for _, p := range parts {
					s += p.Text
				}
			} else {
				_ = json.Unmarshal(it.Content, &s)
			}
			texts, results = append(texts, s), 0
		case strings.HasSuffix(it.Type, "_call_output"):
			results++
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1"}})
	var item map[string]any
	if c := f.step(texts, results); c != nil {
		id := fmt.Sprintf("call_%d_%d", len(texts), results)
		if c.Input != "" {
			item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "status": "completed", "call_id": id, "name": c.Name, "input": c.Input}
		} else {
			args, _ := json.Marshal(c.Args)
			item = map[string]any{"type": "function_call", "id": "fc_" + id, "status": "completed", "call_id": id, "name": c.Name, "arguments": string(args)}
		}
	} else {
		item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	}
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1", "output": []any{item},
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
}

// chat is OpenAI's Chat Completions API, streamed (or not), as OpenCode and Copilot
// CLI use it.
func (f *fakeAPI) chat(w http.ResponseWriter, body []byte) {
	var req struct {
		Stream   bool `json:"stream"`
		Tools    []any
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	var texts []string
	results := 0
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			var s string
			if json.Unmarshal(m.Content, &s) != nil {
				var parts []struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(m.Content, &parts)
				for _, p := range parts {
					s += p.Text
				}
			}
			texts, results = append(texts, s), 0
		case "tool":
			results++
		}
	}
	var c *scriptCall
	if len(req.Tools) > 0 { // side requests (titles, summaries) get text
		c = f.step(texts, results)
	}
	id := fmt.Sprintf("call_%d_%d", len(texts), results)
	var args []byte
	if c != nil {
		args, _ = json.Marshal(c.Args)
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		msg := map[string]any{"role": "assistant", "content": "done"}
		finish := "stop"
		if c != nil {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(args)}}}}
			finish = "tool_calls"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		sse(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	if c != nil {
		chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(args)}}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	} else {
		chunk(map[string]any{"role": "assistant", "content": "done"}, nil)
		chunk(map[string]any{}, "stop")
	}
	sse(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// gemini is Gemini's generateContent API, streamed as SSE or not.
func (f *fakeAPI) gemini(w http.ResponseWriter, body []byte, stream bool) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string          `json:"text"`
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []any `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	var texts []string
	results := 0
	for _, c := range req.Contents {
		if c.Role != "user" {
			continue
		}
		text, responses := "", 0
		for _, p := range c.Parts {
			text += p.Text
			if p.FunctionResponse != nil {
				responses++
			}
		}
		if responses > 0 {
			results += responses
		} else if text != "" {
			texts, results = append(texts, text), 0
		}
	}
	part := map[string]any{"text": "done"}
	if len(req.Tools) > 0 {
		if c := f.step(texts, results); c != nil {
			part = map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args}}
		}
	} else {
		part = map[string]any{"text": `{"reasoning":"done","next_speaker":"user"}`}
	}
	resp := map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
		"finishReason": "STOP", "index": 0}}, "usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", resp)
}
