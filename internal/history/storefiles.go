package history

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"unsafe"
)

// storeFiles is the store's folder opened as an *os.Root. Every read and write of
// the store goes through it, so a symlink planted in a cloned repository
// (.mcp -> ~, or logs/x.log -> ~/.bashrc) cannot make mcpdiff touch a file outside
// the store. Names are slash-separated and relative to the store.
type storeFiles struct {
	root   *os.Root
	dir    string  // absolute path, for messages
	spares *spares // files and folders made ahead (spares.go)
}

func (f storeFiles) abs(name string) string { return f.dir + "/" + name }

// fail explains a failed operation on the store file name: the path at fault, the
// cause without os.Root's own prefix, and what to do about it.
func (f storeFiles) fail(op, name string, err error) error {
	if errors.Is(err, errSpecial) {
		return err // names the path and what it is already
	}
	cause := err
	for {
		var pe *fs.PathError
		var le *os.LinkError
		if errors.As(cause, &pe) {
			cause = pe.Err
		} else if errors.As(cause, &le) {
			cause = le.Err
		} else {
			break
		}
	}
	if strings.HasSuffix(cause.Error(), "path escapes from parent") {
		return fmt.Errorf("cannot %s %s: it is, or lies behind, a symlink that leads out of the edit history; remove the link", op, f.abs(name))
	}
	hint := ""
	switch {
	case errors.Is(cause, syscall.ENOSPC) || errors.Is(cause, syscall.EDQUOT):
		hint = "; free some space on that disk and try again"
	case errors.Is(cause, syscall.EROFS):
		hint = "; the file system is read-only"
	case errors.Is(cause, fs.ErrPermission):
		folder := f.dir
		if d := path.Dir(name); d != "." {
			folder = f.abs(d)
		}
		hint = "; check the permissions of " + folder
	}
	return fmt.Errorf("cannot %s %s: %w%s", op, f.abs(name), cause, hint)
}

// errSpecial marks a store file that is a FIFO, device, socket or folder where a file
// belongs: it is reported, never opened in a way that could block.
var errSpecial = errors.New("not a regular file")

// specialError is an errSpecial that says which file and what it is.
type specialError struct{ msg string }

func (e *specialError) Error() string        { return e.msg }
func (e *specialError) Is(target error) bool { return target == errSpecial }

// openFile opens the store file name, which must be a regular file: anything else is
// refused without blocking (a FIFO opened for reading waits for a writer, one opened
// for writing for a reader, and opening some devices has side effects). A file only
// read is looked at before it is opened.
func (f storeFiles) openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		fi, err := f.root.Stat(name)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, f.special(name, fi.Mode())
		}
	}
	file, err := f.root.OpenFile(name, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
	if errors.Is(err, syscall.ENXIO) { // a FIFO opened for writing, with no reader
		return nil, f.special(name, fs.ModeNamedPipe)
	}
	if err != nil {
		return nil, err
	}
	fi, err := file.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = f.special(name, fi.Mode())
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	return file, nil
}

// special is the error for a store file that is not a regular file.
func (f storeFiles) special(name string, mode fs.FileMode) error {
	return f.notA(name, mode, "a file")
}

// notA is the error for a store file or folder that is not want ("a file", "a folder").
func (f storeFiles) notA(name string, mode fs.FileMode, want string) error {
	what := "a special file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	case mode.IsDir():
		what = "a folder"
	case mode.IsRegular():
		what = "a file"
	}
	return &specialError{fmt.Sprintf("%s is %s where the edit history expects %s; remove it", f.abs(name), what, want)}
}

// readFile reads the store file name whole.
func (f storeFiles) readFile(name string) ([]byte, error) {
	file, err := f.openFile(name, os.O_RDONLY, 0)
	if errors.Is(err, errSpecial) {
		return nil, err
	}
	if err != nil {
		return nil, f.fail("read", name, err)
	}
	defer file.Close()
	b, err := io.ReadAll(file)
	if err != nil {
		return nil, f.fail("read", name, err)
	}
	return b, nil
}

// readDir lists a folder of the store; a missing folder is empty. Something else in
// its place is refused without being opened.
func (f storeFiles) readDir(name string) ([]fs.DirEntry, error) {
	if fi, err := f.root.Stat(name); err == nil && !fi.IsDir() {
		return nil, f.notA(name, fi.Mode(), "a folder")
	}
	names, err := fs.ReadDir(f.root.FS(), name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, f.fail("read", name, err)
	}
	return names, nil
}

func (f storeFiles) exists(name string) bool {
	_, err := f.root.Stat(name)
	return err == nil
}

// present reports whether something has the name, whatever it is or points to.
func (f storeFiles) present(name string) bool {
	_, err := f.root.Lstat(name)
	return err == nil
}

// mkdirs creates the folder holding name.
func (f storeFiles) mkdirs(name string) error {
	if path.Dir(name) == "." || f.spares.take(path.Dir(name), true) {
		return nil
	}
	if err := f.root.MkdirAll(path.Dir(name), 0o700); err != nil {
		return f.fail("create", path.Dir(name), err)
	}
	return nil
}

// writeNew writes a file that must not exist yet (a diff or a checkpoint, named by a
// fresh id). No rename is needed: a log line refers to it only after it is complete,
// so a writer killed halfway leaves an unreferenced file, never a torn one. mkdir
// says whether its folder may be missing.
func (f storeFiles) writeNew(name string, data []byte, mkdir bool) error {
	if mkdir {
		if err := f.mkdirs(name); err != nil {
			return err
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if f.spares.take(name, false) {
		flags = os.O_WRONLY | os.O_TRUNC
	}
	file, err := f.openFile(name, flags, 0o600)
	if errors.Is(err, fs.ErrNotExist) && !mkdir { // its folder was removed by a cleanup elsewhere
		return f.writeNew(name, data, true)
	}
	if err != nil {
		return f.fail("write", name, err)
	}
	_, err = file.Write(data)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = f.root.Remove(name)
		return f.fail("write", name, err)
	}
	return nil
}

// writeFile writes name in place (creating it and its folder, or truncating it).
func (f storeFiles) writeFile(name string, data []byte) error {
	file, err := f.openFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = f.mkdirs(name); err == nil {
			file, err = f.openFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		}
	}
	if err != nil {
		return err
	}
	_, err = file.Write(data)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeAtomic replaces name through a temp file in tmp/ and a rename.
func (f storeFiles) writeAtomic(name string, data []byte) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	tmp := "tmp/w-" + hex.EncodeToString(b[:])
	err := f.writeNew(tmp, data, false)
	if err == nil {
		if err = f.mkdirs(name); err == nil {
			err = f.root.Rename(tmp, name)
		}
	}
	if err != nil {
		_ = f.root.Remove(tmp)
		if strings.HasPrefix(err.Error(), "cannot ") { // names its path already
			return err
		}
		return f.fail("write", name, err)
	}
	return nil
}

// writable tells whether this process can create files in the store: it creates
// one in tmp/, where its writes are staged (in the store's own folder when there is
// no tmp/ yet), and removes it. Through the store's root: a planted tmp/ that links
// out of the store is not written through, and the store is not writable.
func (f storeFiles) writable() bool {
	dir := "tmp/"
	if _, err := f.root.Lstat("tmp"); errors.Is(err, fs.ErrNotExist) {
		dir = ""
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := dir + ".writable-" + hex.EncodeToString(b[:])
	file, err := f.openFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	file.Close()
	return f.root.Remove(name) == nil
}

// writeNoReplace writes name through a temp file that is linked into place: a name
// that exists already (another process wrote it first) is left as it is, and the
// error is fs.ErrExist.
func (f storeFiles) writeNoReplace(name string, data []byte) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	tmp := "tmp/w-" + hex.EncodeToString(b[:])
	if err := f.writeNew(tmp, data, false); err != nil {
		return err
	}
	defer f.root.Remove(tmp)
	if err := f.root.Link(tmp, name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return f.fail("write", name, err)
	}
	return nil
}

// truncate cuts name back to size, removing it when size is 0.
func (f storeFiles) truncate(name string, size int64) error {
	if size == 0 {
		return f.root.Remove(name)
	}
	file, err := f.openFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = file.Truncate(size)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// readLog reads a conversation log. A final line without "\n" is a torn append and
// is ignored (it is repaired by the next append).
func (f storeFiles) readLog(name string) ([]logLine, error) {
	b, err := f.readFile(name)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, nil
	}
	// The entries are slices of the log; b is not used again, so it becomes their
	// string without a copy (10,000 entries: 2.6 MB not copied, 650 page faults).
	return parseLog(unsafe.String(&b[0], len(b))), nil
}

// parseLog splits a log into its lines; entries are decoded as slices of data.
func parseLog(data string) []logLine {
	n := strings.Count(data, "\n")
	out := make([]logLine, 0, n)
	entries := make([]Entry, n) // one allocation for all of them
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
		e := &entries[len(out)]
		if decodeEntry(raw, e) == nil && e.EditID != "" && e.FilePath != "" {
			e.raw = raw
			l.entry = e
		}
		out = append(out, l)
	}
	return out
}

func (f storeFiles) readMarkers(name string) ([]*Marker, []string, error) {
	file, err := f.openFile(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, f.fail("read", name, err)
	}
	defer file.Close()
	var out []*Marker
	var warn []string
	r := bufio.NewReader(file)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break // a torn last line is ignored
		}
		if err != nil {
			return nil, nil, f.fail("read", name, err)
		}
		var m Marker
		if json.Unmarshal(line, &m) != nil || m.FilePath == "" {
			warn = append(warn, fmt.Sprintf("skipped a corrupted line (%d) in %s", n, name))
			continue
		}
		out = append(out, &m)
	}
	return out, warn, nil
}

// appendRaw appends complete lines to name in a single write, first cutting off a
// torn line a killed writer may have left. It returns the file's previous size so a
// failed commit can truncate back to it. Called with the lock held.
func (f storeFiles) appendRaw(name string, line []byte) (prevSize int64, err error) {
	file, err := f.openFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, f.fail("open", name, err)
	}
	defer file.Close()
	size, err := file.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, f.fail("read", name, err)
	}
	if size > 0 {
		if size, err = cutTornLine(file, size); err != nil {
			return 0, f.fail("repair", name, err)
		}
	}
	if _, err := file.WriteAt(line, size); err != nil {
		_ = file.Truncate(size)
		return 0, f.fail("append to", name, err)
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
func (f storeFiles) lastEntry(name string) (*Entry, error) {
	file, err := f.openFile(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	size, err := file.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	// Read the tail; entries are a few hundred bytes, so 64 KiB holds the last ones.
	start := max(size-64<<10, 0)
	buf := make([]byte, size-start)
	if _, err := file.ReadAt(buf, start); err != nil {
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

// writeStaged writes sf.data to the journal file sf.name with mode sf.mode.
func (f storeFiles) writeStaged(sf stagedFile) error {
	if err := f.writeNew(sf.name, sf.data, false); err != nil {
		return err
	}
	if sf.mode != 0o600 {
		if err := f.root.Chmod(sf.name, sf.mode); err != nil {
			return f.fail("set the mode of", sf.name, err)
		}
	}
	return nil
}

// linkCopy gives the journal file src a second name, to be renamed into place while
// src stays for a retry. Where hard links are not allowed, it copies.
func (f storeFiles) linkCopy(src string) (string, error) {
	inst := src + ".put"
	_ = f.root.Remove(inst) // from an attempt that was cut off
	if err := f.root.Link(src, inst); err == nil {
		return inst, nil
	}
	data, err := f.readFile(src)
	if err != nil {
		return "", err
	}
	fi, err := f.root.Stat(src)
	if err != nil {
		return "", f.fail("read", src, err)
	}
	if err := f.writeStaged(stagedFile{name: inst, data: data, mode: fi.Mode().Perm()}); err != nil {
		return "", err
	}
	return inst, nil
}

// repairTail cuts a torn last line off the store file name and returns its size.
func (f storeFiles) repairTail(name string) (int64, error) {
	file, err := f.openFile(name, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, f.fail("open", name, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return 0, f.fail("read", name, err)
	}
	if fi.Size() == 0 {
		return 0, nil
	}
	size, err := cutTornLine(file, fi.Size())
	if err != nil {
		return 0, f.fail("repair", name, err)
	}
	return size, nil
}

// writeAt writes data at offset of the store file name and cuts it there, so
// repeating it gives the same file.
func (f storeFiles) writeAt(name string, offset int64, data []byte) error {
	if err := f.mkdirs(name); err != nil {
		return err
	}
	file, err := f.openFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return f.fail("open", name, err)
	}
	defer file.Close()
	if err := file.Truncate(offset); err != nil {
		return f.fail("append to", name, err)
	}
	if _, err := file.WriteAt(data, offset); err != nil {
		_ = file.Truncate(offset)
		return f.fail("append to", name, err)
	}
	return nil
}

// cutBack truncates the store file name to size (if it exists).
func (f storeFiles) cutBack(name string, size int64) error {
	file, err := f.openFile(name, os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return f.fail("open", name, err)
	}
	defer file.Close()
	if err := file.Truncate(size); err != nil {
		return f.fail("truncate", name, err)
	}
	return nil
}
