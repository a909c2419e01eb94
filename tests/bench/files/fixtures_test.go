package files

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// codeBlock is the repeating unit of the fixtures: ordinary Go-like lines, numbered
// so most of them are unique, as in real code.
const codeBlock = `func handler%[1]d(ctx context.Context, req *Request) (*Response, error) {
	value, err := store.Load(ctx, "key-%[1]d")
	if err != nil {
		return nil, fmt.Errorf("handler %[1]d: %%w", err)
	}
	total += value.Size * %[1]d // keep the running sum
	return &Response{ID: %[1]d, Value: value}, nil
}

`

const codeBlockLines = 9

// codeLines returns the first n lines of an endless run of code blocks.
func codeLines(n int) []byte {
	var buf bytes.Buffer
	for i := 0; i*codeBlockLines < n; i++ {
		fmt.Fprintf(&buf, codeBlock, i)
	}
	return firstLines(buf.Bytes(), n)
}

// codeBytes returns whole code blocks, at least size bytes of them, starting at
// block number from.
func codeBytes(size, from int) []byte {
	var buf bytes.Buffer
	for i := from; buf.Len() < size; i++ {
		fmt.Fprintf(&buf, codeBlock, i)
	}
	return buf.Bytes()
}

func firstLines(b []byte, n int) []byte {
	end := 0
	for range n {
		end += bytes.IndexByte(b[end:], '\n') + 1
	}
	return b[:end]
}

// editFixture is a file of code with one unique line in the middle, which the edit
// benchmarks rewrite from version k to version k+1.
type editFixture struct {
	head, tail []byte
}

func newEditFixture(size int) editFixture {
	head := codeBytes(size/2, 0)
	return editFixture{head: head, tail: codeBytes(size-len(head), 1<<20)}
}

// target is the edited line, without its newline, at version k.
func target(k int) string {
	return fmt.Sprintf("\tbenchTarget := \"version %d\" // the line the benchmarks edit", k)
}

// content is the whole file with the target line at version k.
func (f editFixture) content(k int) []byte {
	out := make([]byte, 0, len(f.head)+len(f.tail)+100)
	out = append(out, f.head...)
	out = append(out, target(k)...)
	out = append(out, '\n')
	return append(out, f.tail...)
}

// slot is the line pipelined edit j changes, before (edited=false) and after.
func slot(j int, edited bool) string {
	v := "original"
	if edited {
		v = "edited"
	}
	return fmt.Sprintf("\tslot%02d := %q", j, v)
}

// pipelineFile holds n slot lines, each after a code block.
func pipelineFile(n int) []byte {
	var buf bytes.Buffer
	for j := range n {
		fmt.Fprintf(&buf, codeBlock, j)
		buf.WriteString(slot(j, false) + "\n")
	}
	return buf.Bytes()
}

// workspace is a fresh, symlink-free folder (the reference server resolves paths).
func workspace(b *testing.B) string {
	b.Helper()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

func writeFile(b *testing.B, path string, content []byte) {
	b.Helper()
	if err := os.WriteFile(path, content, 0o644); err != nil {
		b.Fatal(err)
	}
}

func readFile(b *testing.B, path string) []byte {
	b.Helper()
	content, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return content
}
