package edit

// Unified-diff edits (edit_file_diff).

import (
	"bytes"
	"errors"

	"github.com/mcpdiff/mcpdiff/internal/udiff"
)

// ApplyPatch performs edit_file_diff: it applies a unified diff written by a model to
// content and returns the new content.
//
// The diff is read leniently (udiff.ParseLenient: "---"/"+++" headers optional, hunk
// counts recomputed, "@@ @@" without numbers accepted). Each hunk must match exactly —
// its context and deleted lines, compared without their line breaks — at the position
// nearest its header line (udiff.ApplyNearestEOL), so an LF diff applies to a CRLF
// file. Unchanged lines keep their bytes, a BOM stays, and the file's final-newline
// state is kept. If any hunk does not match, nothing changes and the error names the
// hunk and shows the expected and the actual line.
func ApplyPatch(content []byte, diff string) ([]byte, error) {
	if err := CheckText(content); err != nil {
		return nil, err
	}
	d, err := udiff.ParseLenient(diff)
	if err != nil {
		return nil, errorf("The diff could not be read: %v. Send a unified diff: optional "+
			"\"--- a/file\" and \"+++ b/file\" lines, then hunks starting with \"@@ -12,3 +12,4 @@\" "+
			"whose lines begin with ' ' (context), '-' (delete) or '+' (insert). Nothing was changed.", err)
	}
	// udiff sees the BOM as part of line 1; the model's diff never has it.
	bom := ""
	if bytes.HasPrefix(content, []byte(utf8BOM)) {
		bom, content = utf8BOM, content[len(utf8BOM):]
	}
	out, err := udiff.ApplyNearestEOL(content, d)
	var applyErr *udiff.ApplyError
	switch {
	case errors.As(err, &applyErr):
		return nil, errorf("Hunk %d of the diff did not apply (its header points at line %d): %s. "+
			"Nothing was changed.", applyErr.Hunk, applyErr.Line, applyErr.Reason)
	case err != nil:
		return nil, errorf("The diff did not apply: %v. Nothing was changed.", err)
	case bytes.Equal(out, content):
		return nil, errorf("no change: the diff leaves the file as it is (did you mark the " +
			"changed lines with '-' and '+'?)")
	}
	return append([]byte(bom), out...), nil
}
