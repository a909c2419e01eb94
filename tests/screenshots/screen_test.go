//go:build unix

package screenshots

import (
	"strings"
	"testing"
)

const esc = "\x1b"

func TestParseColoursCarryOverLines(t *testing.T) {
	// As tmux writes a capture: a style set on one line holds on the next.
	capture := esc + "[38;2;88;88;88m" + esc + "[48;2;28;28;28m  1 " + esc + "[38;2;175;135;175mpackage" + esc + "[38;2;188;188;188m main\n" +
		"  2 x" + esc + "[0m\n"
	s, err := Parse(capture, 18)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Lines(); len(got) != 2 || got[0] != "  1 package main" || got[1] != "  2 x" {
		t.Fatalf("lines %q", got)
	}
	gray, bg := RGB(88, 88, 88), RGB(28, 28, 28)
	if c := s.Rows[0][0]; c.Style.FG != gray || c.Style.BG != bg {
		t.Errorf("cell 0,0 style %+v", c.Style)
	}
	if c := s.Rows[0][4]; c.Text != "p" || c.Style.FG != RGB(175, 135, 175) || c.Style.BG != bg {
		t.Errorf("cell 0,4 %+v", c)
	}
	if c := s.Rows[1][0]; c.Style.FG != RGB(188, 188, 188) || c.Style.BG != bg {
		t.Errorf("line 2 lost the style of line 1: %+v", c.Style)
	}
	if c := s.Rows[1][17]; c.Text != " " || c.Style != (Style{}) {
		t.Errorf("padding cell %+v, want a blank default cell", c)
	}
}

func TestParseSGRForms(t *testing.T) {
	for _, tc := range []struct {
		sgr  string
		want Style
	}{
		{"1;3;4;7;9", Style{Bold: true, Italic: true, Underline: true, Reverse: true, Strike: true}},
		{"4:3", Style{Underline: true}},
		{"4:0", Style{}},
		{"2;8", Style{Dim: true, Hidden: true}},
		{"1;22", Style{}},
		{"31;102", Style{FG: RGB(205, 0, 0), BG: RGB(0, 255, 0)}},
		{"38;5;196;48;5;232", Style{FG: RGB(255, 0, 0), BG: RGB(8, 8, 8)}},
		{"38;5;67", Style{FG: RGB(95, 135, 175)}},
		{"38:2::1:2:3;48:2:4:5:6", Style{FG: RGB(1, 2, 3), BG: RGB(4, 5, 6)}},
		{"58;2;9;9;9;38;2;7;7;7", Style{FG: RGB(7, 7, 7)}},
		{"31;39", Style{}},
		{"1;31;0", Style{}},
		{"", Style{}},
	} {
		s, err := Parse(esc+"["+tc.sgr+"mx", 1)
		if err != nil {
			t.Fatalf("%q: %v", tc.sgr, err)
		}
		if got := s.Rows[0][0].Style; got != tc.want {
			t.Errorf("SGR %q: style %+v, want %+v", tc.sgr, got, tc.want)
		}
	}
}

func TestParseWideAndCombiningCharacters(t *testing.T) {
	s, err := Parse("a界e\u0301✻−\n", 7)
	if err != nil {
		t.Fatal(err)
	}
	row := s.Rows[0]
	if row[1].Text != "界" || row[1].Width != 2 || row[2].Width != 0 {
		t.Errorf("wide character cells %+v %+v", row[1], row[2])
	}
	if row[3].Text != "e\u0301" || row[4].Text != "✻" || row[5].Text != "−" {
		t.Errorf("cells %+v", row)
	}
}

func TestParseRefusesWhatWouldNotLineUp(t *testing.T) {
	for _, tc := range []struct{ capture, want string }{
		{"abcdef", "6 cells wide, the pane 5"},
		{"a\tb", "control character U+0009"},
		{"a" + esc + "[38;2", "unterminated escape sequence"},
	} {
		if _, err := Parse(tc.capture, 5); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tc.capture, err, tc.want)
		}
	}
}

func TestParseSkipsOtherEscapes(t *testing.T) {
	s, err := Parse(esc+"]8;;http://x"+esc+"\\ab"+esc+"]8;;\x07"+esc+"[2Kc", 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Lines()[0]; got != "abc" {
		t.Errorf("text %q", got)
	}
}

func TestReplaceKeepsStyles(t *testing.T) {
	s, err := Parse("id "+esc+"[1m3f2a"+esc+"[0m9c1b, 3f2a9c1b", 22)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Replace("3f2a9c1b", "0123abcd")
	if err != nil || n != 2 {
		t.Fatalf("replaced %d: %v", n, err)
	}
	if got := s.Lines()[0]; got != "id 0123abcd, 0123abcd" {
		t.Errorf("text %q", got)
	}
	if !s.Rows[0][3].Style.Bold || s.Rows[0][7].Style.Bold {
		t.Error("the styles of the replaced cells changed")
	}
	if _, err := s.Replace("abc", "ab"); err == nil {
		t.Error("a replacement of another length was accepted")
	}
	if _, err := s.Replace("ab", "界b"); err == nil {
		t.Error("a wide replacement was accepted")
	}
}

func TestHTML(t *testing.T) {
	s, err := Parse(esc+"[38;2;255;0;0m<a>"+esc+"[0m "+esc+"[7m✓"+esc+"[0m界", 7)
	if err != nil {
		t.Fatal(err)
	}
	theme := Theme{FG: RGB(200, 200, 200), BG: RGB(20, 20, 20), Font: "DejaVu Sans Mono", Advance: 0.6, FontSize: 10, LineHeight: 12, Padding: 5}
	page := string(s.HTML(theme))
	for _, want := range []string{
		`<span style="color:#ff0000">&lt;a&gt;</span>`,
		`<span style="color:#141414;background:#c8c8c8"><span class="c">✓</span></span>`, // reverse video of the defaults
		`<span class="c c2">界</span>`,
		`background:#141414`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if w, h := theme.Size(s); w != 5+42+5 || h != 5+12+5 {
		t.Errorf("size %dx%d", w, h)
	}
}

func TestHTMLDrawsBoxLinesAcrossTheCell(t *testing.T) {
	s, err := Parse("┌─│╯═", 5)
	if err != nil {
		t.Fatal(err)
	}
	page := string(s.HTML(Theme{Font: "DejaVu Sans Mono", LineHeight: 19}))
	line := "linear-gradient(currentColor,currentColor) "
	for _, want := range []string{
		`<span class="c" style="background:` + line + `50% 100%/1px 50% no-repeat,` + line + `100% 50%/50% 1px no-repeat"></span>`, // ┌: down and right
		`<span class="c" style="background:` + line + `0 50%/50% 1px no-repeat,` + line + `100% 50%/50% 1px no-repeat"></span>`,    // ─
		`<span class="c" style="background:` + line + `50% 0/1px 50% no-repeat,` + line + `50% 100%/1px 50% no-repeat"></span>`,    // │
		`<span class="c" style="background:` + line + `50% 0/1px 50% no-repeat,` + line + `0 50%/50% 1px no-repeat"></span>`,       // ╯: up and left
		`<span class="c">═</span>`, // not drawn: left to the font
		`.r>span,.c{display:inline-block;height:19px;vertical-align:top}`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
}
