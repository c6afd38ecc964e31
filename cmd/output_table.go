package cmd

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// fitRule says how a column gives way when a default table is wider than
// the terminal (TerminalWidth). Columns with fitNone (numbers, offsets,
// times) are never cut: they must be copyable.
type fitRule int

const (
	fitNone  fitRule = iota
	fitElide         // a name or path: its middle is replaced by "…", its start and end (topic, partition number, file) kept
	fitWrap          // text: broken into lines at spaces and commas
	// fitBelow (the last column only): text wrapped as fitWrap when that
	// leaves it belowMinWidth columns; on a narrower terminal it leaves
	// the row and is drawn under it, indented, across the whole width.
	fitBelow
)

// tableColumn is the layout of one column of a drawn table.
type tableColumn struct {
	right     bool // right-aligned (numbers)
	fit       fitRule
	omitEmpty bool // left out when every cell is empty
}

// belowMinWidth is the narrowest a fitBelow column is wrapped in before it
// moves under its row.
const belowMinWidth = 40

// minFitWidth is the narrowest a fitted column is made (unless its
// header is wider).
const minFitWidth = 10

// writeTable draws a borderless table (kubectl style: no rules, two spaces
// between columns, no trailing blanks), headed by header unless it is nil,
// then the footer lines, which the caller has escaped (escapeControl).
//
// In the default table (-o table), when the terminal's width is known and
// the table is wider, the columns that may give way (fitElide, fitWrap)
// are narrowed, widest first, down to minFitWidth; a table that is still
// wider is drawn as it is. -o wide is never fitted: it shows every field in
// full, as kubectl's wide output does.
//
// The widths are chosen and the cells fitted here; tablewriter pads,
// aligns and separates them (drawRows).
func writeTable(ios *IOStreams, header []string, layout []tableColumn, rows [][]tableCellText, footer []string) error {
	header, layout, rows = omitEmptyColumns(header, layout, rows)
	widths := make([]int, len(layout))
	for i, h := range header {
		widths[i] = displayWidth(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], displayWidth(c.text))
		}
	}
	limit := ios.TerminalWidth()
	if ios.Format() != FormatTable {
		limit = 0
	}
	// below is the text drawn under each row (fitBelow), when the last
	// column left the table.
	var below []string
	if n := len(layout); limit > 0 && n > 1 && layout[n-1].fit == fitBelow {
		rest := 2 * (n - 1)
		for _, w := range widths[:n-1] {
			rest += w
		}
		if rest+belowMinWidth > limit {
			below = make([]string, len(rows))
			for i, r := range rows {
				below[i] = r[n-1].text
				rows[i] = r[:n-1]
			}
			layout, widths = layout[:n-1], widths[:n-1]
			if header != nil {
				header = header[:n-1]
			}
		}
	}
	if limit > 0 {
		fitWidths(widths, fitFloors(header, layout, rows), layout, limit)
	}
	var out bytes.Buffer
	if len(layout) > 0 && (header != nil || len(rows) > 0) {
		if err := drawRows(&out, header, layout, widths, rows, below, limit); err != nil {
			return err
		}
	}
	for _, f := range footer {
		lines := []string{f}
		if limit > 0 {
			lines = wrapIndented(f, limit)
		}
		for _, l := range lines {
			out.WriteString(l)
			out.WriteByte('\n')
		}
	}
	_, err := ios.Out.Write(out.Bytes())
	return err
}

// printFooter writes lines as the footer of a table drawn before it: in
// the table format wrapped between words to the terminal (wrapIndented).
func printFooter(ios *IOStreams, lines ...string) error {
	return writeTable(ios, nil, nil, nil, lines)
}

// drawRows draws the header (unless nil) and rows into out through
// tablewriter in columns of the given widths, which every fitted cell
// fits (tablewriter pads and aligns, it never has to cut), and under each
// row its text of below (if any), wrapped to limit and indented.
//
// Each physical line of a row (a wrapped cell makes a row several lines
// tall) is one tablewriter row: tablewriter streams with fixed widths, so
// that the text under a row can be written between its rows and no chunk
// is held twice.
func drawRows(out *bytes.Buffer, header []string, layout []tableColumn, widths []int, rows [][]tableCellText, below []string, limit int) error {
	shown, lead := shownColumns(widths)
	cellText := func(j int, text string) string { return strings.Repeat(" ", lead[j]) + text }
	lines := &trimmedLines{out: out}
	t := newTableWriter(lines, layout, widths, shown, lead)
	if err := t.Start(); err != nil {
		return fmt.Errorf("drawing table: %w", err)
	}
	if header != nil {
		h := make([]string, len(shown))
		for j, i := range shown {
			h[j] = cellText(j, header[i])
		}
		t.Header(h)
	}
	line := make([]string, len(shown))
	parts := make([][]string, len(layout))
	for k, r := range rows {
		// A cell may become several lines (wrapped); the row takes as
		// many lines as its tallest cell.
		height := 1
		for i, c := range r {
			parts[i] = fitCell(c.text, widths[i], layout[i].fit)
			height = max(height, len(parts[i]))
		}
		for n := 0; n < height; n++ {
			for j, i := range shown {
				line[j] = cellText(j, cellLine(r[i], parts[i], n))
			}
			if err := t.Append(line); err != nil {
				return fmt.Errorf("drawing table: row %d: %w", k, err)
			}
		}
		if below != nil && below[k] != "" {
			for _, l := range wrapText(below[k], max(limit, minWrapWidth)-4) {
				lines.WriteString("    " + l + "\n")
			}
		}
	}
	if err := t.Close(); err != nil {
		return fmt.Errorf("drawing table: %w", err)
	}
	if lines.partial.Len() > 0 { // tablewriter ends its lines; in case not
		lines.WriteString("\n")
	}
	return nil
}

// cellLine is line n of a cell fitted into parts ("" past its last),
// coloured after fitting: tablewriter measures a cell without its ANSI
// codes, and pads outside them.
func cellLine(c tableCellText, parts []string, n int) string {
	text := ""
	if n < len(parts) {
		text = parts[n]
	}
	if c.color != nil && text != "" {
		text = c.color.Sprint(text)
	}
	return text
}

// shownColumns are the columns given to tablewriter, and the blanks to
// lead each with: tablewriter leaves out a column of width 0 (all its
// cells empty, in a chunk drawn without its header) together with the
// blanks around it, so those blanks lead the next column drawn instead.
func shownColumns(widths []int) (shown, lead []int) {
	blanks := 0
	for i, w := range widths {
		if w == 0 {
			blanks += 2
			continue
		}
		shown, lead = append(shown, i), append(lead, blanks)
		blanks = 0
	}
	if len(shown) == 0 { // every line blank: one column of one blank, trimmed
		shown, lead = []int{0}, []int{0}
	}
	return shown, lead
}

// newTableWriter is the tablewriter that draws the shown columns at their
// widths, kubectl style: no borders, no rules, no padding inside the
// cells, two blanks between columns; trailing blanks are trimmed
// (trimmedLines).
func newTableWriter(lines *trimmedLines, layout []tableColumn, widths, shown, lead []int) *tablewriter.Table {
	fixed := tw.NewMapper[int, int]()
	align := make([]tw.Align, len(shown))
	for j, i := range shown {
		align[j] = tw.AlignLeft
		if layout[i].right {
			align[j] = tw.AlignRight
		}
		fixed.Set(j, max(widths[i], 1)+lead[j])
	}
	return tablewriter.NewTable(lines,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbolCustom("kseg").WithColumn("  "),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.On, BetweenRows: tw.Off, ShowHeader: tw.Off, ShowFooter: tw.Off},
				Lines:      tw.LinesNone,
			},
		})),
		tablewriter.WithPadding(tw.Padding{Overwrite: true}), // none
		tablewriter.WithHeaderAutoFormat(tw.Off),             // "base_offset", not "BASE OFFSET"
		tablewriter.WithTrimSpace(tw.Off),                    // cells exactly as given
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithStreaming(tw.StreamConfig{Enable: true}),
		tablewriter.WithWidths(tw.CellWidth{PerColumn: fixed}),
	)
}

// trimmedLines writes the lines written to it to out without their
// trailing blanks (the padding of a table's last column).
type trimmedLines struct {
	out     *bytes.Buffer
	partial bytes.Buffer // the line being written, up to its newline
}

func (w *trimmedLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial.Write(p)
			break
		}
		w.partial.Write(p[:i])
		w.out.Write(bytes.TrimRight(w.partial.Bytes(), " "))
		w.out.WriteByte('\n')
		w.partial.Reset()
		p = p[i+1:]
	}
	return n, nil
}

func (w *trimmedLines) WriteString(s string) { _, _ = w.Write([]byte(s)) }

// maxWordFloor caps how wide a wrapped column is kept for its longest
// word: a longer word is broken.
const maxWordFloor = 20

// omitEmptyColumns drops the omitEmpty columns whose cells are all empty.
func omitEmptyColumns(header []string, layout []tableColumn, rows [][]tableCellText) ([]string, []tableColumn, [][]tableCellText) {
	keep := make([]bool, len(layout))
	drop := false
	for i, l := range layout {
		keep[i] = !l.omitEmpty
		for _, r := range rows {
			keep[i] = keep[i] || r[i].text != ""
		}
		drop = drop || !keep[i]
	}
	if !drop {
		return header, layout, rows
	}
	pick := func(n int, f func(i int)) {
		for i := range n {
			if keep[i] {
				f(i)
			}
		}
	}
	var h []string
	if header != nil {
		pick(len(header), func(i int) { h = append(h, header[i]) })
	}
	var l []tableColumn
	pick(len(layout), func(i int) { l = append(l, layout[i]) })
	out := make([][]tableCellText, len(rows))
	for k, r := range rows {
		pick(len(r), func(i int) { out[k] = append(out[k], r[i]) })
	}
	return h, l, out
}

// fitFloors are the narrowest widths the columns that give way are made:
// minFitWidth, the header's width, and for a wrapped column its longest
// word with its comma (up to maxWordFloor), so that "missing-index," is
// not broken: words are split at blanks and commas only, a status word's
// hyphen being inside it.
func fitFloors(header []string, layout []tableColumn, rows [][]tableCellText) []int {
	floors := make([]int, len(layout))
	for i, l := range layout {
		floors[i] = minFitWidth
		if header != nil {
			floors[i] = max(floors[i], displayWidth(header[i]))
		}
		if l.fit != fitWrap && l.fit != fitBelow {
			continue
		}
		for _, r := range rows {
			for _, word := range strings.FieldsFunc(r[i].text, func(r rune) bool { return r == ' ' || r == ',' }) {
				floors[i] = max(floors[i], min(maxWordFloor, displayWidth(word)+1))
			}
		}
	}
	return floors
}

// fitWidths narrows the columns that may give way until the table's width
// (cells plus two blanks between columns) is at most limit, or every such
// column is at its floor (fitFloors).
func fitWidths(widths, floors []int, layout []tableColumn, limit int) {
	total := 2 * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	floor := func(i int) int { return floors[i] }
	for total > limit {
		widest := -1
		for i, l := range layout {
			if l.fit != fitNone && widths[i] > floor(i) && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return
		}
		// Narrow the widest to the next widest's width (or as far as
		// needed), so that the columns shrink together.
		next := floor(widest)
		for i, l := range layout {
			if i != widest && l.fit != fitNone && widths[i] < widths[widest] {
				next = max(next, widths[i])
			}
		}
		cut := min(widths[widest]-next, total-limit)
		if cut <= 0 {
			cut = 1
		}
		widths[widest] -= cut
		total -= cut
	}
}

// fitCell is a cell's text as the lines it is drawn on in a column of
// width w.
func fitCell(text string, w int, rule fitRule) []string {
	if displayWidth(text) <= w {
		return []string{text}
	}
	switch rule {
	case fitElide:
		return []string{elideMiddle(text, w)}
	case fitWrap, fitBelow:
		return wrapText(text, w)
	}
	return []string{text}
}

// elideMiddle shortens text to w columns by replacing its middle with
// "…", keeping a little more of the end (a partition number, a file name)
// than of the start.
func elideMiddle(text string, w int) string {
	runes := []rune(text)
	tail := (w - 1 + 1) / 2 // columns for the end
	head := w - 1 - tail
	var start, end []rune
	for i, width := 0, 0; i < len(runes) && width+runeWidth(runes[i]) <= head; i++ {
		width += runeWidth(runes[i])
		start = runes[:i+1]
	}
	for i, width := len(runes)-1, 0; i >= 0 && width+runeWidth(runes[i]) <= tail; i-- {
		width += runeWidth(runes[i])
		end = runes[i:]
	}
	return string(start) + "…" + string(end)
}
