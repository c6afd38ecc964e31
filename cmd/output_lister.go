package cmd

import (
	"encoding/csv"
	"fmt"

	"github.com/fatih/color"
)

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

// AddJSON writes a row only JSON has (a summary line), where the table,
// wide and CSV views say the same in their footer.
func (l *lister[T]) AddJSON(row T) {
	if l.format == FormatJSON {
		l.Add(row)
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
