package workspace

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// A stat tells a file apart from what it was without reading it (Unchanged) only
// while its modification time can tell: file systems stamp writes with a coarse
// clock, whose tick is 1 to 10 ms on Linux (its HZ) and which lags the fine clock
// by up to a tick. A file written in place twice within one tick keeps the same
// modification time, and with the same size looks unchanged; Linux 6.13 and later
// give a write after a stat a finer time, older kernels do not. So a stat is
// trusted only when it cannot be the first of two such writes (the racy-git rule):
// the file's times are older, by more than a tick, than the moment of the stat.

// Ticks of the clock that stamps files: file systems with nanosecond times, and
// those that keep whole seconds (ext3, HFS+) or two (FAT).
const (
	fineTick   = 20 * time.Millisecond
	coarseTick = 2 * time.Second
)

// Settled reports whether any later write of the file in place must change what
// info shows, info being a stat taken at the moment at or later: its modification
// and change times are older than at by more than the clock's tick. A file that
// is not settled may have been written again since, within the same tick, keeping
// its size and times: compare its bytes, or read it again.
func Settled(info fs.FileInfo, at time.Time) bool {
	ctime, ok := changeTime(info)
	if !ok {
		ctime = info.ModTime()
	}
	return settled(info.ModTime(), ctime, at)
}

// settled is Settled's rule on the file's modification and change times.
func settled(mtime, ctime, at time.Time) bool {
	tick := fineTick
	if mtime.Nanosecond() == 0 {
		tick = coarseTick
	}
	limit := at.Add(-tick)
	return mtime.Before(limit) && ctime.Before(limit)
}

// Stamp is a file's identity as a stat shows it: which file object it is (device
// and inode where the system has them) and what could tell a write of it (size,
// modification and change times, mode). It answers the two questions asked of a file
// without reading it: is it the same file object (SameObject), and was it written
// since (UnchangedSince). The zero Stamp is a file that does not exist.
type Stamp struct {
	Exists     bool
	Size       int64
	ModNano    int64
	ChangeNano int64 // 0 where the system's stat has no change time
	Mode       fs.FileMode
	id         fileID
}

// StampOf is the stamp of the file fi describes.
func StampOf(fi fs.FileInfo) Stamp {
	s := Stamp{Exists: true, Size: fi.Size(), ModNano: fi.ModTime().UnixNano(), Mode: fi.Mode(), id: idOf(fi)}
	if ctime, ok := changeTime(fi); ok {
		s.ChangeNano = ctime.UnixNano()
	}
	return s
}

// StatStamp stats path, following symlinks; a file that cannot be stat'ed has the
// zero Stamp.
func StatStamp(path string) Stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return Stamp{}
	}
	return StampOf(fi)
}

// SameObject reports whether s and o are stamps of one file object: a file replaced
// by rename is another object, one written in place is not.
func (s Stamp) SameObject(o Stamp) bool {
	return s.Exists && o.Exists && s.id.same(o.id)
}

// UnchangedSince reports whether s shows the file was stamped was, not written in
// between as far as a stat can tell: the same object, size, modification time, mode
// and change time (which, unlike the modification time, a program cannot set back
// after writing). Both missing is unchanged too.
func (s Stamp) UnchangedSince(was Stamp) bool {
	if !s.Exists || !was.Exists {
		return s.Exists == was.Exists
	}
	return s.ContentUnchangedSince(was) && s.Mode == was.Mode && s.ChangeNano == was.ChangeNano
}

// ContentUnchangedSince is UnchangedSince without the mode and change time: for
// the one who renamed or linked the file since, which changes its change time
// without writing it. Writers that go through mcpdiff replace files by rename (a new
// object); anything writing in place changes the modification time.
func (s Stamp) ContentUnchangedSince(was Stamp) bool {
	return s.SameObject(was) && s.Size == was.Size && s.ModNano == was.ModNano
}

// Inode is the file's inode number, where the system has them.
func (s Stamp) Inode() (uint64, bool) { return s.id.inode() }

// Same is UnchangedSince on two stats.
func Same(was, now fs.FileInfo) bool { return StampOf(now).UnchangedSince(StampOf(was)) }

// Unchanged is ContentUnchangedSince on two stats.
func Unchanged(was, now fs.FileInfo) bool { return StampOf(now).ContentUnchangedSince(StampOf(was)) }

// holds reports whether the regular file rel holds exactly content, reading it a
// piece at a time (no copy of a big file is made to compare it).
func (r *Root) holds(rel string, content []byte) (bool, error) {
	f, err := r.dir.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return false, osError("read", rel, r, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, osError("read", rel, r, err)
	}
	if err := refuseNonRegular("read", rel, info); err != nil || info.Size() != int64(len(content)) {
		return false, err
	}
	buf := make([]byte, min(len(content)+1, 256<<10))
	for off := 0; ; {
		n, err := f.Read(buf)
		if n > len(content)-off || !bytes.Equal(buf[:n], content[off:off+n]) {
			return false, nil
		}
		off += n
		if err == io.EOF {
			return off == len(content), nil
		}
		if err != nil {
			return false, osError("read", rel, r, err)
		}
	}
}
