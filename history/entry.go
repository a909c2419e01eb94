package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Operation is the kind of filesystem change an entry records.
type Operation string

const (
	Create  Operation = "create"  // the file did not exist
	Replace Operation = "replace" // whole content rewritten (write_file)
	Edit    Operation = "edit"    // part of the content changed
	Delete  Operation = "delete"
	Move    Operation = "move" // source_path → file_path, content unchanged
)

// Status is the user's review decision on an entry.
type Status string

const (
	Pending  Status = "pending"
	Accepted Status = "accepted"
	Rejected Status = "rejected"
)

// Sources of entries.
const (
	SourceMCP      = "mcp"      // a file tool of `mcpdiff serve`
	SourceIDE      = "ide"      // a diff accepted in Neovim through Claude Code's openDiff
	SourceExternal = "external" // a change made outside mcpdiff, found before a later edit
)

// Entry is one line of logs/<conv>.log: the fields of seed 000 §4, plus seq (the
// store-wide order of all changes) and source.
type Entry struct {
	EditID         string    `json:"edit_id"`
	ConversationID string    `json:"conversation_id"`
	ToolCallIndex  int       `json:"tool_call_index"`
	Seq            int64     `json:"seq"`
	Timestamp      string    `json:"timestamp"`
	Operation      Operation `json:"operation"`
	FilePath       string    `json:"file_path"`
	SourcePath     *string   `json:"source_path"`
	ToolName       string    `json:"tool_name"`
	Status         Status    `json:"status"`
	DiffFile       *string   `json:"diff_file"`
	CheckpointFile *string   `json:"checkpoint_file"`
	HashBefore     *string   `json:"hash_before"`
	HashAfter      *string   `json:"hash_after"`
	Source         string    `json:"source"`

	raw string // the log line this entry was read from
}

// WriteJSON writes entries as one JSON array. An entry read from a log is written as
// its log line, byte for byte (extra fields included): that is its JSON already, and
// re-encoding thousands of entries would be most of the time of `status --json`.
func WriteJSON(w io.Writer, entries []*Entry) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	for i, e := range entries {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n  ")
		if e.raw != "" {
			bw.WriteString(e.raw)
			continue
		}
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		bw.Write(b)
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
}

// from is the path the change starts from: the source of a move, else the file.
func (e *Entry) from() string {
	if e.SourcePath != nil {
		return *e.SourcePath
	}
	return e.FilePath
}

// kept reports whether the entry's change stays in the files.
func (e *Entry) kept() bool { return e.Status != Rejected }

// Marker is one line of rebuilds.log: what an accept or reject wrote to a file. The
// replay needs it because edits recorded afterwards were made on top of the rebuilt
// content, not on top of the edits before them.
type Marker struct {
	Seq        int64    `json:"seq"`
	Timestamp  string   `json:"timestamp"`
	FromPath   string   `json:"from_path"` // where the file was before the rebuild
	FilePath   string   `json:"file_path"` // where it is after
	HashBefore *string  `json:"hash_before"`
	HashAfter  *string  `json:"hash_after"`
	DiffFile   *string  `json:"diff_file"`
	EditIDs    []string `json:"edit_ids"` // the edits whose status change caused it
}

// logLine is one raw line of a conversation log; Entry is nil when the line could not
// be parsed (it is kept verbatim when the log is rewritten: nothing is ever dropped).
type logLine struct {
	raw   string
	entry *Entry
}

// snapshot is everything in the store, as read from disk.
type snapshot struct {
	entries  []*Entry // all conversations, sorted by seq
	markers  []*Marker
	warnings []string // corrupted lines skipped, and where
}

// load reads every log. It needs no lock: logs are only appended with single writes
// and rewritten by rename, and a torn last line (a writer killed mid-append) is skipped.
func (s *Store) load() (*snapshot, error) {
	snap := &snapshot{}
	names, err := os.ReadDir(filepath.Join(s.dir, "logs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read edit history logs: %w", err)
	}
	for _, n := range names {
		if !strings.HasSuffix(n.Name(), ".log") {
			continue
		}
		lines, err := readLog(filepath.Join(s.dir, "logs", n.Name()))
		if err != nil {
			return nil, err
		}
		for i, l := range lines {
			if l.entry == nil {
				snap.warnings = append(snap.warnings, fmt.Sprintf("skipped a corrupted line (%d) in %s", i+1, filepath.Join("logs", n.Name())))
				continue
			}
			snap.entries = append(snap.entries, l.entry)
		}
	}
	markers, warn, err := readMarkers(filepath.Join(s.dir, "rebuilds.log"))
	if err != nil {
		return nil, err
	}
	snap.markers = markers
	snap.warnings = append(snap.warnings, warn...)
	sort.SliceStable(snap.entries, func(i, j int) bool { return snap.entries[i].Seq < snap.entries[j].Seq })
	return snap, nil
}

// readLog reads a conversation log. A final line without "\n" is a torn append and
// is ignored (it is repaired by the next append).
func readLog(path string) ([]logLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	data := string(b) // entries are decoded as slices of this one string
	var out []logLine
	for len(data) > 0 {
		i := strings.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		raw := data[:i]
		data = data[i+1:]
		if len(strings.TrimSpace(raw)) == 0 {
			continue
		}
		l := logLine{raw: raw}
		var e Entry
		if decodeEntry(raw, &e) == nil && e.EditID != "" && e.FilePath != "" {
			e.raw = raw
			l.entry = &e
		}
		out = append(out, l)
	}
	return out, nil
}

func readMarkers(path string) ([]*Marker, []string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var out []*Marker
	var warn []string
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break // a torn last line is ignored
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		var m Marker
		if json.Unmarshal(line, &m) != nil || m.FilePath == "" {
			warn = append(warn, fmt.Sprintf("skipped a corrupted line (%d) in rebuilds.log", n))
			continue
		}
		out = append(out, &m)
	}
	return out, warn, nil
}

// appendLine appends one JSON line to path in a single write, first cutting off a
// torn line a killed writer may have left. It returns the file's previous size so a
// failed commit can truncate back to it. Called with the lock held.
func appendLine(path string, v any) (prevSize int64, err error) {
	line, err := jsonLine(v)
	if err != nil {
		return 0, err
	}
	return appendRaw(path, line)
}

// appendRaw appends complete lines to path in a single write (see appendLine).
func appendRaw(path string, line []byte) (prevSize int64, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if size > 0 {
		if size, err = cutTornLine(f, size); err != nil {
			return 0, fmt.Errorf("repair %s: %w", path, err)
		}
	}
	if _, err := f.WriteAt(line, size); err != nil {
		_ = f.Truncate(size)
		return 0, fmt.Errorf("append to %s: %w", path, err)
	}
	return size, nil
}

// cutTornLine truncates f after its last "\n" and returns the new size.
func cutTornLine(f *os.File, size int64) (int64, error) {
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return size, nil
	}
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			keep := start + int64(i) + 1
			return keep, f.Truncate(keep)
		}
		end = start
	}
	return 0, f.Truncate(0)
}

// lastEntry returns the last complete entry of a conversation log, or nil.
func lastEntry(path string) (*Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	// Read the tail; entries are a few hundred bytes, so 64 KiB holds the last ones.
	start := max(size-64<<10, 0)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil {
		return nil, err
	}
	lines := bytes.Split(buf, []byte("\n"))
	for i := len(lines) - 2; i >= 0; i-- { // the element after the last "\n" is torn or empty
		var e Entry
		if json.Unmarshal(lines[i], &e) == nil && e.EditID != "" {
			return &e, nil
		}
	}
	return nil, nil
}

// rewriteLog sets new statuses in one conversation's log atomically; unparseable
// lines are kept as they are. Called with the lock held.
func (s *Store) rewriteLog(conv string, status map[string]Status) error {
	path := filepath.Join(s.dir, "logs", conv+".log")
	lines, err := readLog(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, l := range lines {
		if l.entry != nil {
			if st, ok := status[l.entry.EditID]; ok && st != l.entry.Status {
				l.entry.Status, l.entry.raw = st, ""
				raw, err := json.Marshal(l.entry)
				if err != nil {
					return err
				}
				l.raw = string(raw)
			}
		}
		buf.WriteString(l.raw)
		buf.WriteByte('\n')
	}
	return writeFileAtomic(s.dir, filepath.Join("logs", conv+".log"), buf.Bytes(), 0o600)
}

// readStoreFile reads a file of the store by its path relative to the store.
func (s *Store) readStoreFile(rel string) ([]byte, error) {
	if rel == "" || strings.Contains(rel, "..") || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("bad path %q in the edit history", rel)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("read %s from the edit history: %w", rel, err)
	}
	return b, nil
}

func strPtr(s string) *string { return &s }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func jsonLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}
