package history

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path"
	"sync"
	"time"
)

// Every edit creates files: without a conversation id, a log, a diff folder and a
// diff, and the temp file of the write. On ext4 without a journal (the machines the
// benchmarks run on), creating one takes from 0.02 ms to more than 1 ms, depending on
// how many files were deleted in the minutes before: the kernel steps over each
// recently freed inode. So a process that records many edits (mcpdiff serve) keeps
// empty files and folders made ahead in spare/, made while no edit is being recorded,
// and the store renames one into place wherever it would create one. Any process may
// take them (a rename is atomic: the loser finds the name gone and creates its own),
// and they are always empty: nothing is written into a spare until it has its final
// name, so a process killed at any point leaves either an empty spare or nothing.
//
// Taking a spare needs a rename that never replaces its target (Linux renameat2
// RENAME_NOREPLACE, macOS renameatx_np RENAME_EXCL: spares_linux.go,
// spares_darwin.go). Elsewhere, and in builds with the tag portable, there are no
// spares (spares_portable.go): the store creates each file itself, with O_EXCL.

const spareDir = "spare"

// Spares kept ready by a process that keeps them (Store.KeepSpares).
const (
	wantSpareFiles = 96
	wantSpareDirs  = 32
)

// spares is the pool of one store folder in this process.
type spares struct {
	root *os.Root
	mu   sync.Mutex
	idle *sync.Cond // signalled when the last record in flight ends
	// Names in spare/ this process knows of (made here, or found there).
	files, dirs []string
	adopted     bool      // spare/ was listed
	keep        bool      // refill after takes (KeepSpares)
	refilling   bool      // the refill goroutine runs
	active      int       // records in flight: the refill waits for none...
	lastEnd     time.Time // ...and for quietFor after the last one ended
	dir         *os.File
}

// processSpares gives every store folder one pool per process.
var processSpares sync.Map // store dir → *spares

func sparesOf(files storeFiles) *spares {
	if !sparesSupported {
		return nil
	}
	p, _ := processSpares.LoadOrStore(files.dir, &spares{root: files.root})
	sp := p.(*spares)
	sp.mu.Lock()
	if sp.idle == nil {
		sp.idle = sync.NewCond(&sp.mu)
	}
	sp.mu.Unlock()
	return sp
}

// take renames a spare (a folder with dir) to the store name dst, which must not
// exist, and reports whether it did. It fails over to the caller creating dst itself
// whenever there is no spare or the file system does not rename without replacing.
func (p *spares) take(dst string, dir bool) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.adopt()
	if p.dir == nil {
		return false
	}
	to, err := p.root.Open(path.Dir(dst))
	if err != nil {
		return false
	}
	defer to.Close()
	list := &p.files
	if dir {
		list = &p.dirs
	}
	for len(*list) > 0 {
		name := (*list)[len(*list)-1]
		*list = (*list)[:len(*list)-1]
		err := renameNoReplace(p.dir, name, to, path.Base(dst))
		if err == nil {
			p.wake()
			return true
		}
		if !errors.Is(err, fs.ErrNotExist) { // taken by another process: try the next
			*list = append(*list, name)
			return false
		}
	}
	p.wake()
	return false
}

// adopt lists the spares other processes left, the first time. Called with mu held.
func (p *spares) adopt() {
	if p.adopted {
		return
	}
	p.adopted = true
	d, err := p.root.Open(spareDir)
	if err != nil {
		return
	}
	names, _ := d.ReadDir(-1)
	for _, n := range names {
		// Only what is empty: a cloned repository may bring a spare/ with content.
		switch info, err := n.Info(); {
		case err != nil:
		case info.IsDir():
			if inside, err := fs.ReadDir(p.root.FS(), spareDir+"/"+n.Name()); err == nil && len(inside) == 0 {
				p.dirs = append(p.dirs, n.Name())
			}
		case info.Mode().IsRegular() && info.Size() == 0:
			p.files = append(p.files, n.Name())
		}
	}
	p.dir = d
}

// keepUp makes the pool refill itself from now on.
func (p *spares) keepUp() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.keep {
		p.keep = true
		p.wake()
	}
}

// wake starts the refill when the pool is short. Called with mu held.
func (p *spares) wake() {
	if !p.keep || p.refilling || (len(p.files) >= wantSpareFiles && len(p.dirs) >= wantSpareDirs) {
		return
	}
	p.refilling = true
	go p.refill()
}

// begin and end bracket a record (RecordAll): the refill makes no spare while one runs, so
// it never slows an edit down.
func (p *spares) begin() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.active++
	p.mu.Unlock()
}

func (p *spares) end() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.active--; p.active == 0 {
		p.lastEnd = time.Now()
		p.idle.Broadcast()
	}
	p.mu.Unlock()
}

// quietFor is how long the refill waits after a record: edits come in bursts
// (an agent's parallel calls), and a file being made in spare/ holds the folder
// that the burst's takes rename out of.
const quietFor = 5 * time.Millisecond

// refill makes spares until the pool is full, one at a time, each while no
// record runs. Best effort: it stops at the first failure (a full disk, a
// read-only store), and the store creates its files itself.
func (p *spares) refill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer func() { p.refilling = false }()
	p.adopt()
	if p.dir == nil {
		if err := p.root.Mkdir(spareDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return
		}
		p.adopted = false
		if p.adopt(); p.dir == nil {
			return
		}
	}
	for {
		for p.active > 0 {
			p.idle.Wait()
		}
		if wait := quietFor - time.Since(p.lastEnd); wait > 0 {
			p.mu.Unlock()
			time.Sleep(wait) // a debounce: a record that starts meanwhile is waited for above
			p.mu.Lock()
			continue
		}
		dir := len(p.dirs) < wantSpareDirs
		if !dir && len(p.files) >= wantSpareFiles {
			return
		}
		name := rand.Text()
		p.mu.Unlock()
		err := makeSpare(p.dir, name, dir)
		p.mu.Lock()
		if err != nil {
			return
		}
		if dir {
			p.dirs = append(p.dirs, name)
		} else {
			p.files = append(p.files, name)
		}
	}
}
