package filetools

import (
	"io/fs"
	"sync"

	"github.com/mcpdiff/mcpdiff/internal/edit"
	"github.com/mcpdiff/mcpdiff/internal/workspace"
)

// Agents read the same file again and again (after a look elsewhere, to refresh
// their anchors); a 10,000-line read_text_file was a millisecond of the server's
// time: its lines split and tagged, its hash, its text escaped as JSON. The server
// keeps its last reads of the files it read last: their lines, hash and answers,
// for as long as the file keeps the identity it had (workspace.Same: inode, size,
// modification and change time, mode, as a stat of it tells), and answers a read of
// the same lines with them without reading the file again.
//
// The identity is what Tx.Verify trusts too, and like it, only when it is settled
// (workspace.Settled): a read of a file written less than a tick of the clock
// before it is not kept, since a change in place within that tick (possible on
// Linux before 6.13) would keep its size and times. An agent's reads come seconds
// after the writes, and are kept.

// What is kept: the last keptReadings files, of at most keptReadingSize bytes, and
// for each the answers (escaped as JSON) to its last keptAnswers ranges of lines.
const (
	keptReadings    = 4
	keptReadingSize = 4 << 20
	keptAnswers     = 4
)

type readings struct {
	mu    sync.Mutex
	files []*keptReading // newest last
}

type keptReading struct {
	path    string
	info    fs.FileInfo
	reading *edit.Reading
	answers map[[2]int][]byte // lines shown → the answer's text as JSON
	order   [][2]int
}

// get returns a Reading of the file at path if the last read of it saw the file as
// info shows it now (nil otherwise), and its kept answers.
func (rs *readings) get(path string, info fs.FileInfo) (*edit.Reading, *keptReading) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i, k := range rs.files {
		if k.path != path {
			continue
		}
		if !workspace.Same(k.info, info) {
			rs.files = append(rs.files[:i], rs.files[i+1:]...)
			return nil, nil
		}
		return k.reading.Again(), k
	}
	return nil, nil
}

// put keeps r, a read of the file at path whose stat was info, if settled.
func (rs *readings) put(path string, info fs.FileInfo, settled bool, r *edit.Reading, size int) *keptReading {
	if size > keptReadingSize || !settled {
		return nil
	}
	k := &keptReading{path: path, info: info, reading: r.Again(), answers: map[[2]int][]byte{}}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i, old := range rs.files {
		if old.path == path {
			rs.files = append(rs.files[:i], rs.files[i+1:]...)
			break
		}
	}
	if len(rs.files) == keptReadings {
		rs.files = rs.files[1:]
	}
	rs.files = append(rs.files, k)
	return k
}

// answer returns the answer kept for r's lines, or makes it and keeps it.
func (rs *readings) answer(k *keptReading, r *edit.Reading) []byte {
	from, to := r.Lines()
	key := [2]int{from, to}
	if k != nil {
		rs.mu.Lock()
		b, ok := k.answers[key]
		rs.mu.Unlock()
		if ok {
			return b
		}
	}
	b := r.AppendJSON(nil)
	if k != nil {
		rs.mu.Lock()
		if len(k.order) == keptAnswers {
			delete(k.answers, k.order[0])
			k.order = k.order[1:]
		}
		k.answers[key] = b
		k.order = append(k.order, key)
		rs.mu.Unlock()
	}
	return b
}
