package edit

// Whole-file writes (write_file, write_files, create_file).

import (
	"bytes"
	"strings"
)

// Overwrite returns the bytes to write when content replaces an existing file whose
// bytes are old. Models write LF and no BOM, so the file's conventions are kept:
//   - a UTF-8 BOM that old starts with is kept (unless content is empty or has one);
//   - when old's dominant line ending is CRLF and content has only LF line breaks,
//     they are written as CRLF (content that already has a CRLF is left alone);
//   - content's own final-newline state is kept either way.
//
// A new file (create_file, or write_file on a missing path) gets content as given.
func Overwrite(old []byte, content string) []byte {
	if content == "" {
		return []byte{}
	}
	if dominantEOLOf(old) == "\r\n" && !strings.Contains(content, "\r\n") {
		content = strings.ReplaceAll(content, "\n", "\r\n")
	}
	if bytes.HasPrefix(old, []byte(utf8BOM)) && !strings.HasPrefix(content, utf8BOM) {
		content = utf8BOM + content
	}
	return []byte(content)
}
