package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainASCII(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 17; pos++ {
			b := []byte("abcdefghijklmnopq")
			b[pos] = byte(c)
			if got, want := PlainASCII(string(b)), !special[c]; got != want {
				t.Fatalf("byte %#x at %d: got %v", c, pos, got)
			}
		}
	}
}

// Skip accepts exactly the valid JSON values (see the exception below).
func FuzzSkip(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,true,null,{"b":"\u00e9"}]}`, `01`, `-`, `1.`, `1e`, `"\ud800"`, `[1,]`, `{"a" 1}`, `"a\tb"`, "\"\xff\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc := New(s)
		_, ok := sc.Skip()
		ok = ok && sc.End()
		valid := json.Valid([]byte(s))
		if ok && !valid {
			t.Fatalf("%q: Skip accepts invalid JSON", s)
		}
		// Skip refuses only what encoding/json would change (invalid UTF-8 and lone
		// surrogates become U+FFFD): readers then fall back to encoding/json.
		if !ok && valid && utf8.ValidString(s) && !strings.Contains(s, `\u`) {
			t.Fatalf("%q: Skip refuses what encoding/json accepts", s)
		}
	})
}

// AppendString writes what encoding/json reads back as the same string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t\x00\x1f", "caf\u00e9 \U0001F600", "\xff bad", "\u2028<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got string
		if err := json.Unmarshal(AppendString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want, _ := json.Marshal(s)
		var back string
		json.Unmarshal(want, &back)
		if got != back {
			t.Fatalf("%q: got %q, encoding/json %q", s, got, back)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	var s []byte
	for len(s) < 1<<20 {
		s = append(s, "line 42: the quick brown fox jumps over the lazy dog\n"...)
	}
	b.SetBytes(int64(len(s)))
	for _, name := range []string{"jsonscan", "encoding/json"} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if name == "jsonscan" {
					AppendString(nil, string(s))
				} else {
					json.Marshal(string(s))
				}
			}
		})
	}
}

// A string String reads is the one encoding/json reads from the same text.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\tb\\\"c\n"`, `"\\"`, `"x\\\\"`, `"\u00e9\ud83d\ude00"`, `"\/"`, `"a\"`, `"\q"`, `"` + strings.Repeat(`line\t\"q\"\n`, 100) + `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, raw, ok := New(s).StringRaw()
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil || got != want {
			t.Fatalf("%q: String %q, encoding/json %q (%v)", raw, got, want, err)
		}
	})
}
