package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
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
	SourceMCP      = "mcp"         // a file tool of `mcpdiff serve`
	SourceIDE      = "ide"         // a diff accepted in Neovim through Claude Code's openDiff
	SourceExternal = "external"    // a change made outside mcpdiff, found before a later edit
	SourceUser     = "user"        // the user's save in a Neovim running mcpdiff
	SourceClaude   = "claude-code" // Claude Code's own Edit/Write tools, seen by its hooks
	// Other agents' own file tools, seen by their hooks or plugins.
	SourceCodex    = "codex"
	SourceGemini   = "gemini-cli"
	SourceOpenCode = "opencode"
	SourceCopilot  = "copilot-cli"
	SourceCursor   = "cursor"
)

// Entry is one line of logs/<conv>.log: the fields agents and the CLI read, plus seq (the
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
	// The first line of the user's prompt that led to the edit (agents' hooks), when known.
	ConversationTitle string `json:"conversation_title,omitempty"`
	Mode              string `json:"mode,omitempty"` // delete: the file's permissions (octal), for its return
	// Lines the diff adds and removes (absent in entries of older stores: see Counts).
	Added   *int `json:"added,omitempty"`
	Removed *int `json:"removed,omitempty"`
	// The status of each change of the diff, only while they differ (see
	// partial.go); Status then says pending or accepted.
	BlockStatus []Status `json:"hunk_status,omitempty"`

	raw     string // the log line this entry was read from
	invalid string // why no decision acts on the entry ("" when one may)
}

// Invalid says why no decision may act on the entry (it names a path no decision
// writes: outside the workspace, in a version-control folder, in the store), or ""
// when one may. Invalid entries are listed, never replayed.
func (e *Entry) Invalid() string { return e.invalid }

// WriteJSON writes entries as one JSON array. An entry read from a log is written as
// its log line, byte for byte (extra fields included): that is its JSON already, and
// re-encoding thousands of entries would be most of the time of `status --json`. An
// invalid entry gets a field "invalid" saying why.
func WriteJSON(w io.Writer, entries []*Entry) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	for i, e := range entries {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n  ")
		line := strings.TrimSpace(e.raw)
		if line == "" {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			line = string(b)
		}
		if e.invalid != "" && strings.HasSuffix(line, "}") {
			why, _ := json.Marshal(e.invalid)
			line = line[:len(line)-1] + `,"invalid":` + string(why) + "}"
		}
		bw.WriteString(line)
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
	EditIDs    []string `json:"edit_ids"`       // the edits whose status change caused it
	Mode       string   `json:"mode,omitempty"` // the file removed: its permissions (octal)
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
	invalid  []*Entry // entries no decision acts on (Entry.Invalid), sorted by seq
	markers  []*Marker
	warnings []string // corrupted lines skipped, and where
	// What makes each invalid entry invalid, for listings (a decision that names
	// one says so itself).
	invalidNotes []string
	// Store files that are not files (a FIFO in place of a log): skipped by readers,
	// but no decision is made while the history cannot be read whole.
	unreadable []string
}

// load reads every log. It needs no lock: logs are only appended with single writes
// and rewritten by rename, and a torn last line (a writer killed mid-append) is skipped.
// The paths of entries and markers are read as the current workspace's (localize).
func (s *Store) load() (*snapshot, error) {
	snap := &snapshot{}
	_ = s.Foreign() // reads identity.json: the folders paths were recorded in
	dropping := s.pendingDrop()
	names, err := s.files.readDir("logs")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		conv, ok := strings.CutSuffix(n.Name(), ".log")
		if !ok || dropping.has(conv) {
			continue
		}
		if !ValidConversationID(conv) {
			snap.warnings = append(snap.warnings, fmt.Sprintf("skipped logs/%s: not a conversation's log", n.Name()))
			continue
		}
		lines, err := s.files.readLog("logs/" + n.Name())
		if errors.Is(err, errSpecial) {
			snap.skip(err)
			continue
		}
		if err != nil {
			return nil, err
		}
		for i, l := range lines {
			switch {
			case l.entry == nil:
				snap.warnings = append(snap.warnings, fmt.Sprintf("skipped a corrupted line (%d) in logs/%s", i+1, n.Name()))
			case l.entry.ConversationID != conv: // it would name another log's files
				snap.warnings = append(snap.warnings, fmt.Sprintf("skipped line %d in logs/%s: it belongs to conversation %q", i+1, n.Name(), l.entry.ConversationID))
			default:
				s.localizeEntry(l.entry)
				if l.entry.invalid = s.invalidEntry(l.entry); l.entry.invalid != "" {
					snap.invalid = append(snap.invalid, l.entry)
					snap.invalidNotes = append(snap.invalidNotes, fmt.Sprintf("edit %s (logs/%s) is invalid: %s; %s", short(l.entry.EditID), n.Name(), l.entry.invalid, invalidAdvice))
					continue
				}
				snap.entries = append(snap.entries, l.entry)
			}
		}
	}
	markers, warn, err := s.files.readMarkers("rebuilds.log")
	if errors.Is(err, errSpecial) {
		snap.skip(err)
	} else if err != nil {
		return nil, err
	}
	for _, m := range markers {
		if dropping == nil || !dropping.Markers[m.Seq] {
			m.FromPath, m.FilePath = s.localize(m.FromPath), s.localize(m.FilePath)
			snap.markers = append(snap.markers, m)
		}
	}
	snap.warnings = append(snap.warnings, warn...)
	snap.invalidateSharedIDs()
	bySeq := func(es []*Entry) {
		sort.SliceStable(es, func(i, j int) bool { return es[i].Seq < es[j].Seq })
	}
	bySeq(snap.entries)
	bySeq(snap.invalid)
	return snap, nil
}

// invalidateSharedIDs makes invalid every entry whose edit id another entry has too
// (mcpdiff never writes two, so the store was damaged or planted): a decision on that
// id would decide them all, whichever conversation they are in.
func (snap *snapshot) invalidateSharedIDs() {
	count := make(map[string]int, len(snap.entries))
	for _, e := range snap.entries {
		count[e.EditID]++
	}
	if len(count) == len(snap.entries) {
		return
	}
	kept := snap.entries[:0]
	for _, e := range snap.entries {
		if count[e.EditID] == 1 {
			kept = append(kept, e)
			continue
		}
		e.invalid = "another entry has its edit id"
		snap.invalid = append(snap.invalid, e)
		snap.invalidNotes = append(snap.invalidNotes, fmt.Sprintf("edit %s (logs/%s.log) is invalid: %s; %s", short(e.EditID), e.ConversationID, e.invalid, invalidAdvice))
	}
	snap.entries = kept
}

// skip notes a store file that could not be read because it is not a file.
func (snap *snapshot) skip(err error) {
	snap.unreadable = append(snap.unreadable, err.Error())
	snap.warnings = append(snap.warnings, "skipped "+err.Error())
}

// whole fails when part of the history could not be read: a decision made on the
// rest could rebuild a file from an incomplete history.
func (snap *snapshot) whole() error {
	if len(snap.unreadable) > 0 {
		return fmt.Errorf("the edit history cannot be read whole, so no decision is made: %s", snap.unreadable[0])
	}
	return nil
}

// invalidAdvice ends every message about an invalid entry: what it means, and how
// it goes away.
const invalidAdvice = "no decision acts on it (`mcpdiff cleanup` drops its conversation once the rest of it is decided)"

// invalidEntry says why no decision may act on e, or "".
func (s *Store) invalidEntry(e *Entry) string {
	paths := []string{e.FilePath}
	if e.SourcePath != nil {
		paths = append(paths, *e.SourcePath)
	}
	for _, p := range paths {
		rel, err := s.relPath(p)
		if err != nil {
			return fmt.Sprintf("it names %s, outside the workspace", p)
		}
		if why := offLimits(rel); why != "" {
			return fmt.Sprintf("it names %s: %s", filepath.ToSlash(rel), why)
		}
	}
	for _, ref := range []*string{e.DiffFile, e.CheckpointFile} {
		if ref != nil && !filepath.IsLocal(*ref) {
			return fmt.Sprintf("it names %q, which is not a file of the edit history", *ref)
		}
	}
	return ""
}

// stageVerdicts puts into j the new verdicts, by edit id, of those of entries that
// have one: one log rewrite per conversation, in the order of their ids, so that a
// decision's journal is the same each time. Called with the lock held.
func (s *Store) stageVerdicts(j *journal, entries []*Entry, next map[string]verdict) error {
	byConv := map[string]map[string]verdict{}
	for _, e := range entries {
		if v, ok := next[e.EditID]; ok {
			if byConv[e.ConversationID] == nil {
				byConv[e.ConversationID] = map[string]verdict{}
			}
			byConv[e.ConversationID][e.EditID] = v
		}
	}
	for _, conv := range slices.Sorted(maps.Keys(byConv)) {
		if err := s.stageStatuses(j, conv, byConv[conv]); err != nil {
			return err
		}
	}
	return nil
}

// stageStatuses puts into j the log of conv with new statuses (of whole edits or of
// their blocks); unparseable lines are kept as they are. Called with the lock held.
func (s *Store) stageStatuses(j *journal, conv string, status map[string]verdict) error {
	name := "logs/" + conv + ".log"
	old, err := s.files.readFile(name)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, l := range parseLog(string(old)) {
		if l.entry != nil {
			if v, ok := status[l.entry.EditID]; ok && !v.equal(l.entry.verdict()) {
				v.apply(l.entry)
				l.entry.raw = ""
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
	j.putStore(name, &old, buf.Bytes())
	return nil
}

// readStoreFile reads a file of the store by its path relative to the store.
func (s *Store) readStoreFile(rel string) ([]byte, error) {
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("bad path %q in the edit history", rel)
	}
	b, err := s.files.readFile(rel)
	if err != nil {
		return nil, fmt.Errorf("read %s from the edit history: %w", rel, err)
	}
	return b, nil
}

func strPtr(s string) *string { return &s }

// timestamp is the time now as the log writes it.
func timestamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

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
