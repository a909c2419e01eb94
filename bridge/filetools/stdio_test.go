package filetools

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A big text reaches the client exactly, escaped by the writer, whatever its bytes;
// a placeholder that is not pending (a file may hold the letters) stays as it is.
func TestBigTextWriterSwapsPlaceholders(t *testing.T) {
	texts := &bigTexts{pending: map[string][]byte{}}
	big := strings.Repeat("tab\there \"quoted\" back\\slash <html> é \x01 \xff\n", 2000)
	key := texts.add(big)
	notOurs := placeholderPrefix + "0123456789abcdef"
	msg, err := json.Marshal(map[string]any{"result": map[string]any{"content": []any{
		map[string]any{"type": "text", "text": key}, map[string]any{"type": "text", "text": notOurs}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := &bigTextWriter{out: &out, texts: texts}
	if n, err := w.Write(append(msg, '\n')); err != nil || n != len(msg)+1 {
		t.Fatalf("Write: %d, %v", n, err)
	}
	var got struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("the message is not JSON any more: %v", err)
	}
	want := strings.ToValidUTF8(big, "\uFFFD")
	if len(got.Result.Content) != 2 || got.Result.Content[0].Text != want || got.Result.Content[1].Text != notOurs {
		t.Fatal("the texts did not come through exactly")
	}
	if !texts.empty() {
		t.Fatal("the text was kept after it was written")
	}
}

// Texts of responses that are never written (cancelled calls) do not pile up.
func TestBigTextsAreBounded(t *testing.T) {
	texts := &bigTexts{pending: map[string][]byte{}}
	for range maxPendingTexts * 3 {
		texts.add("x")
	}
	if len(texts.pending) != maxPendingTexts || len(texts.order) != maxPendingTexts {
		t.Fatalf("%d texts pending, want at most %d", len(texts.pending), maxPendingTexts)
	}
}

// pausedWriter blocks its first Write until released, to catch a message in the
// middle of being written.
type pausedWriter struct {
	bytes.Buffer
	first         bool
	inside, leave chan struct{}
}

func (p *pausedWriter) Write(b []byte) (int, error) {
	if !p.first {
		p.first = true
		close(p.inside)
		<-p.leave
	}
	return p.Buffer.Write(b)
}

// A message written in pieces holds the writer from its first piece to its last, so
// another Write (mcp-go sends its own requests without its lock) cannot land inside.
func TestBigTextWriterHoldsTheMessageWhole(t *testing.T) {
	texts := &bigTexts{pending: map[string][]byte{}}
	key := texts.add(strings.Repeat("x", bigTextFrom))
	out := &pausedWriter{inside: make(chan struct{}), leave: make(chan struct{})}
	w := &bigTextWriter{out: out, texts: texts}
	done := make(chan error)
	go func() {
		_, err := w.Write([]byte(`{"text":"` + key + `"}` + "\n"))
		done <- err
	}()
	<-out.inside
	if w.mu.TryLock() {
		t.Fatal("between the pieces of a message, another Write could go out")
	}
	close(out.leave)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != `{"text":"`+strings.Repeat("x", bigTextFrom)+`"}`+"\n" {
		t.Fatalf("wrote %.80q…", got)
	}
}
