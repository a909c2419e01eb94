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
)

// storeFiles is the store's folder opened as an *os.Root. Every read and write of
// the store goes through it, so a symlink planted in a cloned repository
// (.mcp -> ~, or logs/x.log -> ~/.bashrc) cannot make mcpdiff touch a file outside
// the store. Names are slash-separated and relative to the store.
type storeFiles struct {
	root *os.Root
	dir  string // absolute path, for messages
}

func (f storeFiles) abs(name string) string { return f.dir + "/" + name }

func (f storeFiles) readFile(name string) ([]byte, error) {
	b, err := f.root.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.abs(name), err)
	}
	return b, nil
}

// readDir lists a folder of the store; a missing folder is empty.
func (f storeFiles) readDir(name string) ([]fs.DirEntry, error) {
	names, err := fs.ReadDir(f.root.FS(), name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.abs(name), err)
	}
	return names, nil
}

func (f storeFiles) exists(name string) bool {
	_, err := f.root.Stat(name)
	return err == nil
}

// mkdirs creates the folder holding name.
func (f storeFiles) mkdirs(name string) error {
	if err := f.root.MkdirAll(path.Dir(name), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", f.abs(path.Dir(name)), err)
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
	file, err := f.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrNotExist) && !mkdir { // its folder was removed by a cleanup elsewhere
		return f.writeNew(name, data, true)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.abs(name), err)
	}
	_, err = file.Write(data)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = f.root.Remove(name)
		return fmt.Errorf("write %s: %w", f.abs(name), err)
	}
	return nil
}

// writeFile writes name in place (creating it and its folder, or truncating it).
func (f storeFiles) writeFile(name string, data []byte) error {
	file, err := f.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = f.mkdirs(name); err == nil {
			file, err = f.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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
		return fmt.Errorf("write %s: %w", f.abs(name), err)
	}
	return nil
}

// truncate cuts name back to size, removing it when size is 0.
func (f storeFiles) truncate(name string, size int64) error {
	if size == 0 {
		return f.root.Remove(name)
	}
	file, err := f.root.OpenFile(name, os.O_WRONLY, 0)
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
	data := string(b) // entries are decoded as slices of this one string
	var out []logLine
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
		var e Entry
		if decodeEntry(raw, &e) == nil && e.EditID != "" && e.FilePath != "" {
			e.raw = raw
			l.entry = &e
		}
		out = append(out, l)
	}
	return out, nil
}

func (f storeFiles) readMarkers(name string) ([]*Marker, []string, error) {
	file, err := f.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", f.abs(name), err)
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
			return nil, nil, fmt.Errorf("read %s: %w", f.abs(name), err)
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

// appendLine appends one JSON line to name in a single write, first cutting off a
// torn line a killed writer may have left. It returns the file's previous size so a
// failed commit can truncate back to it. Called with the lock held.
func (f storeFiles) appendLine(name string, v any) (prevSize int64, err error) {
	line, err := jsonLine(v)
	if err != nil {
		return 0, err
	}
	return f.appendRaw(name, line)
}

// appendRaw appends complete lines to name in a single write (see appendLine).
func (f storeFiles) appendRaw(name string, line []byte) (prevSize int64, err error) {
	file, err := f.root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", f.abs(name), err)
	}
	defer file.Close()
	size, err := file.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if size > 0 {
		if size, err = cutTornLine(file, size); err != nil {
			return 0, fmt.Errorf("repair %s: %w", f.abs(name), err)
		}
	}
	if _, err := file.WriteAt(line, size); err != nil {
		_ = file.Truncate(size)
		return 0, fmt.Errorf("append to %s: %w", f.abs(name), err)
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
	file, err := f.root.Open(name)
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
