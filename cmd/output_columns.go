package cmd

import (
	"strconv"
	"time"

	"github.com/fatih/color"
)

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

// partCell makes the cells of one part of a line that holds one of
// several: partCell(get)(f) is f of the part get picks, "" for a line
// without that part.
func partCell[T, P any](get func(T) *P) func(f func(*P) string) func(T) string {
	return func(f func(*P) string) func(T) string {
		return func(l T) string {
			if p := get(l); p != nil {
				return f(p)
			}
			return ""
		}
	}
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
