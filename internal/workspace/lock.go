package workspace

import "sync"

// keyedMutex is one mutex per key, created on first use and dropped when its last
// holder or waiter is gone, so a long-running server does not accumulate an entry
// for every file it ever touched.
type keyedMutex struct {
	mu      sync.Mutex
	entries map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int // holders plus waiters; guarded by keyedMutex.mu
}

// lock blocks until key is free, then returns the function that frees it. Calling
// that function more than once is harmless.
func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.entries == nil {
		k.entries = make(map[string]*keyedEntry)
	}
	e := k.entries[key]
	if e == nil {
		e = &keyedEntry{}
		k.entries[key] = e
	}
	e.refs++
	k.mu.Unlock()

	e.mu.Lock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Unlock()
			k.mu.Lock()
			e.refs--
			if e.refs == 0 {
				delete(k.entries, key)
			}
			k.mu.Unlock()
		})
	}
}
