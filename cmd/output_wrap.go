package cmd

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// wrapBreak reports whether a word too long for a line may break after r
// (inside "missing-index,padded-index" or a path).
func wrapBreak(r rune) bool { return r == ' ' || r == ',' || r == '-' || r == '/' }

// minWrapWidth is the narrowest a line of text (a footer, the text under a
// row, a timeline's summary) is wrapped to: on a terminal narrower than
// that (COLUMNS=1), a line is cut by the terminal as a table wider than it
// is, rather than made a column of single words.
const minWrapWidth = 40

// wrapText breaks text into lines of at most w columns between words: at
// a space where it can. Only a word longer than a line is broken inside,
// after a comma, a slash or a hyphen that follows a letter (missing-index,
// not a date), else between two characters. A line never begins with the
// punctuation that ended a word ("(78 bytes)" and its comma stay together,
// as do "MiB/s"), nor a noun or unit after its number (countAt).
func wrapText(text string, w int) []string {
	runes := []rune(text)
	var lines []string
	for _, s := range wrapSpans(runes, w, false) {
		lines = append(lines, string(runes[s[0]:s[1]]))
	}
	return lines
}

// wrapSpans is wrapText (with whole, wrapIndented: never inside a word,
// one wider than the line is the whole of a line of its own) as the [start, end) rune
// ranges of text's lines (the blanks between two lines in none of them).
func wrapSpans(runes []rune, w int, whole bool) [][2]int {
	var spans [][2]int
	start := 0
	width := 0
	for _, r := range runes {
		width += runeWidth(r)
	}
	for w > 0 && width > w {
		cut := lineCut(runes, start, w, whole)
		end := cut
		for end > start && runes[end-1] == ' ' {
			end--
		}
		spans = append(spans, [2]int{start, end})
		for cut < len(runes) && runes[cut] == ' ' {
			cut++
		}
		for _, r := range runes[start:cut] {
			width -= runeWidth(r)
		}
		start = cut
	}
	if start < len(runes) || len(spans) == 0 {
		spans = append(spans, [2]int{start, len(runes)})
	}
	return spans
}

// lineCut is where the line of width w starting at runes[start] ends: at
// the last blank between two words, else between a number and its noun
// (taken when there is no other), else after the last break inside a
// word (with whole, after the first word, however wide), else where the
// width runs out (at least one rune).
func lineCut(runes []rune, start, w int, whole bool) int {
	used, cut, space, glued, inside := 0, start, -1, -1, -1
	for cut < len(runes) && used+runeWidth(runes[cut]) <= w {
		r := runes[cut]
		used += runeWidth(r)
		switch {
		case r == ' ' && cut > start && runes[cut-1] != ' ' && countAt(runes, cut+1):
			glued = cut
		case r == ' ' && cut > start && runes[cut-1] != ' ':
			space = cut
		case r != ' ' && wrapBreak(r) && (r != '-' || cut > start && unicode.IsLetter(runes[cut-1])):
			inside = cut + 1
		}
		cut++
	}
	if cut < len(runes) && runes[cut] == ' ' && cut > start { // the line is full at a word's end
		if countAt(runes, cut+1) {
			glued = cut
		} else {
			space = cut
		}
	}
	switch {
	case cut == len(runes):
	case space > start:
		cut = space
	case glued > start:
		cut = glued
	case whole: // the first word, to its end
		cut = start
		for cut < len(runes) && runes[cut] == ' ' {
			cut++
		}
		for cut < len(runes) && runes[cut] != ' ' {
			cut++
		}
	case inside > start:
		cut = inside
	case cut == start:
		cut = start + 1
	}
	return cut
}

// countAt reports whether runes[i:] is a word after a number and a blank:
// a count and its noun, a size and its unit ("2 errors", "114.8 MiB/s"),
// which a line does not break between.
func countAt(runes []rune, i int) bool {
	if i < 2 || i >= len(runes) || !unicode.IsDigit(runes[i-2]) || !unicode.IsLetter(runes[i]) {
		return false
	}
	for _, r := range runes[i:] {
		switch {
		case r == ' ':
			return true
		case unicode.IsDigit(r):
			return false // a name, not a noun
		}
	}
	return true
}

// wrapIndented wraps a line of text (a footer line, a step of a --trace
// story) between words (wrapWords) to w columns, and no fewer than
// minWrapWidth: the lines after the
// first are indented four columns more than it is, so that a wrapped step
// reads as one. A line coloured with ANSI codes is wrapped by its visible
// text, each line carrying the colours in force where it starts and
// resetting them at its end.
func wrapIndented(text string, w int) []string {
	if w <= 0 {
		return []string{text}
	}
	w = max(w, minWrapWidth)
	runes, codes := splitANSI(text)
	indent := 0
	for indent < len(runes) && runes[indent] == ' ' {
		indent++
	}
	spans := wrapSpans(runes, w, true)
	pads := make([]int, len(spans))
	if indent+4 <= w/2 && len(spans) > 1 {
		first := spans[0]
		rest := first[1]
		for rest < len(runes) && runes[rest] == ' ' {
			rest++
		}
		spans = [][2]int{first}
		for _, s := range wrapSpans(runes[rest:], w-indent-4, true) {
			spans = append(spans, [2]int{s[0] + rest, s[1] + rest})
		}
		pads = make([]int, len(spans))
		for i := 1; i < len(pads); i++ {
			pads[i] = indent + 4
		}
	}
	if codes == nil {
		lines := make([]string, len(spans))
		for i, s := range spans {
			lines[i] = strings.Repeat(" ", pads[i]) + string(runes[s[0]:s[1]])
		}
		return lines
	}
	return styledLines(runes, codes, spans, pads)
}

// splitANSI separates text's visible runes from its ANSI escape sequences:
// codes[i] holds the sequences just before runes[i], codes[len(runes)]
// those after the last. codes is nil when text has none.
func splitANSI(text string) (runes []rune, codes []string) {
	if !strings.Contains(text, "\x1b") {
		return []rune(text), nil
	}
	var pending strings.Builder
	for i := 0; i < len(text); {
		if text[i] == '\x1b' && i+1 < len(text) && text[i+1] == '[' {
			j := i + 2
			for j < len(text) && (text[j] < 0x40 || text[j] > 0x7e) {
				j++
			}
			j = min(j+1, len(text))
			pending.WriteString(text[i:j])
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		runes = append(runes, r)
		codes = append(codes, pending.String())
		pending.Reset()
		i += size
	}
	return runes, append(codes, pending.String())
}

// closesStyle reports whether the last SGR sequence of c only resets
// attributes (0, or the specific resets fatih/color closes a colour with:
// 22 bold and dim, 23 to 29, 39 and 49 the default colours).
func closesStyle(c string) bool {
	i := strings.LastIndex(c, "\x1b[")
	if i < 0 || !strings.HasSuffix(c, "m") {
		return false
	}
	for _, p := range strings.Split(c[i+2:len(c)-1], ";") {
		switch p {
		case "", "0", "22", "23", "24", "25", "27", "28", "29", "39", "49":
		default:
			return false
		}
	}
	return true
}

// styledLines draws the spans of a coloured text: each line starts with
// the sequences in force (those since the last reset) and ends with a
// reset when any is.
func styledLines(runes []rune, codes []string, spans [][2]int, pads []int) []string {
	var active strings.Builder // the sequences since the last reset
	apply := func(c string) {
		if c == "" {
			return
		}
		if closesStyle(c) {
			active.Reset()
			return
		}
		active.WriteString(c)
	}
	lines := make([]string, len(spans))
	next := 0 // the first rune whose codes are not applied yet
	for i, s := range spans {
		for ; next < s[0]; next++ {
			apply(codes[next])
		}
		var b strings.Builder
		b.WriteString(strings.Repeat(" ", pads[i]))
		b.WriteString(active.String())
		for ; next < s[1]; next++ {
			b.WriteString(codes[next])
			apply(codes[next])
			b.WriteRune(runes[next])
		}
		if i == len(spans)-1 {
			for ; next <= len(runes); next++ {
				b.WriteString(codes[next])
				apply(codes[next])
			}
		}
		if active.Len() > 0 {
			b.WriteString("\x1b[0m")
		}
		lines[i] = b.String()
	}
	return lines
}

// displayWidth is the number of terminal columns text takes, as
// tablewriter measures it to pad a cell (twwidth.Width: the sum of its
// runes' widths, ANSI codes left out), so that the widths fitted here are
// those tablewriter draws.
func displayWidth(text string) int { return twwidth.Width(text) }

// runeWidth is displayWidth of one rune.
func runeWidth(r rune) int { return twwidth.Width(string(r)) }
