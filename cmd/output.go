package cmd

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// OutputFormat is the value of -o: chosen once per run, read by the
// renderers below. Run functions hand rows to a lister and never branch on it.
type OutputFormat string

const (
	FormatTable OutputFormat = "table" // aligned columns for people (default)
	FormatJSON  OutputFormat = "json"  // JSON Lines: one object per line
	FormatCSV   OutputFormat = "csv"   // RFC 4180, header row first
)

// outputFormats lists the valid values of -o in the order help shows them.
var outputFormats = []OutputFormat{FormatTable, FormatJSON, FormatCSV}

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
// so one name means one thing in every format.
type column[T any] struct {
	name  string
	cell  func(T) string
	right bool // right-align in the table (numbers)
	// style, if set, colours the table cell when stdout takes colour.
	// Colour is decoration only: CSV and JSON never carry it.
	style func(T) []color.Attribute
	// human, if set, returns a reading aid shown after the value in the
	// table only, in parentheses (a timestamp's RFC 3339 UTC time); ""
	// shows nothing. CSV and JSON keep the raw value alone.
	human func(T) string
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

// nullableTimestampColumn is timestampColumn for a field that is JSON null
// when absent.
func nullableTimestampColumn[T any](name string, value func(T) *int64) column[T] {
	c := nullableIntColumn(name, value)
	c.human = func(v T) string {
		if p := value(v); p != nil {
			return humanTime(*p)
		}
		return ""
	}
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
	columns []column[T]

	enc *json.Encoder
	// appendJSON, when set, writes a row's JSON object itself, byte for
	// byte what encoding/json writes (a test holds them equal): listings
	// of a million rows (dump-index) otherwise spend most of their time in
	// encoding/json's reflection.
	appendJSON func(T, []byte) []byte
	line       []byte // appendJSON's output, reused
	csv        *csv.Writer
	header     bool       // the CSV header row has been written
	rows       [][]string // table cells not drawn yet
	drawn      bool       // a chunk of the table (with its header) was drawn
	footer     []string
	closed     bool
	err        error
}

// newLister returns a lister writing to ios.Out in ios's output format.
func newLister[T any](ios *IOStreams, columns []column[T]) *lister[T] {
	l := &lister[T]{ios: ios, format: ios.Format(), columns: columns}
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
		l.writeCSV(cells(l.columns, row, nil))
	default:
		l.rows = append(l.rows, cells(l.columns, row, l.ios))
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
	right := make([]bool, len(l.columns))
	for i, c := range l.columns {
		right[i] = c.right
	}
	if !l.drawn {
		header = make([]string, len(l.columns))
		for i, c := range l.columns {
			header[i] = c.name
		}
	}
	l.drawn = true
	err := writeTable(l.ios, header, right, l.rows, footer)
	l.rows = l.rows[:0]
	return err
}

// Footer adds a line printed under the table (table format only: the same
// facts must reach scripts through the rows or on stderr). Control
// characters in it are escaped, newlines included: one call, one line.
func (l *lister[T]) Footer(format string, args ...any) {
	if l.format == FormatTable {
		l.footer = append(l.footer, escapeControl(fmt.Sprintf(format, args...)))
	}
}

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

// cells renders one row. For the table (table != nil) each cell has its
// control characters escaped (a record key must not drive the terminal),
// then its colour if stdout takes colour.
func cells[T any](columns []column[T], row T, table *IOStreams) []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.cell(row)
		if table != nil {
			out[i] = tableCell(table, c, row, out[i])
		}
	}
	return out
}

func tableCell[T any](ios *IOStreams, c column[T], row T, text string) string {
	text = escapeControl(text)
	if c.style != nil && ios.ColorEnabled() {
		if attrs := c.style(row); len(attrs) > 0 {
			text = ios.outColor(attrs...).Sprint(text)
		}
	}
	if c.human != nil {
		if h := c.human(row); h != "" {
			text += " (" + escapeControl(h) + ")"
		}
	}
	return text
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
		rows := make([][]string, len(fields))
		for i, f := range fields {
			rows[i] = []string{f.name, tableCell(ios, f, v, f.cell(v))}
		}
		return writeTable(ios, nil, []bool{false, false}, rows, safeFooter)
	}
}

// appendJSONString appends s as encoding/json writes a string with HTML
// escaping off; anything but printable ASCII goes through encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s) // a string always encodes
			return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func newJSONEncoder(ios *IOStreams) *json.Encoder {
	enc := json.NewEncoder(ios.Out)
	enc.SetEscapeHTML(false) // keys and file names as they are: "<", "&"
	return enc
}

// writeTable draws a borderless table (kubectl style: no rules, two spaces
// between columns, no trailing blanks), headed by header unless it is nil,
// then the footer lines, which the caller has escaped (escapeControl).
func writeTable(ios *IOStreams, header []string, right []bool, rows [][]string, footer []string) error {
	align := make([]tw.Align, len(right))
	for i, r := range right {
		align[i] = tw.AlignLeft
		if r {
			align[i] = tw.AlignRight
		}
	}
	var buf bytes.Buffer
	t := tablewriter.NewTable(&buf,
		// Columns are separated by one blank of padding plus a one-blank
		// column separator. (A two-blank padding string would make
		// tablewriter over-pad and then truncate each cell, which closes
		// a coloured cell only after its padding.)
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbolCustom("kseg").WithColumn(" "),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.On, BetweenRows: tw.Off, ShowHeader: tw.Off, ShowFooter: tw.Off},
				Lines:      tw.LinesNone,
			},
		})),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: " ", Overwrite: true}),
		tablewriter.WithHeaderAutoFormat(tw.Off), // "base_offset", not "BASE OFFSET"
		tablewriter.WithTrimSpace(tw.Off),        // cells exactly as given
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	if header != nil {
		t.Header(header)
	}
	if err := t.Bulk(rows); err != nil {
		return fmt.Errorf("drawing table: %w", err)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("drawing table: %w", err)
	}
	var out strings.Builder
	for line := range strings.Lines(buf.String()) {
		out.WriteString(strings.TrimRight(line, " \n"))
		out.WriteByte('\n')
	}
	for _, f := range footer {
		out.WriteString(f)
		out.WriteByte('\n')
	}
	_, err := io.WriteString(ios.Out, out.String())
	return err
}

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
