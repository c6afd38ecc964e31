package cmd

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// OutputFormat is the value of -o: chosen once per run, read by the
// renderers below. Run functions hand rows to a lister and never branch on it.
type OutputFormat string

const (
	FormatTable OutputFormat = "table" // the columns an operator scans, fitted to the terminal (default)
	FormatWide  OutputFormat = "wide"  // a table of every field of the JSON form
	FormatJSON  OutputFormat = "json"  // JSON Lines: one object per line
	FormatCSV   OutputFormat = "csv"   // RFC 4180, header row first
	FormatJUnit OutputFormat = "junit" // JUnit XML (verify only)
)

// outputFormats lists the valid values of -o in the order help shows them.
var outputFormats = []OutputFormat{FormatTable, FormatWide, FormatJSON, FormatCSV, FormatJUnit}

// String, Set and Type make *OutputFormat a pflag.Value, so a bad -o value
// is rejected while flags are parsed (exit 2), before any work.
func (f *OutputFormat) String() string { return string(*f) }

func (f *OutputFormat) Set(s string) error {
	for _, v := range outputFormats {
		if s == string(v) {
			*f = v
			return nil
		}
	}
	return fmt.Errorf("valid values are %s", formatList())
}

func (f *OutputFormat) Type() string { return "format" }

func formatList() string {
	names := make([]string, len(outputFormats))
	for i, v := range outputFormats {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// column says how one field of a row of type T is shown in the table and CSV
// views. name is the JSON field name (dotted for a field of a nested object,
// e.g. "batch.base_offset"): the table header and CSV header use it as is,
// so one name means one thing in every format. A column of the default
// table only (view viewTable) is not a JSON field: its name is its own.
type column[T any] struct {
	name  string
	cell  func(T) string
	right bool // right-align in the table (numbers)
	// view says in which forms the column appears (all by default).
	view columnView
	// display, if set, is the cell's text in tables (-o table and wide):
	// a size in KiB, a grouped count, a time. It replaces the reading aid
	// (human). CSV keeps cell's raw value.
	display func(T, *IOStreams) string
	// fit says how the column gives way when the default table is wider
	// than the terminal.
	fit fitRule
	// omitEmpty leaves the column out of a table (chunk) in which every
	// cell is empty (dump-log's record column without --records).
	omitEmpty bool
	// style, if set, colours the table cell when stdout takes colour.
	// Colour is decoration only: CSV and JSON never carry it.
	style func(T) []color.Attribute
	// human, if set, returns a reading aid shown after the value in the
	// table only, in parentheses (a timestamp's RFC 3339 UTC time); ""
	// shows nothing. CSV and JSON keep the raw value alone.
	human func(T) string
}

// columnView says in which forms a column appears: a set of the view*
// bits. The zero value means every form.
type columnView int

const (
	viewTable columnView = 1 << iota // the default table
	viewWide                         // the -o wide table
	viewCSV                          // CSV
	viewAll   columnView = 0         // every form (the zero value)
)

// shown reports whether a column of view v appears in format f.
func (v columnView) shown(f OutputFormat) bool {
	if v == viewAll {
		return true
	}
	switch f {
	case FormatTable:
		return v&viewTable != 0
	case FormatWide:
		return v&viewWide != 0
	default:
		return v&viewCSV != 0
	}
}

// visibleColumns are the columns of format f.
func visibleColumns[T any](columns []column[T], f OutputFormat) []column[T] {
	out := make([]column[T], 0, len(columns))
	for _, c := range columns {
		if c.view.shown(f) {
			out = append(out, c)
		}
	}
	return out
}

// wideOnly marks a column as shown in -o wide and CSV, not in the
// default table.
func wideOnly[T any](c column[T]) column[T] {
	c.view = viewWide | viewCSV
	return c
}

// tableOnly marks a column as shown in the default table only: a view for
// people of fields that wide and CSV show as they are.
func tableOnly[T any](c column[T]) column[T] {
	c.view = viewTable
	return c
}

// wideTableOnly marks a JSON field shown in -o wide but not in CSV (whose
// columns are fixed by the contract).
func wideTableOnly[T any](c column[T]) column[T] {
	c.view = viewWide
	return c
}

// withDisplay sets a column's table text.
func withDisplay[T any](c column[T], display func(T, *IOStreams) string) column[T] {
	c.display = display
	return c
}

// withFit sets how a column gives way to the terminal's width.
func withFit[T any](c column[T], f fitRule) column[T] {
	c.fit = f
	return c
}

// omitIfEmpty leaves the column out of a table in which all its cells are
// empty.
func omitIfEmpty[T any](c column[T]) column[T] {
	c.omitEmpty = true
	return c
}

// textColumn is a left-aligned column of text.
func textColumn[T any](name string, cell func(T) string) column[T] {
	return column[T]{name: name, cell: cell}
}

// intColumn is a right-aligned column of raw integers (no separators, no
// units: offsets and positions must be copyable).
func intColumn[T any, N ~int | ~int8 | ~int16 | ~int32 | ~int64](name string, value func(T) N) column[T] {
	return column[T]{name: name, right: true, cell: func(v T) string { return strconv.FormatInt(int64(value(v)), 10) }}
}

// nullableIntColumn is intColumn for a field that is JSON null when absent
// (a nil pointer): the cell is then empty.
func nullableIntColumn[T any, N ~int | ~int8 | ~int16 | ~int32 | ~int64](name string, value func(T) *N) column[T] {
	return column[T]{name: name, right: true, cell: func(v T) string {
		if p := value(v); p != nil {
			return strconv.FormatInt(int64(*p), 10)
		}
		return ""
	}}
}

// boolColumn is a column of true/false, spelled as in JSON.
func boolColumn[T any](name string, value func(T) bool) column[T] {
	return column[T]{name: name, cell: func(v T) string { return strconv.FormatBool(value(v)) }}
}

// withStyle sets a column's table colour.
func withStyle[T any](c column[T], style func(T) []color.Attribute) column[T] {
	c.style = style
	return c
}

// notFoundStyle colours a "found: false" cell red.
func notFoundStyle[T any](T) []color.Attribute { return []color.Attribute{color.FgRed, color.Bold} }

// timestampColumn is intColumn for milliseconds since the epoch: the table
// shows the RFC 3339 UTC time beside the number (see humanTime).
func timestampColumn[T any](name string, value func(T) int64) column[T] {
	c := intColumn(name, value)
	c.human = func(v T) string { return humanTime(value(v)) }
	return c
}

// maxHumanMillis is the first millisecond of the year 10000, past which
// RFC 3339 has no four-digit year.
const maxHumanMillis = 253402300800000

// humanTime is ms since the epoch as an RFC 3339 time in UTC with
// milliseconds (2023-11-14T22:13:20.000Z), or "" for a negative value
// (Kafka's -1: no timestamp) or one past the year 9999.
func humanTime(ms int64) string {
	if ms < 0 || ms >= maxHumanMillis {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// lister is the one renderer of a list of rows, for the format chosen with -o:
//
//   - json: each Add encodes the row (a struct with explicit snake_case json
//     tags: the contract's fields) as one line, at once;
//   - csv: a header row of the column names, then a row per Add, at once;
//   - table: borderless aligned columns headed by the column names, drawn at
//     Close (widths need every row, so the rows are held in memory until
//     then: a huge listing is better streamed with -o json or csv), then
//     any footer lines.
//
// The columns never depend on whether stdout is a terminal; colour, when on,
// only decorates table cells. Write errors are sticky: the first one stops
// the output and Close returns it.
//
//	l := newLister(ios, columns)
//	for ... { l.Add(row) }
//	l.Footer("padding: %d slots", n)
//	return l.Close()
type lister[T any] struct {
	ios     *IOStreams
	format  OutputFormat
	columns []column[T] // those of format: every one for JSON

	enc *jsonEncoder
	// appendJSON, when set, writes a row's JSON object itself, byte for
	// byte what the encoder writes (a test holds them equal): listings
	// of a million rows (dump-index) otherwise spend most of their time in
	// encoding/json's reflection.
	appendJSON func(T, []byte) []byte
	line       []byte // appendJSON's output, reused
	csv        *csv.Writer
	header     bool              // the CSV header row has been written
	rows       [][]tableCellText // table cells not drawn yet
	drawn      bool              // a chunk of the table (with its header) was drawn
	footer     []string
	empty      string // said instead of the table when no row came (Empty)
	closed     bool
	err        error
}

// newLister returns a lister writing to ios.Out in ios's output format.
func newLister[T any](ios *IOStreams, columns []column[T]) *lister[T] {
	l := &lister[T]{ios: ios, format: ios.Format(), columns: columns}
	if l.format != FormatJSON {
		l.columns = visibleColumns(columns, l.format)
	}
	switch l.format {
	case FormatJSON:
		l.enc = newJSONEncoder(ios)
	case FormatCSV:
		l.csv = csv.NewWriter(ios.Out)
	}
	return l
}

// Add writes (json, csv) or keeps (table) one row.
func (l *lister[T]) Add(row T) {
	if l.err != nil {
		return
	}
	switch l.format {
	case FormatJSON:
		if l.appendJSON != nil {
			l.line = append(l.appendJSON(row, l.line[:0]), '\n')
			_, l.err = l.ios.Out.Write(l.line)
			break
		}
		l.err = l.enc.Encode(row)
	case FormatCSV:
		l.writeCSVHeader()
		l.writeCSV(cells(l.columns, row))
	default:
		l.rows = append(l.rows, tableRow(l.ios, l.columns, row))
		if len(l.rows) >= tableChunkRows {
			l.err = l.drawTable(nil)
		}
	}
}

// tableChunkRows bounds the rows a table holds: a listing of a full 10 MiB
// index (1.3 million slots) would otherwise keep every cell in memory until
// Close. Past it the table is drawn in chunks, each aligned on its own rows
// (the header comes once, before the first chunk).
const tableChunkRows = 4096

// drawTable draws the rows kept so far, headed by the column names if it is
// the first chunk, then footer.
func (l *lister[T]) drawTable(footer []string) error {
	var header []string
	layout := make([]tableColumn, len(l.columns))
	for i, c := range l.columns {
		layout[i] = tableColumn{right: c.right, fit: c.fit, omitEmpty: c.omitEmpty}
	}
	if !l.drawn {
		header = make([]string, len(l.columns))
		for i, c := range l.columns {
			header[i] = c.name
		}
	}
	l.drawn = true
	err := writeTable(l.ios, header, layout, l.rows, footer)
	l.rows = l.rows[:0]
	return err
}

// Footer adds a line printed under the table (table format only: the same
// facts must reach scripts through the rows or on stderr). Control
// characters in it are escaped, newlines included: one call, one line.
func (l *lister[T]) Footer(format string, args ...any) {
	if l.format == FormatTable || l.format == FormatWide {
		l.footer = append(l.footer, escapeControl(fmt.Sprintf(format, args...)))
	}
}

// Empty sets the line a table shows instead of a header with no rows when
// no row comes (table formats only).
func (l *lister[T]) Empty(line string) { l.empty = line }

// Close finishes the output: the CSV header if no row came, the table and
// its footer. It returns the first write error. Closing again does nothing.
func (l *lister[T]) Close() error {
	if l.err != nil || l.closed {
		return l.err
	}
	l.closed = true
	switch l.format {
	case FormatJSON:
	case FormatCSV:
		l.writeCSVHeader()
	default:
		if !l.drawn && len(l.rows) == 0 && l.empty != "" {
			l.err = writeTable(l.ios, nil, nil, nil, append([]string{l.empty}, l.footer...))
			break
		}
		l.err = l.drawTable(l.footer)
	}
	return l.err
}

func (l *lister[T]) writeCSVHeader() {
	if l.header {
		return
	}
	l.header = true
	names := make([]string, len(l.columns))
	for i, c := range l.columns {
		names[i] = c.name
	}
	l.writeCSV(names)
}

// writeCSV writes one row. Control characters other than newline and tab
// are escaped as in the table (an ESC byte in a directory name or a
// checkpoint key must not reach a terminal that cats the file); newlines
// and tabs stay, quoted by RFC 4180. Cells are not defused for
// spreadsheets: a value starting with =, +, - or @ is data here (a
// negative offset, a key), and docs/cli-contract.md says so.
func (l *lister[T]) writeCSV(record []string) {
	if l.err != nil {
		return
	}
	for i, c := range record {
		record[i] = escapeMessage(c)
	}
	if err := l.csv.Write(record); err != nil {
		l.err = err
		return
	}
	// Flush per row: the output streams, and a write error shows at once.
	l.csv.Flush()
	l.err = l.csv.Error()
}

// cells renders one row's raw values (CSV).
func cells[T any](columns []column[T], row T) []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.cell(row)
	}
	return out
}

// tableRow renders one row for a table.
func tableRow[T any](ios *IOStreams, columns []column[T], row T) []tableCellText {
	out := make([]tableCellText, len(columns))
	for i, c := range columns {
		out[i] = tableCell(ios, c, row)
	}
	return out
}

// tableCellText is a table cell: its text with control characters escaped
// (a record key must not drive the terminal), and the colour it is drawn
// in (nil: none). Colour is applied after the cell is padded, so that
// widths are those of the text.
type tableCellText struct {
	text  string
	color *color.Color
}

func tableCell[T any](ios *IOStreams, c column[T], row T) tableCellText {
	var text string
	if c.display != nil {
		text = c.display(row, ios)
	} else {
		text = c.cell(row)
	}
	cell := tableCellText{text: escapeControl(text)}
	if c.style != nil && ios.ColorEnabled() {
		if attrs := c.style(row); len(attrs) > 0 {
			cell.color = ios.outColor(attrs...)
		}
	}
	if c.human != nil && c.display == nil {
		if h := c.human(row); h != "" {
			cell.text += " (" + escapeControl(ios.zoned(h)) + ")"
		}
	}
	return cell
}

// printObject writes a single answer (lookup, coordinator): in json one
// line, the value itself; in csv a header row and one row; in table a
// two-column listing of field names and values, then the footer lines (one
// line each, as lister.Footer).
func printObject[T any](ios *IOStreams, v T, fields []column[T], footer ...string) error {
	safe := make([]string, len(footer))
	for i, f := range footer {
		safe[i] = escapeControl(f)
	}
	return printObjectLines(ios, v, fields, safe)
}

// printObjectLines is printObject with footer lines that are already safe
// for the terminal: escaped with escapeControl, then perhaps coloured (the
// --trace story).
func printObjectLines[T any](ios *IOStreams, v T, fields []column[T], safeFooter []string) error {
	switch ios.Format() {
	case FormatJSON:
		return newJSONEncoder(ios).Encode(v)
	case FormatCSV:
		l := newLister(ios, fields)
		l.Add(v)
		return l.Close()
	default:
		fields = visibleColumns(fields, ios.Format())
		rows := make([][]tableCellText, len(fields))
		for i, f := range fields {
			rows[i] = []tableCellText{{text: f.name}, tableCell(ios, f, v)}
			if rows[i][1].text == "" && f.right {
				rows[i][1].text = "-" // a null number: blank would read as nothing to say
			}
		}
		return writeTable(ios, nil, []tableColumn{{}, {fit: fitWrap}}, rows, safeFooter)
	}
}

// appendJSONString appends s as kseg's JSON encoding writes a string
// (jsonout.go); anything but printable ASCII goes through it.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := marshalJSON(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

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
	// tablewriter leaves out a column of width 0 (all its cells empty,
	// in a chunk drawn without its header) together with the blanks
	// around it: those blanks lead the next column drawn instead.
	var shown, lead []int // the columns given to tablewriter, and the blanks before each
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
	fixed := tw.NewMapper[int, int]()
	align := make([]tw.Align, len(shown))
	for j, i := range shown {
		align[j] = tw.AlignLeft
		if layout[i].right {
			align[j] = tw.AlignRight
		}
		fixed.Set(j, max(widths[i], 1)+lead[j])
	}
	cellText := func(j int, text string) string { return strings.Repeat(" ", lead[j]) + text }
	lines := &trimmedLines{out: out}
	t := tablewriter.NewTable(lines,
		// kubectl style: no borders, no rules, no padding inside the
		// cells, two blanks between columns; trailing blanks are trimmed
		// (trimmedLines).
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
				text := ""
				if n < len(parts[i]) {
					text = parts[i][n]
				}
				// Coloured after fitting: tablewriter measures a cell
				// without its ANSI codes, and pads outside them.
				if c := r[i].color; c != nil && text != "" {
					text = c.Sprint(text)
				}
				line[j] = cellText(j, text)
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
	for _, s := range wrapSpans(runes, w) {
		lines = append(lines, string(runes[s[0]:s[1]]))
	}
	return lines
}

// wrapSpans is wrapText as the [start, end) rune ranges of text's lines
// (the blanks between two lines in none of them).
func wrapSpans(runes []rune, w int) [][2]int {
	trimRight := func(from, to int) int {
		for to > from && runes[to-1] == ' ' {
			to--
		}
		return to
	}
	var spans [][2]int
	start := 0
	width := 0
	for _, r := range runes {
		width += runeWidth(r)
	}
	for w > 0 && width > w {
		// The last blanks a line may end before: between two words, and
		// between a number and its noun (taken when there is no other),
		// then the last break inside a word.
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
		case inside > start:
			cut = inside
		case cut == start:
			cut = start + 1
		}
		spans = append(spans, [2]int{start, trimRight(start, cut)})
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
// story) to w columns, and no fewer than minWrapWidth: the lines after the
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
	spans := wrapSpans(runes, w)
	pads := make([]int, len(spans))
	if indent+4 <= w/2 && len(spans) > 1 {
		first := spans[0]
		rest := first[1]
		for rest < len(runes) && runes[rest] == ' ' {
			rest++
		}
		spans = [][2]int{first}
		for _, s := range wrapSpans(runes[rest:], w-indent-4) {
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

// escapeControl replaces control characters, bidirectional-text controls
// and invalid UTF-8 with Go escapes (\n, \x1b, \u202e, \xff), so that text
// from disk (a record key, a file name) stays on one line and cannot drive
// the terminal or reorder what is shown. Clean text is returned as is.
func escapeControl(s string) string { return escapeText(s, false) }

// escapeMessage is escapeControl for a message that may span lines (cobra's
// suggestions): newlines and tabs are kept.
func escapeMessage(s string) string { return escapeText(s, true) }

func escapeText(s string, keepLines bool) string {
	unsafe := func(r rune) bool {
		if keepLines && (r == '\n' || r == '\t') {
			return false
		}
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
	}
	clean := true
	for i, r := range s {
		if unsafe(r) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd")) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r):
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
