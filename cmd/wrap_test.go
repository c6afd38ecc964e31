package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// ansi matches the SGR sequences kseg colours with.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Wrapped text breaks between words: every word that fits on a line is
// whole on one line, the lines joined by blanks give the text back, and no
// line is wider than the width unless it holds one word wider than it.
// The words are those of kseg's messages: punctuation stuck to them,
// sizes with units, comma lists, paths.
func TestWrapBreaksBetweenWords(t *testing.T) {
	words := []string{"a", "scanning", "from", "byte", "position", "0", "(78", "bytes),", "found", "in", "5",
		"batches", "(114.8", "MiB/s):", "0", "errors,", "missing-index,padded-index", "demo-0/00000000000000000000.log",
		"2023-11-14T22:13:20Z", "=>", "offset", "1495..1501", "(CRC-32C", "over", "520", "bytes):", "日本語"}
	rng := uint64(7)
	next := func(n int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	for trial := range 2000 {
		var ws []string
		for range 1 + next(30) {
			ws = append(ws, words[next(len(words))])
		}
		text := strings.Join(ws, " ")
		w := 16 + next(80) // wider than "(114.8 MiB/s):", which stays whole
		lines := wrapText(text, w)
		if got := strings.Join(lines, ""); strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(text, " ", "") {
			t.Fatalf("trial %d, width %d: the lines %q do not join to %q", trial, w, lines, text)
		}
		for _, l := range lines {
			if displayWidth(l) > w {
				t.Errorf("trial %d, width %d: line %q too wide", trial, w, l)
			}
			if strings.HasPrefix(l, ",") || strings.HasPrefix(l, ")") || strings.HasPrefix(l, " ") || strings.HasSuffix(l, " ") {
				t.Errorf("trial %d, width %d: line %q starts with punctuation or a blank", trial, w, l)
			}
		}
		// Each word no wider than the line is whole on one line; a wider
		// one is the next pieces of the lines.
		var fields []string
		for _, l := range lines {
			fields = append(fields, strings.Fields(l)...)
		}
		for _, word := range ws {
			if len(fields) == 0 {
				t.Fatalf("trial %d: lines %q lack %q", trial, lines, word)
			}
			if displayWidth(word) <= w {
				if fields[0] != word {
					t.Fatalf("trial %d, width %d: word %q broken: %q", trial, w, word, lines)
				}
				fields = fields[1:]
				continue
			}
			got := ""
			for got != word && len(fields) > 0 {
				got, fields = got+fields[0], fields[1:]
			}
		}
	}
}

// A size and its unit stay on one line: the verify summary once printed
// "(114.8 MiB/" at the end of a line and "s)" at the start of the next.
func TestWrapKeepsSizeAndUnit(t *testing.T) {
	text := "1 partition, 3 segments, 600 batches, 269.6 KiB checked in 2ms (114.8 MiB/s): 0 errors, 0 warnings, 0 info"
	for w := minWrapWidth; w <= len(text); w++ {
		for _, l := range wrapIndented(text, w) {
			for _, bad := range []string{"MiB/", "(114.8", "269.6"} {
				if strings.HasSuffix(l, bad) {
					t.Errorf("width %d: a line ends in %q: %q", w, bad, l)
				}
			}
		}
	}
}

// A coloured line (the --trace story on a terminal) is wrapped like the
// same line without colour: the terminal no longer breaks it anywhere
// ("scanning from" / "position 0", "(78 bytes)" / ", found in"). Each line
// starts with the colours in force and ends reset.
func TestWrapColouredTrace(t *testing.T) {
	dir := t.TempDir()
	if _, err := kafkagen.Generate(filepath.Join(dir, "orders-0"), kafkagen.Options{Seed: 3, Segments: 3, Batches: 200}); err != nil {
		t.Fatal(err)
	}
	// A torn first segment: verify's findings are coloured too.
	logs, _ := filepath.Glob(filepath.Join(dir, "orders-0", "*.log"))
	if fi, err := os.Stat(logs[0]); err != nil || os.Truncate(logs[0], fi.Size()-7) != nil {
		t.Fatal("cannot tear the first segment")
	}
	for _, w := range []int{60, 80, 160} {
		for _, args := range [][]string{
			{"lookup", "--trace", "orders-0", "300"},
			{"lookup-time", "--trace", "orders-0", "2023-11-14T22:13:20.100Z"},
			{"verify", "."},
		} {
			plain, _, _ := runInWith(t, dir, func(ios *IOStreams) { ios.SetTerminalWidth(w); ios.SetNow(tickingClock(time.Second)) }, args...)
			coloured, _, _ := runInWith(t, dir, func(ios *IOStreams) {
				ios.SetTerminalWidth(w)
				ios.SetNow(tickingClock(time.Second))
				ios.SetStdoutTTY(true)
			}, args...)
			if !strings.Contains(coloured, "\x1b[") {
				t.Fatalf("%v: no colour on a terminal", args)
			}
			if got := ansi.ReplaceAllString(coloured, ""); got != plain {
				t.Errorf("%v at %d columns: coloured lines wrap otherwise:\n%s\nplain:\n%s", args, w, got, plain)
			}
			assertLinesFit(t, strings.Join(args, " "), plain, w)
			for _, l := range strings.Split(coloured, "\n") {
				if strings.Contains(l, "\x1b[") && !closesStyle(ansi.FindAllString(l, -1)[len(ansi.FindAllString(l, -1))-1]) {
					t.Errorf("%v at %d columns: line %q leaves a colour on", args, w, l)
				}
			}
		}
	}
}

// On a terminal narrower than minWrapWidth (COLUMNS=1), a footer is
// wrapped at minWrapWidth, not one character or word per line.
func TestNarrowTerminalFooters(t *testing.T) {
	dir := t.TempDir()
	if _, err := kafkagen.Generate(filepath.Join(dir, "orders-0"), kafkagen.Options{Seed: 3, Segments: 2, Batches: 20}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", "."}, {"ls", "."}, {"lookup", "--trace", "orders-0", "5"}, {"timeline", "orders-0"}} {
		out, stderr, code := runInWith(t, dir, func(ios *IOStreams) { ios.SetTerminalWidth(1) }, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		short := 0
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if n := len(strings.TrimSpace(l)); n > 0 && n < 4 {
				short++
			}
		}
		if short > 2 {
			t.Errorf("%v at 1 column: %d lines of under 4 characters:\n%s", args, short, out)
		}
	}
}

// Every footer and summary under a table (ls, verify, timeline, the
// lookup story, find, groups, metadata, dump-index, retention, cleaner,
// txns, gen, report) is wrapped between words at any width: its words are
// those of the unwrapped line, in order, none broken, and each of its lines
// fits the terminal (or minWrapWidth on a narrower one) unless it is one
// word wider than that, shown whole. The topic's name is longer than
// minWrapWidth.
func TestFootersKeepWordsWhole(t *testing.T) {
	const topic = "orders.eu-west-1.payments-settlement-events-v2-archive"
	part := topic + "-0"
	dir := t.TempDir()
	for _, args := range [][]string{
		{"gen", "--segments", "2", "--batches", "20", part},
		{"gen", "--consumer-offsets", "--batches", "10", "__consumer_offsets-0"},
		{"gen", "--metadata", "--changes", "20", "__cluster_metadata-0"},
	} {
		if _, stderr, code := runInWith(t, dir, nil, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	page := part + "-report-of-the-incident.html"
	for _, c := range []struct {
		args []string
		from string // the footer's first line, unwrapped, starts so
		code int
	}{
		{[]string{"ls", "."}, "newest timestamp", 0},
		{[]string{"ls", "--segments", part}, "newest timestamp", 0},
		{[]string{"verify", "."}, "no findings", 0},
		{[]string{"timeline", part}, "1 partition", 0},
		{[]string{"lookup", "--trace", part, "100"}, "trace:", 0},
		{[]string{"lookup-time", "--trace", part, "2023-11-14T22:13:20.300Z"}, "trace:", 0},
		{[]string{"find", "--key", "k", "."}, "0 matches", 1},
		{[]string{"groups", "."}, "3 groups", 0},
		{[]string{"metadata", "."}, "image at offset", 0},
		{[]string{"dump-index", part + "/00000000000000000000.index"}, "00000000000000000000.index:", 0},
		{[]string{"retention", "."}, "2 partitions:", 0},
		{[]string{"txns", "."}, "2 partitions,", 0},
		{[]string{"gen", "--batches", "3", "gen/" + part}, "wrote", 0},
		{[]string{"report", "--at", "2023-11-15T00:00:00Z", "--html", page, "."}, "wrote", 0},
	} {
		run := func(w int) string {
			if c.args[0] == "gen" {
				if err := os.RemoveAll(filepath.Join(dir, "gen")); err != nil {
					t.Fatal(err)
				}
			}
			out, stderr, code := runInWith(t, dir, func(ios *IOStreams) { ios.SetTerminalWidth(w); ios.SetNow(tickingClock(1500 * time.Millisecond)) }, c.args...)
			if code != c.code {
				t.Fatalf("%v at %d columns: exit %d: %s", c.args, w, code, stderr)
			}
			return out
		}
		lines := strings.Split(strings.TrimRight(run(0), "\n"), "\n")
		var footer []string
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), c.from) {
				footer = strings.Fields(strings.Join(lines[i:], " "))
				break
			}
		}
		if footer == nil {
			t.Fatalf("%v: no line starts with %q:\n%s", c.args, c.from, strings.Join(lines, "\n"))
		}
		for _, w := range []int{1, 20, 80, 160} {
			out := run(w)
			narrow := strings.Split(strings.TrimRight(out, "\n"), "\n")
			// The footer's lines: from the end, as many as hold its words.
			var words []string
			first := len(narrow)
			for first > 0 && len(words) < len(footer) {
				first--
				words = append(strings.Fields(narrow[first]), words...)
			}
			if strings.Join(words, " ") != strings.Join(footer, " ") {
				t.Errorf("%v at %d columns: the footer's words are\n%q\nnot those of the unwrapped line\n%q\n%s", c.args, w, words, footer, out)
				continue
			}
			for _, l := range narrow[first:] {
				if displayWidth(l) > max(w, minWrapWidth) && len(strings.Fields(l)) > 1 {
					t.Errorf("%v at %d columns: a footer line of %d columns holding more than one word: %q", c.args, w, displayWidth(l), l)
				}
			}
		}
	}
}
