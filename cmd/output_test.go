package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fatih/color"
)

// testRow stands for a command's row type: explicit snake_case json tags,
// a nullable field.
type testRow struct {
	Segment  string `json:"segment"`
	Position int64  `json:"position"`
	Size     int32  `json:"size"`
	CRCValid bool   `json:"crc_valid"`
	Offset   *int64 `json:"offset"`
}

var testColumns = []column[testRow]{
	textColumn("segment", func(r testRow) string { return r.Segment }),
	intColumn("position", func(r testRow) int64 { return r.Position }),
	intColumn("size", func(r testRow) int32 { return r.Size }),
	{
		name: "crc_valid",
		cell: func(r testRow) string {
			if r.CRCValid {
				return "true"
			}
			return "false"
		},
		style: func(r testRow) []color.Attribute {
			if !r.CRCValid {
				return []color.Attribute{color.FgRed, color.Bold}
			}
			return nil
		},
	},
	nullableIntColumn("offset", func(r testRow) *int64 { return r.Offset }),
}

func int64Ptr(n int64) *int64 { return &n }

var testRows = []testRow{
	{Segment: "00000000000000000000.log", Position: 0, Size: 78, CRCValid: true, Offset: int64Ptr(5)},
	{Segment: "00000000000000000368.log", Position: 123456, Size: 1048588, CRCValid: false},
}

func renderList(t *testing.T, format OutputFormat, setup func(*IOStreams), rows []testRow, footer ...string) (string, string) {
	t.Helper()
	ios, _, out, errOut := Test()
	ios.SetFormat(format)
	if setup != nil {
		setup(ios)
	}
	l := newLister(ios, testColumns)
	for _, r := range rows {
		l.Add(r)
	}
	for _, f := range footer {
		l.Footer("%s", f)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out.String(), errOut.String()
}

func TestListerTable(t *testing.T) {
	got, stderr := renderList(t, FormatTable, nil, testRows, "padding: 3 slots", "2 segments")
	want := "" +
		"segment                   position     size  crc_valid  offset\n" +
		"00000000000000000000.log         0       78  true            5\n" +
		"00000000000000000368.log    123456  1048588  false\n" +
		"padding: 3 slots\n" +
		"2 segments\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	if stderr != "" {
		t.Errorf("stderr: %q", stderr)
	}
}

func TestListerCloseTwice(t *testing.T) {
	ios, _, out, _ := Test()
	l := newLister(ios, testColumns)
	l.Add(testRows[0])
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	once := out.String()
	if err := l.Close(); err != nil || out.String() != once {
		t.Errorf("a second Close wrote again (%v):\n%s", err, out.String())
	}
}

func TestListerTableEmpty(t *testing.T) {
	got, _ := renderList(t, FormatTable, nil, nil)
	if want := "segment  position  size  crc_valid  offset\n"; got != want {
		t.Errorf("empty table %q, want %q", got, want)
	}
}

func TestListerJSON(t *testing.T) {
	rows := slices.Concat(testRows, []testRow{{Segment: `a<b>&"c"` + "\n", Position: -1, Offset: int64Ptr(-1)}})
	got, _ := renderList(t, FormatJSON, nil, rows, "footers are for tables only")
	want := `{"segment":"00000000000000000000.log","position":0,"size":78,"crc_valid":true,"offset":5}
{"segment":"00000000000000000368.log","position":123456,"size":1048588,"crc_valid":false,"offset":null}
{"segment":"a<b>&\"c\"\n","position":-1,"size":0,"crc_valid":false,"offset":-1}
`
	if got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
}

func TestListerJSONEmpty(t *testing.T) {
	if got, _ := renderList(t, FormatJSON, nil, nil); got != "" {
		t.Errorf("empty json list wrote %q", got)
	}
}

func TestListerCSV(t *testing.T) {
	rows := slices.Concat(testRows, []testRow{{Segment: "comma,quote\"newline\n", Position: 7, Offset: int64Ptr(0)}})
	got, _ := renderList(t, FormatCSV, nil, rows, "footers are for tables only")
	want := "segment,position,size,crc_valid,offset\n" +
		"00000000000000000000.log,0,78,true,5\n" +
		"00000000000000000368.log,123456,1048588,false,\n" +
		"\"comma,quote\"\"newline\n\",7,0,false,0\n"
	if got != want {
		t.Errorf("csv:\n%q\nwant:\n%q", got, want)
	}
}

func TestListerCSVEmptyHasHeader(t *testing.T) {
	if got, _ := renderList(t, FormatCSV, nil, nil); got != "segment,position,size,crc_valid,offset\n" {
		t.Errorf("empty csv %q", got)
	}
}

// JSON and CSV stream: a row is on Out as soon as Add returns.
func TestListerStreams(t *testing.T) {
	for _, format := range []OutputFormat{FormatJSON, FormatCSV} {
		ios, _, out, _ := Test()
		ios.SetFormat(format)
		l := newLister(ios, testColumns)
		l.Add(testRows[0])
		first := out.Len()
		if first == 0 || !strings.Contains(out.String(), "00000000000000000000.log") {
			t.Errorf("%s: first row not written by Add: %q", format, out.String())
		}
		l.Add(testRows[1])
		if out.Len() <= first {
			t.Errorf("%s: second row not written by Add", format)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Colour decorates table cells only, only when stdout takes colour; the
// columns and the text are the same either way.
func TestListerColour(t *testing.T) {
	tty := func(ios *IOStreams) { ios.SetStdoutTTY(true) }
	ttyNoColor := func(ios *IOStreams) { ios.SetStdoutTTY(true); ios.SetNoColor(true) }
	red := "\x1b[31;1mfalse\x1b[0;22m"

	coloured, _ := renderList(t, FormatTable, tty, testRows)
	if !strings.Contains(coloured, red) {
		t.Errorf("no colour on a terminal:\n%q", coloured)
	}
	if strings.Count(coloured, "\x1b[") != 2 { // start and reset, around the bad CRC only
		t.Errorf("colour beyond the styled cell:\n%q", coloured)
	}
	plain, _ := renderList(t, FormatTable, nil, testRows)
	if got := strings.ReplaceAll(coloured, red, "false"); got != plain {
		t.Errorf("coloured table differs beyond its colour:\n%s\nplain:\n%s", got, plain)
	}
	if off, _ := renderList(t, FormatTable, ttyNoColor, testRows); off != plain {
		t.Errorf("--no-color on a terminal:\n%q", off)
	}
	for _, format := range []OutputFormat{FormatJSON, FormatCSV} {
		onTTY, _ := renderList(t, format, tty, testRows)
		piped, _ := renderList(t, format, nil, testRows)
		if onTTY != piped || strings.Contains(onTTY, "\x1b") {
			t.Errorf("%s depends on the terminal:\n%q\n%q", format, onTTY, piped)
		}
	}
}

// A cell cannot break the table's lines or drive the terminal.
func TestListerTableEscapesControl(t *testing.T) {
	got, _ := renderList(t, FormatTable, nil, []testRow{{Segment: "a\nb\x1b[2Jc\td\xff", Position: 1}})
	want := "segment              position  size  crc_valid  offset\n" +
		`a\nb\x1b[2Jc\td\xff` + "         1     0  false\n"
	if got != want {
		t.Errorf("table:\n%q\nwant:\n%q", got, want)
	}
}

func TestEscapeControl(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain text", "plain text"},
		{"日本語 🚀 \ufffd", "日本語 🚀 \ufffd"}, // a real U+FFFD is text
		{"a\nb", `a\nb`},
		{"\r\t\x00\x7f", `\r\t\x00\x7f`},
		{"\x1b[31m", `\x1b[31m`},
		{"\u0085\u2028\u2029", `\u0085\u2028\u2029`},
		{"bad\xc3", `bad\xc3`},
		{"\xe2\x82x", `\xe2\x82x`},
		{"evil\u202egol.txt", `evil\u202egol.txt`}, // right-to-left override
		{"\u200e\u2066x\u2069", `\u200e\u2066x\u2069`},
	} {
		if got := escapeControl(tc.in); got != tc.want {
			t.Errorf("escapeControl(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// A message keeps its lines and tabs, nothing else.
	if got, want := escapeMessage("a\n\tb\x1b[2J\r\u202e"), "a\n\tb\\x1b[2J\\r\\u202e"; got != want {
		t.Errorf("escapeMessage = %q, want %q", got, want)
	}
}

func TestFooterIsOneLine(t *testing.T) {
	got, _ := renderList(t, FormatTable, nil, nil, "a\nb\x1b[2J")
	if want := "segment  position  size  crc_valid  offset\n" + `a\nb\x1b[2J` + "\n"; got != want {
		t.Errorf("table %q, want %q", got, want)
	}
}

// failingWriter accepts n bytes, then fails every write.
type failingWriter struct {
	n      int
	writes int
}

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

// The first write error stops the output and comes back from Close.
func TestListerWriteErrorIsSticky(t *testing.T) {
	for _, format := range outputFormats {
		ios, _, _, _ := Test()
		w := &failingWriter{n: 10}
		ios.Out = w
		ios.SetFormat(format)
		l := newLister(ios, testColumns)
		for range 100 {
			l.Add(testRows[0])
		}
		err := l.Close()
		if !errors.Is(err, errDiskFull) {
			t.Errorf("%s: Close = %v, want the write error", format, err)
		}
		if w.writes > 2 {
			t.Errorf("%s: %d writes after the output failed", format, w.writes)
		}
	}
}

func TestPrintObject(t *testing.T) {
	row := testRows[1]
	row.Offset = int64Ptr(368)
	for _, tc := range []struct {
		format OutputFormat
		want   string
	}{
		{FormatTable, "" +
			"segment    00000000000000000368.log\n" +
			"position   123456\n" +
			"size       1048588\n" +
			"crc_valid  false\n" +
			"offset     368\n" +
			"trace: step 1\n"},
		{FormatJSON, `{"segment":"00000000000000000368.log","position":123456,"size":1048588,"crc_valid":false,"offset":368}` + "\n"},
		{FormatCSV, "segment,position,size,crc_valid,offset\n00000000000000000368.log,123456,1048588,false,368\n"},
	} {
		ios, _, out, _ := Test()
		ios.SetFormat(tc.format)
		if err := printObject(ios, row, testColumns, "trace: step 1"); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%s:\n%q\nwant:\n%q", tc.format, out.String(), tc.want)
		}
	}
}

func TestPrintObjectColour(t *testing.T) {
	ios, _, out, _ := Test()
	ios.SetStdoutTTY(true)
	if err := printObject(ios, testRows[1], testColumns); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "crc_valid  \x1b[31;1mfalse\x1b[0;22m\n") {
		t.Errorf("no colour in the key/value table on a terminal:\n%q", out.String())
	}
}

func TestOutputFormatValue(t *testing.T) {
	var f OutputFormat
	for _, v := range []string{"table", "json", "csv"} {
		if err := f.Set(v); err != nil || f.String() != v {
			t.Errorf("Set(%q): %v, now %q", v, err, f)
		}
	}
	f = FormatJSON
	for _, v := range []string{"", "JSON", "yaml", "table "} {
		err := f.Set(v)
		if err == nil || err.Error() != "valid values are table, wide, json, csv, junit" {
			t.Errorf("Set(%q) = %v", v, err)
		}
		if f != FormatJSON {
			t.Errorf("Set(%q) changed the value to %q", v, f)
		}
	}
}

func TestTestColumnsMatchJSON(t *testing.T) {
	assertColumnsMatchJSON(t, testRows[0], testColumns)
	assertColumnsMatchJSON(t, testRows[1], testColumns) // null offset: empty cell
}

// TestJSONAppendersMatchEncodingJSON holds the hand-written encoders of the
// index rows to encoding/json's output (HTML escaping off, as newJSONEncoder
// sets it), over extreme numbers and file names that need escaping.
func TestJSONAppendersMatchEncodingJSON(t *testing.T) {
	names := []string{"", "a/00000000000000000000.index", `dir "q"/x\y.index`, "tab\there", "ctl\x01\x7f", "<&>", "ünï/€.timeindex", "bad\xffutf8", "\u2028\u2029"}
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, 4096}
	encode := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	n := 0
	for _, name := range names {
		for i, x := range ints {
			y := ints[(i+3)%len(ints)]
			rows := []interface{ appendJSON([]byte) []byte }{
				offsetEntryJSON{name, int(x), y, int32(x), int32(y)},
				timeEntryJSON{name, int(y), x, y, int32(x)},
			}
			for _, r := range rows {
				got := string(r.appendJSON(nil)) + "\n"
				if want := encode(r); got != want {
					t.Errorf("%T:\n got %s\nwant %s", r, got, want)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no rows compared")
	}
}

// The table drawn through tablewriter is the brute-force one: each cell
// padded to its column's widest cell in terminal columns (counted here
// from a table of the runes used, not with the code under test), left or
// right, columns two blanks apart, no trailing blanks; a coloured cell is
// padded outside its colour.
func TestWriteTableMatchesBruteForce(t *testing.T) {
	runes := []struct {
		r     string
		width int
	}{{"a", 1}, {"7", 1}, {" ", 1}, {"é", 1}, {"…", 1}, {"█", 1}, {"日", 2}, {"🚀", 2}}
	red := color.New(color.FgRed)
	red.EnableColor()
	rng := uint64(1)
	next := func(n int) int { // xorshift: the same tables on every run
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	for trial := range 300 {
		cols, nrows := 1+next(4), next(5)
		layout := make([]tableColumn, cols)
		header := make([]string, cols)
		widths := make([]int, cols)
		blank := make([]bool, cols) // every cell empty
		for i := range layout {
			layout[i].right = next(2) == 0
			header[i] = strings.Repeat("h", 1+next(3))
			widths[i] = len(header[i])
			blank[i] = next(4) == 0
		}
		if next(3) == 0 { // a chunk after the first: no header, columns may be 0 wide
			header = nil
			clear(widths)
		}
		type cell struct {
			text    string
			width   int
			colored bool
		}
		cells := make([][]cell, nrows)
		rows := make([][]tableCellText, nrows)
		for k := range cells {
			cells[k] = make([]cell, cols)
			rows[k] = make([]tableCellText, cols)
			for i := range cells[k] {
				c := &cells[k][i]
				for range next(6) {
					if blank[i] {
						break
					}
					r := runes[next(len(runes))]
					c.text += r.r
					c.width += r.width
				}
				c.colored = next(3) == 0
				rows[k][i].text = c.text
				if c.colored {
					rows[k][i].color = red
				}
				widths[i] = max(widths[i], c.width)
			}
		}
		var want strings.Builder
		line := func(texts []string, textWidths []int, colored []bool) {
			var b strings.Builder
			for i, text := range texts {
				pad := strings.Repeat(" ", widths[i]-textWidths[i])
				if colored[i] && text != "" {
					text = red.Sprint(text)
				}
				if i > 0 {
					b.WriteString("  ")
				}
				if layout[i].right {
					b.WriteString(pad + text)
				} else {
					b.WriteString(text + pad)
				}
			}
			want.WriteString(strings.TrimRight(b.String(), " ") + "\n")
		}
		if header != nil {
			hw := make([]int, cols)
			for i, h := range header {
				hw[i] = len(h)
			}
			line(header, hw, make([]bool, cols))
		}
		for _, r := range cells {
			texts, tw, colored := make([]string, cols), make([]int, cols), make([]bool, cols)
			for i, c := range r {
				texts[i], tw[i], colored[i] = c.text, c.width, c.colored
			}
			line(texts, tw, colored)
		}
		ios, _, out, _ := Test()
		ios.SetFormat(FormatWide) // never fitted
		if err := writeTable(ios, header, layout, rows, nil); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want.String() {
			t.Fatalf("trial %d:\n%q\nwant:\n%q", trial, got, want.String())
		}
	}
}

// A coloured cell that is wrapped to fit the terminal, or whose row has
// text drawn under it, is coloured line by line: without its colour the
// table is the plain one, line for line.
func TestWriteTableColourWhenFitted(t *testing.T) {
	red := color.New(color.FgRed)
	red.EnableColor()
	text := "missing-index, the time index is behind the log, a record is past its end"
	for _, width := range []int{40, 60, 200} {
		draw := func(c *color.Color) string {
			ios, _, out, _ := Test()
			ios.SetFormat(FormatTable)
			ios.SetTerminalWidth(width)
			layout := []tableColumn{{right: true}, {fit: fitWrap}, {fit: fitBelow}}
			rows := [][]tableCellText{
				{{text: "1"}, {text: text, color: c}, {text: "key = value, " + text}},
				{{text: "23"}, {text: "ok"}, {text: ""}},
			}
			if err := writeTable(ios, []string{"offset", "message", "record"}, layout, rows, []string{"2 rows"}); err != nil {
				t.Fatal(err)
			}
			return out.String()
		}
		plain, coloured := draw(nil), draw(red)
		if strings.Count(plain, "\n") < 4 && width < 100 {
			t.Errorf("width %d: nothing wrapped:\n%s", width, plain)
		}
		if got := strings.NewReplacer("\x1b[31m", "", "\x1b[0m", "").Replace(coloured); got != plain {
			t.Errorf("width %d: coloured:\n%s\nplain:\n%s", width, got, plain)
		}
		for _, l := range strings.Split(plain, "\n") {
			if displayWidth(l) > width || strings.HasSuffix(l, " ") {
				t.Errorf("width %d: line %q too wide or with trailing blanks", width, l)
			}
		}
	}
}
