package testenv

import (
	"bytes"
	"fmt"
)

// codeBlock is the repeating unit of the benchmarks' files: ordinary Go-like lines,
// numbered so that most of them are unique, as in real code.
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

// CodeLines is the first n lines of an endless run of code blocks.
func CodeLines(n int) []byte {
	var buf bytes.Buffer
	for i := 0; i*codeBlockLines < n; i++ {
		fmt.Fprintf(&buf, codeBlock, i)
	}
	b, end := buf.Bytes(), 0
	for range n {
		end += bytes.IndexByte(b[end:], '\n') + 1
	}
	return b[:end]
}

// CodeBytes is whole code blocks, at least size bytes of them, numbered from block
// from on (two calls with distant from make files with no line in common).
func CodeBytes(size, from int) []byte {
	var buf bytes.Buffer
	for i := from; buf.Len() < size; i++ {
		fmt.Fprintf(&buf, codeBlock, i)
	}
	return buf.Bytes()
}
