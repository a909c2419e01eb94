package history

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// How people name edits and conversations: by their whole id, or by its first
// characters (at least minPrefix) when those start one id only. `status` shows edit
// ids by their first 8 characters and conversation ids by the shortest prefix that
// names them alone (ShortConversationIDs); Neovim shows the same.

// ErrUnknownID means an id named no edit or conversation, or more than one.
var ErrUnknownID = errors.New("unknown id")

const minPrefix = 4

// Named finds the entries an id names: one edit, or every edit of one conversation.
// An id that starts several is refused, listing them.
func Named(entries []*Entry, id string) ([]*Entry, error) {
	var conv []*Entry
	edits := map[string]*Entry{}
	convs := map[string]bool{}
	for _, e := range entries {
		switch {
		case e.EditID == id:
			return []*Entry{e}, nil
		case e.ConversationID == id:
			conv = append(conv, e)
		case len(id) >= minPrefix && strings.HasPrefix(e.EditID, id):
			edits[e.EditID] = e
		case len(id) >= minPrefix && strings.HasPrefix(e.ConversationID, id):
			convs[e.ConversationID] = true
		}
	}
	if len(conv) > 0 {
		return conv, nil
	}
	switch {
	case len(edits)+len(convs) > 1:
		return nil, ambiguous(id, edits, convs, entries)
	case len(edits) == 1:
		for _, e := range edits {
			return []*Entry{e}, nil
		}
	case len(convs) == 1:
		for c := range convs {
			return ofConversation(entries, c), nil
		}
	}
	return nil, unknown(id)
}

// ConversationNamed is the id of the one conversation id names (whole, or its first
// characters).
func ConversationNamed(entries []*Entry, id string) (string, error) {
	convs := map[string]bool{}
	for _, e := range entries {
		switch {
		case e.ConversationID == id:
			return id, nil
		case len(id) >= minPrefix && strings.HasPrefix(e.ConversationID, id):
			convs[e.ConversationID] = true
		}
	}
	switch len(convs) {
	case 0:
		return "", unknown(id)
	case 1:
		for c := range convs {
			return c, nil
		}
	}
	return "", ambiguous(id, nil, convs, entries)
}

// conversationNamed is ConversationNamed among every entry of snap ("" for "").
func (snap *snapshot) conversationNamed(id string) (string, error) {
	if id == "" {
		return "", nil
	}
	return ConversationNamed(append(append([]*Entry(nil), snap.entries...), snap.invalid...), id)
}

func unknown(id string) error {
	if len(id) < minPrefix {
		return fmt.Errorf("%w %q: give at least %d characters of an edit or conversation id (`mcpdiff status` lists them)", ErrUnknownID, id, minPrefix)
	}
	return fmt.Errorf("%w %q: no edit or conversation of this history has that id or starts with it (`mcpdiff status` lists them)", ErrUnknownID, id)
}

// ambiguous says which edits and conversations id starts (ten at most).
func ambiguous(id string, edits map[string]*Entry, convs map[string]bool, entries []*Entry) error {
	var names []string
	for _, e := range edits {
		names = append(names, fmt.Sprintf("edit %s (%s)", e.EditID, e.FilePath))
	}
	for c := range convs {
		desc := fmt.Sprintf("conversation %s", c)
		if t := titleOf(entries, c); t != "" {
			desc += fmt.Sprintf(" (%q)", t)
		}
		names = append(names, desc)
	}
	slices.Sort(names)
	more := ""
	if len(names) > 10 {
		more = fmt.Sprintf(" and %d more", len(names)-10)
		names = names[:10]
	}
	return fmt.Errorf("%w %q: it starts %d ids: %s%s; give more characters", ErrUnknownID, id, len(edits)+len(convs), strings.Join(names, ", "), more)
}

func ofConversation(entries []*Entry, conv string) []*Entry {
	var out []*Entry
	for _, e := range entries {
		if e.ConversationID == conv {
			out = append(out, e)
		}
	}
	return out
}

func titleOf(entries []*Entry, conv string) string {
	for _, e := range entries {
		if e.ConversationID == conv && e.ConversationTitle != "" {
			return e.ConversationTitle
		}
	}
	return ""
}

// ShortConversationIDs maps each conversation of the history to the shortest prefix
// of its id that names it alone, and no shorter than its agent's name and
// minPrefix characters more ("claude_1k2m").
func (l *Listing) ShortConversationIDs() map[string]string {
	entries := l.Entries
	if l.snap != nil {
		entries = append(append([]*Entry(nil), l.snap.entries...), l.snap.invalid...)
	}
	var ids []string
	seen := map[string]bool{}
	for _, e := range entries {
		if !seen[e.ConversationID] {
			seen[e.ConversationID] = true
			ids = append(ids, e.ConversationID)
		}
	}
	slices.Sort(ids)
	short := make(map[string]string, len(ids))
	for i, id := range ids {
		n := strings.IndexByte(id, '_') + 1 + minPrefix
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(ids) {
				n = max(n, commonPrefix(id, ids[j])+1)
			}
		}
		short[id] = id[:min(n, len(id))]
	}
	return short
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
