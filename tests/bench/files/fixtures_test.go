package files

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// editFixture is a file of code with one unique line in the middle, which the edit
// benchmarks rewrite from version k to version k+1.
type editFixture struct {
	head, tail []byte
}

func newEditFixture(size int) editFixture {
	head := testenv.CodeBytes(size/2, 0)
	return editFixture{head: head, tail: testenv.CodeBytes(size-len(head), 1<<20)}
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
		buf.Write(testenv.CodeBytes(1, j)) // block j alone
		buf.WriteString(slot(j, false) + "\n")
	}
	return buf.Bytes()
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
