package filetools

import (
	"container/list"
	"sync"
)

// views remembers, per client and file, the versions of the file the model was
// shown: the last one read_text_file returned, and the newest editViewsPerFile ones
// edit_text_file returned. edit_text_file checks each anchor against the full line it
// stood for, not just its two-hex-digit tag. The read is kept apart because models
// often keep editing with anchors from their read after several edits; it stays
// until the next read. Memory is bounded: least recently used files are forgotten.
type views struct {
	mu    sync.Mutex
	max   int // bytes
	size  int
	items map[string]*list.Element
	lru   *list.List // of *viewItem, most recent at the front
}

const editViewsPerFile = 2

type viewItem struct {
	key      string
	versions []version // newest first: at most one read and editViewsPerFile edits
	size     int
}

// version is one version of a file the model was shown.
type version struct {
	lines []string
	read  bool // shown by read_text_file (else by an edit_text_file result)
}

func newViews(maxBytes int) *views {
	return &views{max: maxBytes, items: map[string]*list.Element{}, lru: list.New()}
}

func viewKey(session, path string) string { return session + "\x00" + path }

// get returns the versions of key, newest first.
func (v *views) get(key string) [][]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	el, ok := v.items[key]
	if !ok {
		return nil
	}
	v.lru.MoveToFront(el)
	versions := el.Value.(*viewItem).versions
	out := make([][]string, len(versions))
	for i, ver := range versions {
		out[i] = ver.lines
	}
	return out
}

// pushRead records that read_text_file just showed lines; it replaces the previous
// read.
func (v *views) pushRead(key string, lines []string) { v.push(key, version{lines: lines, read: true}) }

// pushEdit records that an edit_text_file result just showed lines; the oldest edit
// version beyond editViewsPerFile is dropped, the read is kept.
func (v *views) pushEdit(key string, lines []string) { v.push(key, version{lines: lines}) }

func (v *views) push(key string, ver version) {
	v.mu.Lock()
	defer v.mu.Unlock()
	item := &viewItem{key: key}
	if el, ok := v.items[key]; ok {
		item = el.Value.(*viewItem)
		v.lru.MoveToFront(el)
	} else {
		v.items[key] = v.lru.PushFront(item)
	}
	kept := []version{ver}
	edits := 0
	if !ver.read {
		edits++
	}
	for _, old := range item.versions {
		switch {
		case old.read && ver.read:
		case old.read:
			kept = append(kept, old)
		case edits < editViewsPerFile:
			kept = append(kept, old)
			edits++
		}
	}
	item.versions = kept
	v.size -= item.size
	item.size = versionsSize(item.versions)
	v.size += item.size
	for v.size > v.max && v.lru.Len() > 1 {
		oldest := v.lru.Back()
		it := oldest.Value.(*viewItem)
		v.lru.Remove(oldest)
		delete(v.items, it.key)
		v.size -= it.size
	}
}

func versionsSize(versions []version) int {
	n := 0
	for _, ver := range versions {
		for _, l := range ver.lines {
			n += len(l) + 16
		}
	}
	return n
}
