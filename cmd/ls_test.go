package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// lsDataDir writes a data directory of partitions in every state ls
// reports, and returns it: orders-0 clean; orders-1 with zero-filled
// preallocated indexes and an empty active segment (an unclean shutdown);
// orders-2 with a .timeindex missing, stray bytes after the .index
// entries, and a leftover .deleted file; orders-10 with a torn tail;
// legacy-0 of magic 1 gzip wrappers (counted by decompressing).
func lsDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mk := func(name string, o kafkagen.Options) *kafkagen.Manifest {
		m, err := kafkagen.Generate(filepath.Join(dir, name), o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	mk("orders-0", kafkagen.Options{Seed: 1, Segments: 3, Batches: 40, ValueSize: 200})
	mk("orders-1", kafkagen.Options{Seed: 2, Segments: 2, Batches: 30, PreallocatedIndexBytes: 4096, EmptyActiveSegment: true})
	m2 := mk("orders-2", kafkagen.Options{Seed: 3, Segments: 2, Batches: 30, ValueSize: 300})
	if err := os.Remove(m2.TimeIndexPath(&m2.Segments[1])); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(m2.IndexPath(&m2.Segments[0]), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{1, 2, 3})
	f.Close()
	if err := os.WriteFile(filepath.Join(m2.Dir, "00000000000000000000.log.deleted"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	m10 := mk("orders-10", kafkagen.Options{Seed: 4, Segments: 2, Batches: 30})
	last := &m10.Segments[1]
	if err := os.Truncate(m10.LogPath(last), last.LogSize-40); err != nil {
		t.Fatal(err)
	}
	mk("legacy-0", kafkagen.Options{Seed: 5, Magic: 1, Compression: "gzip", Batches: 20, RecordsPerBatch: 4, IndexIntervalBytes: 1 << 20})
	if err := os.WriteFile(filepath.Join(dir, "meta.properties"), []byte("version=1\nbroker.id=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// formats are the machine formats, held to golden files byte for byte;
// tables are held by assertTableGoldens at several widths.
var formats = []struct {
	format OutputFormat
	ext    string
}{{FormatJSON, "jsonl"}, {FormatCSV, "csv"}}

func TestLsGenerated(t *testing.T) {
	dir := lsDataDir(t)
	before := hashTree(t, dir)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ls-generated", []string{"ls", "."}},
		{"ls-generated-segments", []string{"ls", "--segments", "."}},
		{"ls-generated-deep", []string{"ls", "--deep", "."}},
		{"ls-generated-deep-segments", []string{"describe", "--deep", "--segments", "."}},
	} {
		for _, f := range formats {
			out, stderr, code := runIn(t, dir, append([]string{"-o", string(f.format)}, tc.args...)...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
			}
			if stderr != "" {
				t.Errorf("%v: stderr %q", tc.args, stderr)
			}
			assertGolden(t, tc.name+"."+f.ext, out)
		}
		outs := assertTableGoldens(t, dir, tc.name, 0, tc.args...)
		for _, w := range []int{80, 160} {
			assertLinesFit(t, fmt.Sprint(tc.args), outs[w], w)
		}
	}
	assertTreeUnchanged(t, dir, before)
}

// ls names the statuses it finds; the generated data dir has one of each.
func TestLsStatuses(t *testing.T) {
	dir := lsDataDir(t)
	out, _, code := runIn(t, dir, "-o", "json", "ls", ".")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := map[string]string{
		"orders-0":  "ok",
		"orders-1":  "padded-index",
		"orders-2":  "missing-index,bad-index,leftover-files",
		"orders-10": "torn-tail",
		"legacy-0":  "ok",
	}
	lines := jsonLines(t, out)
	var order []string
	for _, l := range lines {
		name := filepath.Base(l["dir"].(string))
		order = append(order, name)
		if l["status"] != want[name] {
			t.Errorf("%s: status %v, want %q", name, l["status"], want[name])
		}
	}
	if got := strings.Join(order, " "); got != "legacy-0 orders-0 orders-1 orders-2 orders-10" {
		t.Errorf("partition order %q, want by topic then partition number", got)
	}
}

func TestLsReal(t *testing.T) {
	real := requireRealFixtures(t)
	var dirs []string // named relative to real, where kseg runs
	for _, d := range fixtures.Dirs(t) {
		dirs = append(dirs, filepath.Base(d))
	}
	before := hashTree(t, real)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ls-real", []string{"ls"}},
		{"ls-real-segments", []string{"ls", "--segments"}},
		{"ls-real-deep", []string{"ls", "--deep"}},
	} {
		for _, f := range formats {
			out, stderr, code := runIn(t, real, append(append([]string{"-o", string(f.format)}, tc.args...), dirs...)...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
			}
			if stderr != "" {
				t.Errorf("%v: stderr %q", tc.args, stderr)
			}
			assertGolden(t, tc.name+"."+f.ext, out)
		}
		assertTableGoldens(t, real, tc.name, 0, append(tc.args, dirs...)...)
	}
	assertTreeUnchanged(t, real, before)
}

// On a terminal that takes colour, statuses are green, yellow or red; the
// text is the same.
func TestLsStatusColour(t *testing.T) {
	dir := lsDataDir(t)
	plain, _, _ := runIn(t, dir, "ls", ".")
	var coloured string
	t.Run("tty", func(t *testing.T) {
		t.Chdir(dir)
		coloured, _, _ = runKseg(t, func(ios *IOStreams) { ios.SetStdoutTTY(true) }, "ls", ".")
	})
	for status, code := range map[string]string{"ok": "32", "padded-index": "33", "torn-tail": "31;1"} {
		if !regexp.MustCompile(regexp.QuoteMeta("\x1b["+code+"m"+status+"\x1b[0") + "(;22)?m").MatchString(coloured) {
			t.Errorf("%s is not coloured \\x1b[%sm in %q", status, code, coloured)
		}
	}
	if got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(coloured, ""); got != plain {
		t.Errorf("colour changed the text:\n%s\nwant\n%s", got, plain)
	}
}

func TestLsColumnsMatchJSON(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	in := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	p := int32(7)
	assertColumnsMatchJSON(t, lsPartitionJSON{Dir: "d/orders-7", Topic: s("orders"), Partition: &p, Segments: 3, lsRange: lsRange{BaseOffset: 11,
		LastOffset: i64(12), NextOffset: 13, Batches: i64(14), Records: i64(15), FirstTimestamp: i64(16), LastTimestamp: i64(17),
		LogBytes: 18}, IndexEntries: 19, TimeIndexEntries: 20, Status: "torn-tail", LogStartOffset: i64(21), MetadataSnapshots: 2}, lsPartitionColumns)
	assertColumnsMatchJSON(t, lsSegmentJSON{Dir: "d/orders-7", Segment: "00000000000000000011.log", lsRange: lsRange{BaseOffset: 11, LastOffset: i64(12),
		NextOffset: 13, Batches: i64(14), Records: i64(15), FirstTimestamp: i64(16), LastTimestamp: i64(17), LogBytes: 18},
		IndexEntries: in(19), IndexBytes: i64(20), IndexFill: s("trimmed"), TimeIndexEntries: in(21), TimeIndexBytes: i64(22),
		TimeIndexFill: s("preallocated"), TxnIndexEntries: in(23), Status: "ok", Snapshot: &snapshotIDJSON{EndOffset: 24, Epoch: 25}}, lsSegmentColumns)
}

func TestLsArguments(t *testing.T) {
	_, stderr, code := runKseg(t, nil, "ls")
	if code != 2 || !strings.Contains(stderr, "requires at least 1 arg") {
		t.Errorf("no PATH: exit %d, %q", code, stderr)
	}
	_, stderr, code = runKseg(t, nil, "ls", filepath.Join(t.TempDir(), "nope"))
	if code != 2 || !strings.Contains(stderr, "no such file or directory") {
		t.Errorf("missing PATH: exit %d, %q", code, stderr)
	}
}

// TestLsReadAheadKeepsOrder lists a data dir of many partitions (the
// damaged ones of lsDataDir among them) with partitions read by one
// goroutine and by four: the output must be the same, byte for byte, in
// every format and with --segments.
func TestLsReadAheadKeepsOrder(t *testing.T) {
	dir := lsDataDir(t)
	for i := range 24 {
		o := kafkagen.Options{Seed: int64(20 + i), Segments: 1 + i%3, Batches: 5 + i, ValueSize: 50 + 10*i}
		if _, err := kafkagen.Generate(filepath.Join(dir, fmt.Sprintf("many-%d", i)), o); err != nil {
			t.Fatal(err)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, args := range [][]string{{"-o", "json"}, {"-o", "csv", "--segments"}, {"-o", "wide"}} {
		args = append([]string{"ls"}, append(args, dir)...)
		runtime.GOMAXPROCS(1)
		want, wantErr, wantCode := runKseg(t, nil, args...)
		runtime.GOMAXPROCS(4)
		for range 3 {
			got, gotErr, code := runKseg(t, nil, args...)
			if got != want || gotErr != wantErr || code != wantCode {
				t.Fatalf("%v: with 4 goroutines (exit %d):\n%s%s\nwith 1 (exit %d):\n%s%s", args, code, got, gotErr, wantCode, want, wantErr)
			}
		}
		if n := strings.Count(want, "many-"); n < 24 {
			t.Fatalf("%v: %d rows of the many-* partitions, want 24 or more:\n%s", args, n, want)
		}
	}
}

// ls --segments names every row's segment at any width: the segment
// column holds each segment's base offset whole (its JSON line's
// base_offset), and the status words are never broken inside.
func TestLsSegmentsNameTheirSegment(t *testing.T) {
	dir := lsDataDir(t)
	jsonOut, _, _ := runIn(t, dir, "-o", "json", "ls", "--segments", ".")
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(jsonOut), "\n") {
		m := regexp.MustCompile(`"base_offset":(\d+)`).FindStringSubmatch(l)
		want = append(want, m[1])
	}
	row := regexp.MustCompile(`^(?:legacy|orders)-\d+\s+(\S+)`)
	for _, w := range []int{0, 1, 40, 60, 80, 120, 160} {
		out, _, _ := runInWith(t, dir, func(ios *IOStreams) { ios.SetTerminalWidth(w) }, "ls", "--segments", ".")
		lines := strings.Split(out, "\n")
		if h := strings.Fields(lines[0]); len(h) < 2 || h[1] != "segment" {
			t.Fatalf("width %d: header %q has no segment column second", w, lines[0])
		}
		var got []string
		for _, l := range lines[1:] {
			if m := row.FindStringSubmatch(l); m != nil {
				got = append(got, m[1])
			}
			if strings.HasSuffix(l, "missing-") {
				t.Errorf("width %d: a status word broken: %q", w, l)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("width %d: segment column %q, want the base offsets %q:\n%s", w, got, want, out)
		}
	}
}
