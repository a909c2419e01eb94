package workspace

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkWriteFile measures an atomic replace of an existing file, without and
// with fsync of the file and its folder, to choose WriteOptions.Sync's default.
func BenchmarkWriteFile(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, size := range []int{1 << 10, 1 << 20} {
			name := fmt.Sprintf("nosync/%dKB", size>>10)
			if sync {
				name = fmt.Sprintf("sync/%dKB", size>>10)
			}
			b.Run(name, func(b *testing.B) {
				r := openRoot(b, b.TempDir())
				data := bytes.Repeat([]byte("x"), size)
				if err := r.WriteFile("f.txt", data, WriteOptions{}); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				for b.Loop() {
					if err := r.WriteFile("f.txt", data, WriteOptions{Sync: sync}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkResolve measures resolving an existing file three folders deep.
func BenchmarkResolve(b *testing.B) {
	dir := b.TempDir()
	writeFiles(b, dir, map[string]string{"a/b/c/file.txt": "x"})
	r := openRoot(b, dir)
	p, _ := NewPolicy([]*Root{r})
	path := filepath.Join("a", "b", "c", "file.txt")
	for b.Loop() {
		if _, err := p.Resolve(path); err != nil {
			b.Fatal(err)
		}
	}
}
