package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// The story has one paragraph per stage of the broker's lookup, in order,
// with one line per probe and per batch: nothing of the trace is lost, and
// the probe lines agree with the JSON steps.
func TestTraceStoryTellsEveryStep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	// Dense index entries: a long enough binary search, in warm and cold
	// sections (more than 1024 entries).
	if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Segments: 2, Batches: 1500, RecordsPerBatch: 1, ValueSize: 10, IndexIntervalBytes: kafkagen.IndexEveryBatch}); err != nil {
		t.Fatal(err)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []int64{0, 10, 700, 1499, 1500, 2999} {
		res, err := p.LookupOffset(target, inspect.LookupOptions{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		ios, _, _, _ := Test()
		lines := traceStory(ios, "title", p, res.Trace, offsetTarget(target), "done")
		text := strings.Join(lines, "\n")
		var probes, batches int
		for _, s := range res.Trace {
			switch s.Step {
			case "probe":
				probes++
				want := regexp.MustCompile(`(?m)^ +slot ` + itoa(*s.Slot) + ` +offset ` + itoa64(*s.Key) + ` [<=>] ` + itoa64(target) + `  `)
				if !want.MatchString(text) {
					t.Errorf("offset %d: no line for probe %+v in\n%s", target, s, text)
				}
			case "batch":
				batches++
				want := regexp.MustCompile(`(?m)^ +position ` + itoa64(*s.Position) + ` +offsets ` + itoa64(*s.BaseOffset) + `\.\.` + itoa64(*s.LastOffset) + `  `)
				if !want.MatchString(text) {
					t.Errorf("offset %d: no line for batch %+v", target, s)
				}
			}
		}
		if got := len(regexp.MustCompile(`(?m)^ +slot \d+ `).FindAllString(text, -1)); got != probes {
			t.Errorf("offset %d: %d probe lines for %d probes", target, got, probes)
		}
		if got := len(regexp.MustCompile(`(?m)^ +position \d+ `).FindAllString(text, -1)); got != batches {
			t.Errorf("offset %d: %d batch lines for %d batches", target, got, batches)
		}
		paras := regexp.MustCompile(`(?m)^ +(\d+)\. (segment|index|scan|note) `).FindAllStringSubmatch(text, -1)
		for i, m := range paras {
			if m[1] != itoa(i+1) {
				t.Errorf("offset %d: paragraph %s numbered out of order", target, m[1])
			}
		}
		if len(paras) == 0 || paras[0][2] != "segment" || !strings.HasSuffix(text, " => done") || lines[1] != "trace: title" {
			t.Errorf("offset %d: story:\n%s", target, text)
		}
	}
	// A search of more than 1024 entries that starts cold says so.
	res, err := p.LookupOffset(10, inspect.LookupOptions{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := Test()
	text := strings.Join(traceStory(ios, "t", p, res.Trace, offsetTarget(10), ""), "\n")
	for _, want := range []string{"warm check: the target is not past it, so the cold section is searched; slots 474.. are the warm section", "cold section: "} {
		if !strings.Contains(text, want) {
			t.Errorf("cold search: %q not in\n%s", want, text)
		}
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// Colour marks the story's parts on a terminal and nowhere else; the words
// do not change.
func TestTraceStoryColour(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Batches: 40}); err != nil {
		t.Fatal(err)
	}
	plain, _, _ := runKseg(t, nil, "lookup", "--trace", dir, "30")
	coloured, _, _ := runKseg(t, func(ios *IOStreams) { ios.SetStdoutTTY(true) }, "lookup", "--trace", dir, "30")
	if strings.Contains(plain, "\x1b") || !strings.Contains(coloured, "\x1b[32;1m=> a fetch from offset 30") {
		t.Errorf("colour: plain has escapes %v; coloured conclusion missing in %q", strings.Contains(plain, "\x1b"), coloured)
	}
	if got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(coloured, ""); got != plain {
		t.Errorf("colour changed the words:\n%s\nwant\n%s", got, plain)
	}
	for _, f := range []string{"json", "csv"} {
		out, _, _ := runKseg(t, nil, "-o", f, "lookup", "--trace", dir, "30")
		if strings.Contains(out, "trace: how") {
			t.Errorf("-o %s carries the story", f)
		}
	}
}

// A bad CRC (dump-log) and a target not found (lookup) are red on a
// terminal; the words do not change.
func TestBadCRCAndNotFoundColour(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Batches: 5})
	if err != nil {
		t.Fatal(err)
	}
	log := m.LogPath(&m.Segments[0])
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[m.Segments[0].Batches[1].Position+17] ^= 0xff // stored CRC
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tty := func(ios *IOStreams) { ios.SetStdoutTTY(true) }
	strip := regexp.MustCompile("\x1b\\[[0-9;]*m")
	for _, args := range [][]string{{"dump-log", dir}, {"lookup", dir, "100000"}} {
		plain, _, _ := runKseg(t, nil, args...)
		coloured, _, _ := runKseg(t, tty, args...)
		if !strings.Contains(coloured, "\x1b[31;1mfalse") {
			t.Errorf("%v: no red false in %q", args, coloured)
		}
		if strip.ReplaceAllString(coloured, "") != plain {
			t.Errorf("%v: colour changed the words", args)
		}
	}
}
