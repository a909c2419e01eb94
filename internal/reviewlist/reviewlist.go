// Package reviewlist builds the rows of Neovim's review list (:McpDiffStatus): the
// history's conversations, each followed by its edits with time, status, operation,
// tool, lines added and removed, and file. Conversations with pending edits come
// first, then the others, each group newest (latest edit) first: what is left to
// review is at the top however long the history grows. The rows are formatted here, in Go, and
// handed to Lua as plain string columns: Neovim then only sets the lines, which keeps
// a 10,000-entry list within a few milliseconds of Lua time.
package reviewlist

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdiff/mcpdiff/internal/history"
	"github.com/mcpdiff/mcpdiff/internal/termsafe"
)

// List is the review list: one element per line in every column.
type List struct {
	Workspace string   `json:"workspace" msgpack:"workspace"`
	Lines     []string `json:"lines" msgpack:"lines"`
	Edit      []string `json:"edit" msgpack:"edit"`     // the edit id ("" on a conversation's line)
	Conv      []string `json:"conv" msgpack:"conv"`     // the conversation id
	File      []string `json:"file" msgpack:"file"`     // the edit's file ("" on a conversation's line)
	Source    []string `json:"source" msgpack:"source"` // the source of a move, else ""
	Status    []string `json:"status" msgpack:"status"` // the edit's status as shown
	// Warnings and Info are history.Notices: problems of the store, and files
	// changed outside mcpdiff.
	Warnings []string `json:"warnings" msgpack:"warnings"`
	Info     []string `json:"info" msgpack:"info"`
	Error    string   `json:"error,omitempty" msgpack:"error"` // why there is no list (no store)
	Pending  []bool   `json:"pending" msgpack:"pending"`       // the edit is pending (a conversation: one of its edits)

	store   *history.Store
	listing *history.Listing // what Build read, for WithFreshInfo
}

// NoHistory is the list of a folder with no store in it or above it: not an error to
// a new user, so it says what makes edits appear.
func NoHistory(dir string) *List {
	return empty("No agent edits recorded in " + dir + " yet: edits appear here once an agent edits " +
		"through mcpdiff (:McpDiffClaude, `mcpdiff serve`, or `mcpdiff hooks install`)")
}

// empty is a list without rows, saying why.
func empty(why string) *List {
	return &List{Lines: []string{}, Edit: []string{}, Conv: []string{}, File: []string{}, Source: []string{},
		Status: []string{}, Pending: []bool{}, Warnings: []string{}, Info: []string{}, Error: why}
}

// statusOrder is the order of a conversation's counts.
var statusOrder = []string{"pending", "partly rejected", "accepted", "rejected"}

// Build lists the store's history, with paths relative to cwd when under it.
func Build(store *history.Store, cwd string) (*List, error) {
	// Review, not List: it completes a decision a killed process left, and names the
	// files that differ from their history, which the list shows first.
	listing, err := store.Review(context.Background(), history.Filter{})
	if err != nil {
		return nil, err
	}
	l := empty("")
	n := len(listing.Entries) + 64
	l.Lines, l.Edit, l.Conv = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	l.File, l.Source, l.Status = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	l.Pending = make([]bool, 0, n)
	l.Workspace, l.store, l.listing = store.Workspace(), store, listing
	notices := store.Notices(listing, cwd)
	l.Warnings, l.Info = escaped(notices.Warnings), escaped(notices.Info)
	convs := map[string][]*history.Entry{}
	var order []string
	for _, e := range listing.Entries {
		if _, ok := convs[e.ConversationID]; !ok {
			order = append(order, e.ConversationID)
		}
		convs[e.ConversationID] = append(convs[e.ConversationID], e)
	}
	for _, c := range order {
		sort.SliceStable(convs[c], func(i, j int) bool {
			a, b := convs[c][i], convs[c][j]
			if a.Seq != b.Seq {
				return a.Seq < b.Seq
			}
			return a.ToolCallIndex < b.ToolCallIndex
		})
	}
	pending := map[string]bool{}
	for _, e := range listing.Entries {
		pending[e.ConversationID] = pending[e.ConversationID] || e.Status == history.Pending
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if pending[a] != pending[b] {
			return pending[a]
		}
		return last(convs[a]).Seq > last(convs[b]).Seq
	})
	rel := func(p string) string {
		if r, ok := strings.CutPrefix(p, cwd+string(filepath.Separator)); ok && cwd != "" {
			return r
		}
		return p
	}
	// The tool column is as wide as its longest name: the file tools' own names
	// (edit_text_file, search_and_replace) are longer than the agents' (Edit, Write).
	toolWidth := 12
	for _, e := range listing.Entries {
		toolWidth = max(toolWidth, utf8.RuneCountInString(e.ToolName))
	}
	line := make([]byte, 0, 160)
	for _, c := range order {
		head := fmt.Sprintf("Conversation %s (%d)  %s", c, len(convs[c]), summary(convs[c]))
		if t := convs[c][0].ConversationTitle; t != "" {
			head += "  " + strconv.Quote(t)
		}
		l.add(head, "", c, "", "", "", pending[c])
		for _, e := range convs[c] {
			added, removed, _ := store.Counts(e)
			path, source := rel(e.FilePath), ""
			if e.SourcePath != nil {
				source = *e.SourcePath
				path = rel(source) + " -> " + path
			}
			status := e.StatusText()
			line = append(line[:0], "  "...)
			line = pad(line, short(e.EditID), 8)
			line = append(line, "  "...)
			line = appendLocalTime(line, e.Timestamp)
			line = append(line, "  "...)
			line = pad(line, status, 15)
			line = append(line, "  "...)
			line = pad(line, string(e.Operation), 7)
			line = append(line, "  "...)
			line = pad(line, e.ToolName, toolWidth)
			line = append(line, "  +"...)
			n := len(line)
			line = strconv.AppendInt(line, int64(added), 10)
			line = append(line, " −"...)
			line = strconv.AppendInt(line, int64(removed), 10)
			for w := utf8.RuneCount(line[n-1:]); w < 11; w++ {
				line = append(line, ' ')
			}
			line = append(line, "  "...)
			line = append(line, path...)
			l.add(string(line), e.EditID, c, e.FilePath, source, status, e.Status == history.Pending)
		}
	}
	return l, nil
}

// WithFreshInfo is l, a list Build made of a store unchanged since, with its Info
// worked out again from the files on disk. A file changed outside mcpdiff changes
// nothing in the store, so a list kept while the store is unchanged would
// otherwise go on saying what the files held when it was built.
func WithFreshInfo(l *List, cwd string) (*List, error) {
	if l.store == nil {
		return l, nil
	}
	drifts, err := l.store.Recheck(l.listing)
	if err != nil {
		return nil, err
	}
	fresh := *l
	fresh.Info = escaped(l.store.Notices(&history.Listing{Drifts: drifts}, cwd).Info)
	return &fresh, nil
}

// escaped is s (never nil) with the names in its lines escaped: the list shows them
// as they are.
func escaped(s []string) []string {
	out := make([]string, len(s))
	for i, line := range s {
		out[i] = termsafe.Escape(line)
	}
	return out
}

// last is the latest of a conversation's edits (sorted by seq).
func last(entries []*history.Entry) *history.Entry { return entries[len(entries)-1] }

// add appends a row; its line is shown as it is, so the names in it are escaped (a
// buffer line cannot hold a newline, and a name must not forge a row).
func (l *List) add(line, edit, conv, file, source, status string, pending bool) {
	l.Lines = append(l.Lines, termsafe.Escape(line))
	l.Edit = append(l.Edit, edit)
	l.Conv = append(l.Conv, conv)
	l.File = append(l.File, file)
	l.Source = append(l.Source, source)
	l.Status = append(l.Status, status)
	l.Pending = append(l.Pending, pending)
}

// summary counts a conversation's edits per status, pending first.
func summary(entries []*history.Entry) string {
	count := map[string]int{}
	for _, e := range entries {
		count[e.StatusText()]++
	}
	var parts []string
	for _, st := range statusOrder {
		if n := count[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
			delete(count, st)
		}
	}
	var rest []string // statuses this version does not know
	for st := range count {
		rest = append(rest, st)
	}
	sort.Strings(rest)
	for _, st := range rest {
		parts = append(parts, fmt.Sprintf("%d %s", count[st], st))
	}
	return strings.Join(parts, ", ")
}

// pad appends s and spaces up to width characters.
func pad(b []byte, s string, width int) []byte {
	b = append(b, s...)
	for n := utf8.RuneCountInString(s); n < width; n++ {
		b = append(b, ' ')
	}
	return b
}

// short is the first 8 characters of an edit id, as people read them.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// LocalTime shows a log timestamp in local time ("2006-01-02 15:04:05"). It reads
// the layout mcpdiff writes directly (time.Parse and Format were a tenth of
// `mcpdiff status` on 10,000 entries).
func LocalTime(ts string) string { return string(appendLocalTime(make([]byte, 0, 19), ts)) }

func appendLocalTime(b []byte, ts string) []byte {
	t, ok := parseLogTime(ts)
	if !ok {
		var err error
		if t, err = time.Parse(time.RFC3339Nano, ts); err != nil {
			return append(b, ts...)
		}
	}
	t = t.Local()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = appendPadded(b, y, 4)
	b = appendPadded(append(b, '-'), int(mo), 2)
	b = appendPadded(append(b, '-'), d, 2)
	b = appendPadded(append(b, ' '), h, 2)
	b = appendPadded(append(b, ':'), mi, 2)
	b = appendPadded(append(b, ':'), s, 2)
	return b
}

// parseLogTime reads "2006-01-02T15:04:05.000Z".
func parseLogTime(ts string) (time.Time, bool) {
	if len(ts) != 24 || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' || ts[13] != ':' || ts[16] != ':' || ts[19] != '.' || ts[23] != 'Z' {
		return time.Time{}, false
	}
	var n [7]int
	for i, span := range [7][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 23}} {
		for _, c := range ts[span[0]:span[1]] {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
			n[i] = n[i]*10 + int(c-'0')
		}
	}
	return time.Date(n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], n[6]*1e6, time.UTC), true
}

func appendPadded(b []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
