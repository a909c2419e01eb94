package bridge

import (
	"container/list"
	"sync"
)

// views remembers, per client and file, the versions of the file the model was
// shown by read_text_file and edit_text_file (newest first, at most viewsPerFile).
// edit_text_file checks each anchor against the full line it stood for, not just its
// two-hex-digit tag. Memory is bounded: least recently used files are forgotten.
type views struct {
	mu    sync.Mutex
	max   int // bytes
	size  int
	items map[string]*list.Element
	lru   *list.List // of *viewItem, most recent at the front
}

const viewsPerFile = 2

type viewItem struct {
	key      string
	versions [][]string
	size     int
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
	return el.Value.(*viewItem).versions
}

// push records that the model was just shown lines.
func (v *views) push(key string, lines []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	item := &viewItem{key: key}
	if el, ok := v.items[key]; ok {
		item = el.Value.(*viewItem)
		v.lru.MoveToFront(el)
	} else {
		v.items[key] = v.lru.PushFront(item)
	}
	item.versions = append([][]string{lines}, item.versions...)
	if len(item.versions) > viewsPerFile {
		item.versions = item.versions[:viewsPerFile]
	}
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

func versionsSize(versions [][]string) int {
	n := 0
	for _, ver := range versions {
		for _, l := range ver {
			n += len(l) + 16
		}
	}
	return n
}
