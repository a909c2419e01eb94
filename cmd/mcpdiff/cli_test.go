package main

import (
	"strings"
	"testing"
)

// A table's columns line up, and no row ends with spaces: a row whose last cells are
// empty (status's TITLE of an edit without one) stops at its last text.
func TestWriteTableRowsEndWithText(t *testing.T) {
	var b strings.Builder
	writeTable(&b, [][]string{{"EDIT", "PATH", "TITLE"}, {"1", "a.txt", "fix it"}, {"2", "bb.txt", ""}, {"3", "", ""}})
	want := "EDIT  PATH    TITLE\n1     a.txt   fix it\n2     bb.txt\n3\n"
	if b.String() != want {
		t.Fatalf("table:\n%q\nwant\n%q", b.String(), want)
	}
}
