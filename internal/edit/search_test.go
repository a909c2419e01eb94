package edit

import (
	"strings"
	"testing"
)

func TestSearchAndReplace(t *testing.T) {
	searchAndReplace := func(content []byte, p SearchReplace) (replaced, error) {
		res, err := SearchAndReplace("f", content, p)
		if err != nil {
			return replaced{}, err
		}
		return replaced{string(res.Content), res.Count}, nil
	}
	runCalls(t, searchAndReplace, []call[SearchReplace, replaced]{
		{"literal", "app.name=x\napp.name.y=2\nother\napp.name\n", SearchReplace{Search: "app.name", Replace: "spring.application.name"},
			replaced{"spring.application.name=x\nspring.application.name.y=2\nother\nspring.application.name\n", 3}, nil},
		{"literal dot is not a wildcard", "a.b axb\n", SearchReplace{Search: "a.b", Replace: "c"}, replaced{"c axb\n", 1}, nil},
		{"literal $ stays literal", "price\n", SearchReplace{Search: "price", Replace: "$1 ${x} $$"}, replaced{"$1 ${x} $$\n", 1}, nil},
		{"regex groups", "const fs = require('fs');\nconst p = require(\"path\")\n",
			SearchReplace{Search: `const\s+(\w+)\s*=\s*require\(['"]([^'"]+)['"]\)`, Replace: "import $1 from '$2'", UseRegex: true},
			replaced{"import fs from 'fs';\nimport p from 'path'\n", 2}, nil},
		{"regex $1 before letters", "foo bar\n", SearchReplace{Search: `(\w+) (\w+)`, Replace: "$2_$1x", UseRegex: true}, replaced{"bar_foox\n", 1}, nil},
		{"regex named group and $$", "k=v\n", SearchReplace{Search: `(?P<key>\w)=(\w)`, Replace: "${key}$$${2}", UseRegex: true}, replaced{"k$v\n", 1}, nil},
		{"ignore case", "Hello hello HELLO\n", SearchReplace{Search: "hello", Replace: "Hi", IgnoreCase: true}, replaced{"Hi Hi Hi\n", 3}, nil},
		{"line range", "1.0.0\n1.0.0\n1.0.0\n", SearchReplace{Search: "1.0.0", Replace: "1.1.0", StartLine: 2, EndLine: 2}, replaced{"1.0.0\n1.1.0\n1.0.0\n", 1}, nil},
		{"start_line only", "a\na\na\n", SearchReplace{Search: "a", Replace: "b", StartLine: 2}, replaced{"a\nb\nb\n", 2}, nil},
		{"CRLF kept", "a x\r\nb\r\nx c\r\n", SearchReplace{Search: "x", Replace: "y"}, replaced{"a y\r\nb\r\ny c\r\n", 2}, nil},
		{"CRLF multi-line search", "a\r\nb\r\nc\r\n", SearchReplace{Search: "a\nb", Replace: "ab"}, replaced{"ab\r\nc\r\n", 1}, nil},
		{"CRLF new lines", "a\r\nb\r\n", SearchReplace{Search: "a", Replace: "a1\na2"}, replaced{"a1\r\na2\r\nb\r\n", 1}, nil},
		{"mixed: untouched lines keep their ending", "a\nb\r\nc\r\n", SearchReplace{Search: "c", Replace: "C"}, replaced{"a\nb\r\nC\r\n", 1}, nil},
		{"same line count keeps each ending", "a\nb\r\n", SearchReplace{Search: "a\nb", Replace: "x\ny"}, replaced{"x\ny\r\n", 1}, nil},
		{"match eating a newline joins lines", "a\nb\nc\n", SearchReplace{Search: "b\n", Replace: ""}, replaced{"a\nc\n", 1}, nil},
		{"joining to the next line", "foo\nbar\nqux\n", SearchReplace{Search: "bar\n", Replace: "baz"}, replaced{"foo\nbazqux\n", 1}, nil},
		{"eating the final newline", "a\nb\n", SearchReplace{Search: "b\n", Replace: "c"}, replaced{"a\nc", 1}, nil},
		{"no final newline kept", "a\nb", SearchReplace{Search: "b", Replace: "c"}, replaced{"a\nc", 1}, nil},
		{"emptying the last line", "a\nb", SearchReplace{Search: "b", Replace: ""}, replaced{"a\n", 1}, nil},
		{"emptying a line in a range keeps it", "a\nb\nc\n", SearchReplace{Search: "b", Replace: "", StartLine: 2, EndLine: 2}, replaced{"a\n\nc\n", 1}, nil},
		{"regex anchors match every line", "ab\nab\n", SearchReplace{Search: "^ab", Replace: "x", UseRegex: true}, replaced{"x\nx\n", 2}, nil},
		{"(?-m) anchors the whole range", "ab\nab\n", SearchReplace{Search: "(?-m)^ab", Replace: "x", UseRegex: true}, replaced{"x\nab\n", 1}, nil},
		{"multi-line flag", "ab\nab\n", SearchReplace{Search: "(?m)^ab$", Replace: "x", UseRegex: true}, replaced{"x\nx\n", 2}, nil},
		{"BOM kept", utf8BOM + "a\n", SearchReplace{Search: "a", Replace: "b"}, replaced{utf8BOM + "b\n", 1}, nil},
		{"invalid UTF-8 kept", "\xff a \xfe\n", SearchReplace{Search: "a", Replace: "b"}, replaced{"\xff b \xfe\n", 1}, nil},
		{"two matches on one line", "aXa\n", SearchReplace{Search: "a", Replace: "bb"}, replaced{"bbXbb\n", 2}, nil},

		{"range end is not crossed", "a\nb\n", SearchReplace{Search: "a\n", Replace: "x", EndLine: 1, UseRegex: true}, replaced{}, []string{"No matches found"}},
		{"no match", "abc\n", SearchReplace{Search: "x", Replace: "y"}, replaced{}, []string{`No matches found for text "x" in f. Nothing was changed.`}},
		{"case hint", "Hello\n", SearchReplace{Search: "hello", Replace: "y"}, replaced{}, []string{"matches when case is ignored", "ignore_case=true"}},
		{"range hint", "a\nb\n", SearchReplace{Search: "a", Replace: "y", StartLine: 2}, replaced{}, []string{"in f (lines 2-2)", "the whole file has 1 match"}},
		{"bad regex", "a\n", SearchReplace{Search: "(a", Replace: "y", UseRegex: true}, replaced{}, []string{`Invalid regular expression "(a"`, "missing closing )"}},
		{"empty search", "a\n", SearchReplace{Search: "", Replace: "y"}, replaced{}, []string{"search is empty"}},
		{"empty file", "", SearchReplace{Search: "a", Replace: "y"}, replaced{}, []string{"f is empty"}},
		{"line past the end", "a\n", SearchReplace{Search: "a", Replace: "y", EndLine: 5}, replaced{}, []string{"Line number 5 exceeds file length (1 line)"}},
		{"start after end", "a\nb\n", SearchReplace{Search: "a", Replace: "y", StartLine: 2, EndLine: 1}, replaced{}, []string{"start_line 2 is after end_line 1"}},
		{"binary", "\x00", SearchReplace{Search: "a", Replace: "y"}, replaced{}, []string{"binary"}},
	})
}

func TestSearchAndReplaceMessages(t *testing.T) {
	tests := []struct {
		name    string
		content string
		p       SearchReplace
		want    string
	}{
		{"src/main/resources/application.properties", "app.name\napp.name\napp.name\n", SearchReplace{Search: "app.name", Replace: "spring.application.name"},
			"Successfully replaced 3 occurrence(s) in src/main/resources/application.properties"},
		{"config.js", strings.Repeat("const a = require('a')\n", 5), SearchReplace{Search: `const\s+(\w+)\s*=\s*require\(['"]([^'"]+)['"]\)`, Replace: "import $1 from '$2'", UseRegex: true},
			"Successfully replaced 5 occurrence(s) in config.js using regex pattern"},
		{"package.json", numbered(12, "\n", map[int]string{3: `"version": "1.0.0"`, 12: "1.0.0"}), SearchReplace{Search: "1.0.0", Replace: "1.1.0", StartLine: 1, EndLine: 10},
			"Successfully replaced 1 occurrence(s) in package.json (lines 1-10)"},
		{"README.md", "hello Hello HELLO\n", SearchReplace{Search: "hello", Replace: "Hi", IgnoreCase: true},
			"Successfully replaced 3 occurrence(s) in README.md (case-insensitive)"},
		{"all.txt", "a\nA\n", SearchReplace{Search: "a", Replace: "b", UseRegex: true, IgnoreCase: true, StartLine: 1},
			"Successfully replaced 2 occurrence(s) in all.txt using regex pattern (case-insensitive) (lines 1-2)"},
	}
	for _, tt := range tests {
		got, err := SearchAndReplace(tt.name, []byte(tt.content), tt.p)
		if err != nil {
			t.Fatal(err)
		}
		if got.Message != tt.want {
			t.Errorf("got %q\nwant %q", got.Message, tt.want)
		}
	}
}

func TestRegexTemplate(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "$1": "${1}", "$12x": "${12}x", "$1_old": "${1}_old", "${1}": "${1}",
		"$name": "$name", "$$1": "$$1", "a$": "a$", "$": "$",
	} {
		if got := regexTemplate(in); got != want {
			t.Errorf("regexTemplate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearchAnchorsMatchEveryLine(t *testing.T) {
	res, err := SearchAndReplace("f", []byte("a\nbb\nc\r\n"), SearchReplace{Search: `^(\w)$`, Replace: "<$1>", UseRegex: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Content); got != "<a>\nbb\n<c>\r\n" || res.Count != 2 {
		t.Fatalf("got %q (%d)", got, res.Count)
	}
}
