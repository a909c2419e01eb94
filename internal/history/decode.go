package history

import (
	"encoding/json"
	"strings"

	"github.com/mcpdiff/mcpdiff/internal/jsonscan"
)

// decodeEntry parses one log line. `mcpdiff status` reads thousands of them, so they
// are read with jsonscan (about five times faster than encoding/json); anything it
// does not read exactly as encoding/json would goes to encoding/json, so the result is
// always encoding/json's. line is a slice of the whole log read as one string, and the
// entry's strings are slices of it too.
func decodeEntry(line string, e *Entry) error {
	if fastEntry(line, e) {
		return nil
	}
	*e = Entry{}
	return json.Unmarshal([]byte(line), e)
}

func fastEntry(line string, e *Entry) bool {
	sc := jsonscan.New(line)
	opt := new(optionalFields)
	return sc.Object(func(key string) bool { return field(sc, key, e, opt) }) && sc.End()
}

// optionalFields holds the values an entry's pointer fields point to: one allocation
// per entry instead of one per field.
type optionalFields struct {
	s [5]string
	n [2]int
}

// field reads the value of key into e.
func field(sc *jsonscan.Scanner, key string, e *Entry, opt *optionalFields) bool {
	str := func(p *string) bool { return readString(sc, p) }
	optional := func(p **string, slot *string) bool {
		if sc.Null() {
			*p = nil
			return true
		}
		v, ok := sc.String()
		*slot = v
		*p = slot
		return ok
	}
	switch key {
	case "edit_id":
		return str(&e.EditID)
	case "conversation_id":
		return str(&e.ConversationID)
	case "timestamp":
		return str(&e.Timestamp)
	case "file_path":
		return str(&e.FilePath)
	case "tool_name":
		return str(&e.ToolName)
	case "source":
		return str(&e.Source)
	case "mode":
		return str(&e.Mode)
	case "conversation_title":
		return str(&e.ConversationTitle)
	case "operation":
		return str((*string)(&e.Operation))
	case "status":
		return str((*string)(&e.Status))
	case "source_path":
		return optional(&e.SourcePath, &opt.s[0])
	case "diff_file":
		return optional(&e.DiffFile, &opt.s[1])
	case "checkpoint_file":
		return optional(&e.CheckpointFile, &opt.s[2])
	case "hash_before":
		return optional(&e.HashBefore, &opt.s[3])
	case "hash_after":
		return optional(&e.HashAfter, &opt.s[4])
	case "added":
		return count(sc, &e.Added, &opt.n[0])
	case "removed":
		return count(sc, &e.Removed, &opt.n[1])
	case "tool_call_index":
		n, ok := sc.Int()
		e.ToolCallIndex = int(n)
		return ok && int64(e.ToolCallIndex) == n
	case "seq":
		n, ok := sc.Int()
		e.Seq = n
		return ok
	}
	return skipOther(sc, key, entryKeys)
}

// readString reads a string into p; null leaves p as it is, as encoding/json does.
func readString(sc *jsonscan.Scanner, p *string) bool {
	if sc.Null() {
		return true
	}
	v, ok := sc.String()
	*p = v
	return ok
}

// skipOther skips the value of a key the reader does not know. A key that differs
// from a known one only in case is a failure: encoding/json would read it.
func skipOther(sc *jsonscan.Scanner, key string, known []string) bool {
	for _, k := range known {
		if strings.EqualFold(key, k) {
			return false
		}
	}
	_, ok := sc.Skip()
	return ok
}

// count reads a line count (null leaves it absent, as encoding/json does).
func count(sc *jsonscan.Scanner, p **int, slot *int) bool {
	if sc.Null() {
		*p = nil
		return true
	}
	n, ok := sc.Int()
	*slot = int(n)
	*p = slot
	return ok && int64(*slot) == n
}

var entryKeys = []string{"edit_id", "conversation_id", "tool_call_index", "seq", "timestamp", "operation",
	"file_path", "source_path", "tool_name", "status", "diff_file", "checkpoint_file", "hash_before", "hash_after", "source", "mode", "added", "removed",
	"conversation_title", "hunk_status"} // read by encoding/json (rare: only edits decided in part)

// decodeHead parses one heads.log line. A hook process reads every line of the log
// (a thousand edits: a thousand lines, 1.3 ms with encoding/json), so it is read
// like decodeEntry: with jsonscan, and encoding/json for whatever jsonscan does not
// read exactly as encoding/json would.
func decodeHead(line string, hd *head) error {
	sc := jsonscan.New(line)
	if sc.Object(func(key string) bool { return headField(sc, key, hd) }) && sc.End() {
		return nil
	}
	*hd = head{}
	return json.Unmarshal([]byte(line), hd)
}

func headField(sc *jsonscan.Scanner, key string, hd *head) bool {
	integer := func(p *int64) bool {
		if sc.Null() {
			return true
		}
		n, ok := sc.Int()
		*p = n
		return ok
	}
	boolean := func(p *bool) bool {
		if sc.Null() {
			return true
		}
		v, ok := sc.Bool()
		*p = v
		return ok
	}
	switch key {
	case "path":
		return readString(sc, &hd.Path)
	case "hash":
		return readString(sc, &hd.Hash)
	case "seq":
		return integer(&hd.Seq)
	case "size":
		return integer(&hd.Size)
	case "mtime":
		return integer(&hd.Mtime)
	case "ino":
		if sc.Null() {
			return true
		}
		n, ok := sc.Uint()
		hd.Ino = n
		return ok
	case "exists":
		return boolean(&hd.Exists)
	case "forget":
		return boolean(&hd.Forget)
	}
	return skipOther(sc, key, headKeys)
}

var headKeys = []string{"path", "seq", "exists", "hash", "forget", "ino", "size", "mtime"}
