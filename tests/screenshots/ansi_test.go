//go:build unix

// Package screenshots makes the README's pictures: it runs Neovim's terminal UI in
// tmux, drives it to what a user sees (a diff from Claude Code, the pending-edit
// signs, the review list), and renders tmux's capture of the screen to PNG with
// headless Chromium. This file turns a capture (`tmux capture-pane -e -p -N`: text
// with SGR colour sequences) into a grid of cells and the grid into an HTML page;
// shots_test.go does the rest (`make screenshots`).
package screenshots

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// Color is a 24-bit colour; Set is false for the terminal's default colour.
type Color struct {
	R, G, B uint8
	Set     bool
}

// RGB makes a set colour.
func RGB(r, g, b uint8) Color { return Color{R: r, G: g, B: b, Set: true} }

// Hex parses "#rrggbb".
func Hex(s string) (Color, error) {
	if len(s) != 7 || s[0] != '#' {
		return Color{}, fmt.Errorf("colour %q is not #rrggbb", s)
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return Color{}, fmt.Errorf("colour %q is not #rrggbb: %v", s, err)
	}
	return RGB(uint8(v>>16), uint8(v>>8), uint8(v)), nil
}

func (c Color) css() string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// mix is c moved part of the way (0..1) towards d.
func (c Color) mix(d Color, part float64) Color {
	m := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + (float64(b)-float64(a))*part)) }
	return RGB(m(c.R, d.R), m(c.G, d.G), m(c.B, d.B))
}

// Style is how a cell is drawn.
type Style struct {
	FG, BG                                                Color
	Bold, Dim, Italic, Underline, Reverse, Hidden, Strike bool
}

// Cell is one column of the screen. A wide character takes two cells: the first
// holds it (Width 2), the second is empty with Width 0.
type Cell struct {
	Text  string
	Width int
	Style Style
}

// Screen is a captured terminal screen, Rows of Cols cells each.
type Screen struct {
	Cols int
	Rows [][]Cell
}

// Parse reads a capture of a cols-wide pane. SGR state carries over from one line to
// the next, as tmux writes it; other escape sequences are skipped. A line wider than
// cols is an error: the grid would no longer line up with what tmux showed.
func Parse(capture string, cols int) (*Screen, error) {
	s := &Screen{Cols: cols}
	var st Style
	lines := strings.Split(strings.TrimSuffix(capture, "\n"), "\n")
	for n, line := range lines {
		var row []Cell
		for i := 0; i < len(line); {
			if line[i] == 0x1b {
				next, sgr, ok := escape(line, i)
				if !ok {
					return nil, fmt.Errorf("line %d: unterminated escape sequence at byte %d: %q", n+1, i, line[i:])
				}
				if sgr != nil {
					st = applySGR(st, sgr)
				}
				i = next
				continue
			}
			r, size := utf8.DecodeRuneInString(line[i:])
			i += size
			if r == '\t' || r == '\r' || unicode.IsControl(r) {
				return nil, fmt.Errorf("line %d: control character %U in the capture (capture with tmux capture-pane -e -p -N)", n+1, r)
			}
			if unicode.In(r, unicode.Mn, unicode.Me) && len(row) > 0 {
				last := len(row) - 1
				for last > 0 && row[last].Width == 0 {
					last--
				}
				row[last].Text += string(r) // a combining mark joins the character before it
				continue
			}
			w := runeWidth(r)
			row = append(row, Cell{Text: string(r), Width: w, Style: st})
			if w == 2 {
				row = append(row, Cell{Style: st})
			}
		}
		if len(row) > cols {
			return nil, fmt.Errorf("line %d is %d cells wide, the pane %d: %q", n+1, len(row), cols, line)
		}
		for len(row) < cols { // cells tmux left out are blank
			row = append(row, Cell{Text: " ", Width: 1})
		}
		s.Rows = append(s.Rows, row)
	}
	return s, nil
}

// escape reads the escape sequence at line[i]: it returns the index after it, and
// the parameters of an SGR sequence (CSI ... m), else nil.
func escape(line string, i int) (next int, sgr []string, ok bool) {
	if i+1 >= len(line) {
		return 0, nil, false
	}
	switch line[i+1] {
	case '[': // CSI: parameters, intermediates, one final byte in @..~
		for j := i + 2; j < len(line); j++ {
			if c := line[j]; c >= 0x40 && c <= 0x7e {
				if c != 'm' {
					return j + 1, nil, true
				}
				params := line[i+2 : j]
				if params == "" {
					params = "0"
				}
				return j + 1, strings.Split(params, ";"), true
			}
		}
		return 0, nil, false
	case ']', 'P', '_', '^': // strings, ended by BEL or ST
		for j := i + 2; j < len(line); j++ {
			if line[j] == 0x07 {
				return j + 1, nil, true
			}
			if line[j] == 0x1b && j+1 < len(line) && line[j+1] == '\\' {
				return j + 2, nil, true
			}
		}
		return 0, nil, false
	default:
		return i + 2, nil, true
	}
}

// applySGR applies one SGR sequence's parameters (";"-separated; a parameter may
// have ":"-separated parts, as in 4:3 or 38:2::r:g:b).
func applySGR(st Style, params []string) Style {
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			return -1
		}
		return n
	}
	// The parameters that switch one attribute on or off (21, a double underline, is
	// drawn single; 22 ends both bold and dim).
	switches := []struct {
		attr    *bool
		on, off int
	}{
		{&st.Bold, 1, 22}, {&st.Dim, 2, 22}, {&st.Italic, 3, 23}, {&st.Underline, 21, 24},
		{&st.Reverse, 7, 27}, {&st.Hidden, 8, 28}, {&st.Strike, 9, 29},
	}
	for k := 0; k < len(params); k++ {
		parts := strings.Split(params[k], ":")
		p := num(parts[0])
		for _, sw := range switches {
			switch p {
			case sw.on:
				*sw.attr = true
			case sw.off:
				*sw.attr = false
			}
		}
		switch {
		case p == 0 || parts[0] == "":
			st = Style{}
		case p == 4:
			st.Underline = len(parts) < 2 || parts[1] != "0"
		case p >= 30 && p <= 37:
			st.FG = palette(p - 30)
		case p >= 40 && p <= 47:
			st.BG = palette(p - 40)
		case p >= 90 && p <= 97:
			st.FG = palette(p - 90 + 8)
		case p >= 100 && p <= 107:
			st.BG = palette(p - 100 + 8)
		case p == 39:
			st.FG = Color{}
		case p == 49:
			st.BG = Color{}
		case p == 38 || p == 48 || p == 58:
			var c Color
			if len(parts) > 1 { // 38:5:n, 38:2:r:g:b or 38:2:colourspace:r:g:b
				c = extendedColor(parts[1:], num)
			} else { // 38;5;n or 38;2;r;g;b: the parts are the next parameters
				n := 2
				if k+1 < len(params) && num(params[k+1]) == 2 {
					n = 4
				}
				end := min(k+1+n, len(params))
				c = extendedColor(params[k+1:end], num)
				k = end - 1
			}
			if p == 38 {
				st.FG = c
			} else if p == 48 {
				st.BG = c
			} // 58, the underline colour, is not drawn
		}
	}
	return st
}

func extendedColor(parts []string, num func(string) int) Color {
	if len(parts) == 0 {
		return Color{}
	}
	switch num(parts[0]) {
	case 5:
		if len(parts) > 1 && num(parts[1]) >= 0 && num(parts[1]) < 256 {
			return palette(num(parts[1]))
		}
	case 2:
		rgb := parts[1:]
		if len(rgb) == 4 { // with a colour space id first
			rgb = rgb[1:]
		}
		if len(rgb) == 3 {
			r, g, b := num(rgb[0]), num(rgb[1]), num(rgb[2])
			if r >= 0 && r < 256 && g >= 0 && g < 256 && b >= 0 && b < 256 {
				return RGB(uint8(r), uint8(g), uint8(b))
			}
		}
	}
	return Color{}
}

// basic16 are xterm's first 16 colours.
var basic16 = [16]Color{
	RGB(0, 0, 0), RGB(205, 0, 0), RGB(0, 205, 0), RGB(205, 205, 0),
	RGB(0, 0, 238), RGB(205, 0, 205), RGB(0, 205, 205), RGB(229, 229, 229),
	RGB(127, 127, 127), RGB(255, 0, 0), RGB(0, 255, 0), RGB(255, 255, 0),
	RGB(92, 92, 255), RGB(255, 0, 255), RGB(0, 255, 255), RGB(255, 255, 255),
}

// palette is xterm's 256-colour palette.
func palette(n int) Color {
	switch {
	case n < 16:
		return basic16[n]
	case n < 232:
		n -= 16
		level := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + 40*v)
		}
		return RGB(level(n/36), level(n/6%6), level(n%6))
	default:
		v := uint8(8 + 10*(n-232))
		return RGB(v, v, v)
	}
}

// runeWidth is the number of cells r takes, as tmux counts East Asian wide ones.
func runeWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// Lines is the text of each row, trailing blanks removed.
func (s *Screen) Lines() []string {
	out := make([]string, len(s.Rows))
	for i, row := range s.Rows {
		var b strings.Builder
		for _, c := range row {
			b.WriteString(c.Text)
		}
		out[i] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// Contains tells whether some row holds text.
func (s *Screen) Contains(text string) bool {
	for _, l := range s.Lines() {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}

// Replace puts repl over every occurrence of old on the screen, keeping each cell's
// style; both must be as wide, one cell per character. It returns the count. It
// masks what changes from run to run (ids, times) with fixed values.
func (s *Screen) Replace(old, repl string) (int, error) {
	oldR, newR := []rune(old), []rune(repl)
	if len(oldR) == 0 || len(oldR) != len(newR) {
		return 0, fmt.Errorf("replace %q with %q: both must have the same number of characters", old, repl)
	}
	for _, r := range append(oldR, newR...) {
		if runeWidth(r) != 1 {
			return 0, fmt.Errorf("replace %q with %q: %q is not one cell wide", old, repl, r)
		}
	}
	count := 0
	for _, row := range s.Rows {
	next:
		for i := 0; i+len(oldR) <= len(row); i++ {
			for j, r := range oldR {
				if row[i+j].Text != string(r) {
					continue next
				}
			}
			for j, r := range newR {
				row[i+j].Text = string(r)
			}
			count++
			i += len(oldR) - 1
		}
	}
	return count, nil
}

// Theme is how a screen is drawn: the terminal's default colours (the colour
// scheme's Normal) and the font.
type Theme struct {
	FG, BG     Color
	Font       string  // a monospace font family
	Fallback   string  // a font family for the characters Font lacks
	Advance    float64 // its advance width, in ems
	FontSize   float64 // px
	LineHeight float64 // px
	Padding    int     // px around the screen
}

// Size is the page (and PNG) size that holds the screen exactly.
func (t Theme) Size(s *Screen) (w, h int) {
	w = 2*t.Padding + int(math.Ceil(float64(s.Cols)*t.Advance*t.FontSize))
	h = 2*t.Padding + int(math.Ceil(float64(len(s.Rows))*t.LineHeight))
	return w, h
}

// HTML is a page that shows the screen cell for cell: runs of one style are spans a
// row high (so backgrounds of rows meet), every character outside ASCII sits in a box
// as wide as its cells (so a fallback font's glyph cannot shift the columns after it),
// and box-drawing lines are drawn across the whole cell, joining the next rows' as in
// a terminal.
func (s *Screen) HTML(t Theme) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html><head><meta charset="utf-8"><style>
html,body{margin:0;background:%s;overflow:hidden}
.t{padding:%dpx;font-family:%q,%q,monospace;font-size:%gpx;line-height:%gpx;color:%s;white-space:pre;font-variant-ligatures:none}
.r{height:%gpx}
.r>span,.c{display:inline-block;height:%gpx;vertical-align:top}
.c{width:1ch;text-align:center}
.c2{width:2ch}
</style></head><body><div class="t">`, t.BG.css(), t.Padding, t.Font, t.Fallback, t.FontSize, t.LineHeight, t.FG.css(), t.LineHeight, t.LineHeight)
	for _, row := range s.Rows {
		b.WriteString(`<div class="r">`)
		for i := 0; i < len(row); {
			st := row[i].Style
			j := i
			for j < len(row) && row[j].Style == st {
				j++
			}
			b.WriteString(`<span style="` + t.css(st) + `">`)
			for _, c := range row[i:j] {
				r, _ := utf8.DecodeRuneInString(c.Text)
				switch {
				case c.Width == 0:
				case len(c.Text) == 1:
					b.WriteString(html.EscapeString(c.Text))
				case boxLines[r] != 0:
					b.WriteString(`<span class="c" style="background:` + boxCSS(boxLines[r]) + `"></span>`)
				default:
					class := "c"
					if c.Width == 2 {
						class = "c c2"
					}
					b.WriteString(`<span class="` + class + `">` + html.EscapeString(c.Text) + `</span>`)
				}
			}
			b.WriteString(`</span>`)
			i = j
		}
		b.WriteString("</div>") // no newline between rows: white-space:pre would draw it
	}
	b.WriteString("</div></body></html>\n")
	return []byte(b.String())
}

// The arms of a box-drawing character, from the middle of its cell.
const (
	up = 1 << iota
	down
	left
	right
	heavy
)

// boxLines are the box-drawing characters Neovim draws (window separators, float
// borders, rounded or not); others are left to the font.
var boxLines = map[rune]int{
	'│': up | down, '─': left | right, '┃': up | down | heavy, '━': left | right | heavy,
	'┌': down | right, '┐': down | left, '└': up | right, '┘': up | left,
	'╭': down | right, '╮': down | left, '╰': up | right, '╯': up | left,
	'├': up | down | right, '┤': up | down | left, '┬': left | right | down, '┴': left | right | up,
	'┼': up | down | left | right,
}

// boxCSS draws a box-drawing character's arms as backgrounds of its cell.
func boxCSS(arms int) string {
	w := "1px"
	if arms&heavy != 0 {
		w = "2px"
	}
	line := "linear-gradient(currentColor,currentColor) "
	var parts []string
	for _, a := range []struct {
		bit      int
		position string
		size     string
	}{
		{up, "50% 0", w + " 50%"},
		{down, "50% 100%", w + " 50%"},
		{left, "0 50%", "50% " + w},
		{right, "100% 50%", "50% " + w},
	} {
		if arms&a.bit != 0 {
			parts = append(parts, line+a.position+"/"+a.size+" no-repeat")
		}
	}
	return strings.Join(parts, ",")
}

// css is a style's inline CSS, with the terminal's defaults resolved.
func (t Theme) css(st Style) string {
	fg, bg := st.FG, st.BG
	if !fg.Set {
		fg = t.FG
	}
	if !bg.Set {
		bg = t.BG
	}
	if st.Reverse {
		fg, bg = bg, fg
	}
	if st.Dim {
		fg = fg.mix(bg, 0.5)
	}
	if st.Hidden {
		fg = bg
	}
	var css []string
	if fg != t.FG {
		css = append(css, "color:"+fg.css())
	}
	if bg != t.BG {
		css = append(css, "background:"+bg.css())
	}
	if st.Bold {
		css = append(css, "font-weight:bold")
	}
	if st.Italic {
		css = append(css, "font-style:italic")
	}
	var deco []string
	if st.Underline {
		deco = append(deco, "underline")
	}
	if st.Strike {
		deco = append(deco, "line-through")
	}
	if len(deco) > 0 {
		css = append(css, "text-decoration:"+strings.Join(deco, " "))
	}
	return strings.Join(css, ";")
}
