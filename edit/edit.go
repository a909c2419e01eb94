// Package edit is the text-edit engine behind the file tools: pure functions that take
// a file's bytes and return new bytes. Everything outside an edit stays byte-identical:
// each line keeps its own terminator (LF or CRLF), a UTF-8 BOM stays, a missing final
// newline stays missing. New lines take the file's dominant line ending.
//
// One file per tool family: hashline.go (read_text_file, edit_text_file), replace.go
// (edit_file), batch.go (the seed-004 toolkit), patch.go (edit_file_diff), write.go
// (write_file/create_file).
package edit

// Error is an edit that cannot be done. Its message says what was wrong and what to
// do next; it is shown to the model as is.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// CheckText refuses content that is not text: a NUL byte in the first 8000 bytes
// (git's rule), which also catches UTF-16. Invalid UTF-8 is allowed: its bytes are
// kept exactly.
func CheckText(content []byte) error { panic("TODO") }

// --- hashline.go

// Tag is the two lowercase hex digits of the lowest byte of FNV-1a (32-bit) over the
// line with trailing whitespace (including "\r") removed.
func Tag(line string) string { panic("TODO") }

// FileHash is the lowercase hex SHA-256 of the whole file.
func FileHash(content []byte) string { panic("TODO") }

// ReadTagged renders lines start..end (1-based, inclusive; 0 means from the first /
// to the last) as "N:hh|text" lines, then "file_hash: <sha256>".
func ReadTagged(content []byte, start, end int) (string, error) { panic("TODO") }

// Op is one edit_text_file operation.
type Op struct {
	Op      string  `json:"op"` // replace, replace_range, insert_after, insert_before, delete, delete_range
	Anchor  string  `json:"anchor,omitempty"`
	Start   string  `json:"start,omitempty"`
	End     string  `json:"end,omitempty"`
	Content *string `json:"content,omitempty"`
}

// TaggedEdit is a successful edit_text_file.
type TaggedEdit struct {
	Content []byte // the new file
	Summary string // for the model: what changed, relocations, fresh tags around the changes, new file_hash
	Lines   []string
}

// EditTagged applies ops atomically. views are the versions of the file the model was
// shown (each the list of line texts without terminators), newest first; they let an
// anchor be checked against the full line content it stood for, not just its 8-bit tag.
func EditTagged(content []byte, fileHash string, ops []Op, views [][]string) (*TaggedEdit, error) {
	panic("TODO")
}
