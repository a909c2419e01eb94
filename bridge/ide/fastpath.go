package ide

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/coder/websocket"

	"github.com/mcpdiff/mcpdiff/internal/jsonscan"
)

// openDiff messages carry whole files (megabytes), and mcp-go parses each message
// several times with encoding/json and encodes the answer twice: that was most of the
// time between Claude Code sending a proposal and Neovim showing it. So the transport
// reads every message once with jsonscan, and serves openDiff itself, and close_tab,
// which Claude Code sends twice after every diff (through mcp-go, each ran code that
// the bridge then kept mapped); everything else still goes to mcp-go.

// envelope is what the transport routes a message by.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`      // the tool of a tools/call
		RequestID json.RawMessage `json:"requestId"` // of notifications/cancelled
	} `json:"params"`

	diff         *DiffRequest // the arguments of an openDiff, read in the same pass
	diffErr      *ToolError   // why they are not usable
	contentsJSON string       // new_file_contents as the client wrote it, quotes included
	closeTab     *string      // the tab_name of a close_tab (mcp-go answers one without)
}

func (e envelope) hasID() bool { return len(e.ID) > 0 && string(e.ID) != "null" }

// readEnvelope reads a message's envelope (and an openDiff's arguments) in one pass,
// falling back to encoding/json for anything jsonscan does not read.
func readEnvelope(data []byte) (envelope, bool) {
	var env envelope
	var args map[string]string
	// data is never changed once read: the scanner reads it in place, and the strings
	// it returns (the proposal among them) are slices of it, not of a copy.
	sc := jsonscan.New(unsafe.String(unsafe.SliceData(data), len(data)))
	ok := sc.Object(func(key string) bool {
		switch key {
		case "id":
			raw, ok := sc.Skip()
			env.ID = json.RawMessage(raw)
			return ok
		case "method":
			s, ok := sc.String()
			env.Method = s
			return ok
		case "params":
			return sc.Object(func(key string) bool {
				switch key {
				case "name":
					s, ok := sc.String()
					env.Params.Name = s
					return ok
				case "requestId":
					raw, ok := sc.Skip()
					env.Params.RequestID = json.RawMessage(raw)
					return ok
				case "arguments":
					args = map[string]string{}
					return sc.Object(func(key string) bool {
						if sc.Null() {
							return true
						}
						s, raw, ok := sc.StringRaw()
						args[key] = s
						if key == "new_file_contents" {
							env.contentsJSON = raw
						}
						return ok
					})
				}
				_, ok := sc.Skip()
				return ok
			})
		}
		_, ok := sc.Skip()
		return ok
	}) && sc.End()
	if !ok {
		env = envelope{}
		return env, json.Unmarshal(data, &env) == nil
	}
	if tab, ok := args["tab_name"]; ok && env.Method == "tools/call" && env.Params.Name == "close_tab" {
		tab = strings.Clone(tab) // not a slice of the frame, which the tab may outlive
		env.closeTab = &tab
	}
	if env.Method == "tools/call" && env.Params.Name == "openDiff" && args != nil {
		req, err := diffRequestFrom(func(name string) (string, error) {
			if v, ok := args[name]; ok {
				return v, nil
			}
			return "", &ToolError{Code: codeInvalidParams, Message: "Invalid params", Data: "Missing required parameter: " + name}
		})
		if err != nil {
			env.diffErr = asToolError(err, "Invalid params")
		} else {
			env.diff = &req
		}
	}
	return env, true
}

// serveOpenDiff answers an openDiff read by readEnvelope, without mcp-go.
func (c *client) serveOpenDiff(env envelope) {
	if env.diffErr != nil {
		c.write(errorResponse(env.ID, env.diffErr))
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	key := string(env.ID)
	c.mu.Lock()
	if c.inflight == nil {
		c.inflight = map[string]context.CancelFunc{}
	}
	c.inflight[key] = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
	}()

	accepted, text, err := c.server.openDiff(ctx, c, *env.diff)
	if err != nil {
		c.write(errorResponse(env.ID, asToolError(err, "Diff setup failed")))
		return
	}
	if !accepted {
		c.writeTextResult(env.ID, []string{"DIFF_REJECTED", env.diff.TabName}, "")
		return
	}
	lastJSON := ""
	if text == env.diff.Contents {
		// Accepted as proposed: the text is the very string the client sent, so its
		// JSON goes back as it came, with nothing to escape.
		lastJSON = env.contentsJSON
	}
	c.writeTextResult(env.ID, []string{"FILE_SAVED", text}, lastJSON)
}

// serveCloseTab answers a close_tab read by readEnvelope, without mcp-go.
func (c *client) serveCloseTab(env envelope) {
	c.server.closeTabNamed(*env.closeTab)
	c.writeTextResult(env.ID, []string{"TAB_CLOSED"}, "")
}

// writeTextResult sends a tools/call result of text items, as mcp-go would, as one
// message written in pieces (WebSocket frames of one message): a whole file's text
// is never copied into a buffer of its size. The last text goes out as lastJSON when
// that is its JSON string (quotes included); the others are escaped a piece at a
// time. A failed write closes the connection, whose message it cut short.
func (c *client) writeTextResult(id json.RawMessage, texts []string, lastJSON string) {
	size := 64 + len(id) + len(lastJSON)
	for _, t := range texts {
		size += 32 + len(t)
	}
	err := c.writePieces(min(size, answerPiece), func(out *bufio.Writer) {
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(id)
		out.WriteString(`,"result":{"content":[`)
		for i, t := range texts {
			if i > 0 {
				out.WriteByte(',')
			}
			out.WriteString(`{"type":"text","text":`)
			if i == len(texts)-1 && lastJSON != "" {
				out.WriteString(lastJSON)
			} else {
				writeJSONString(out, t)
			}
			out.WriteByte('}')
		}
		out.WriteString(`]}}`)
	})
	if err != nil && c.ctx.Err() == nil {
		c.server.logf("ide: client %s: write: %v", c.id, err)
		c.conn.CloseNow()
	}
}

// writePieces writes one text message through a buffer of the given size.
func (c *client) writePieces(size int, write func(*bufio.Writer)) error {
	w, err := c.conn.Writer(c.ctx, websocket.MessageText)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(w, size)
	write(out)
	if err := out.Flush(); err != nil { // the first error of any write
		return err
	}
	return w.Close()
}

// answerPiece is the size of the pieces an answer is written in.
const answerPiece = 32 << 10

// writeJSONString writes s as a JSON string, escaped a piece at a time. A piece ends
// where a character starts, so that each is escaped as the whole string would be.
func writeJSONString(out *bufio.Writer, s string) {
	out.WriteByte('"')
	piece := make([]byte, 0, min(len(s), answerPiece)+64)
	for s != "" {
		n := min(len(s), answerPiece)
		for back := 0; back < utf8.UTFMax-1 && n < len(s) && !utf8.RuneStart(s[n]); back++ {
			n--
		}
		piece = jsonscan.AppendEscaped(piece[:0], s[:n])
		out.Write(piece)
		s = s[n:]
	}
	out.WriteByte('"')
}

// cancelRequest ends an openDiff served here when the client cancels it.
func (c *client) cancelRequest(id json.RawMessage) {
	c.mu.Lock()
	cancel := c.inflight[strings.TrimSpace(string(id))]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
