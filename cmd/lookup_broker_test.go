package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/lookup"
)

// Lookups as the broker serves them on indexes it does not search as they
// are on disk: zero-padded (it searches the entries before the padding)
// and missing (its loader rebuilds them first). Each case is checked
// differentially: the lookup on the partition as found must equal, in
// index entry, probes and scanned bytes, the lookup on a copy holding the
// index the broker actually searches (trimmed, or rebuilt on disk by kseg
// rebuild, the same recovery rule); padded ones also against the manifest.

func partitionAt(t *testing.T, dir string) *inspect.Partition {
	t.Helper()
	tg, err := inspect.Resolve(dir)
	if err != nil || len(tg.Partitions) != 1 {
		t.Fatalf("resolve %s: %v", dir, err)
	}
	return tg.Partitions[0]
}

// searchSteps is what a lookup's trace says about its searches: every
// probe, the entries it used, and the batches it scanned.
func searchSteps(tr []inspect.TraceStep) string {
	var b strings.Builder
	for _, s := range tr {
		switch s.Step {
		case "probe", "index_entry", "batch":
			fmt.Fprintf(&b, "%s|", s.Message())
		}
	}
	return b.String()
}

// traceWords is every step's message, a line each.
func traceWords(tr []inspect.TraceStep) string {
	var b strings.Builder
	for _, s := range tr {
		b.WriteString(s.Message() + "\n")
	}
	return b.String()
}

// lookupsAgree checks that offset and time lookups on got answer as on
// want, search for search.
func lookupsAgree(t *testing.T, name string, got, want *inspect.Partition, offsets, timestamps []int64) {
	t.Helper()
	opts := lookup.Options{Trace: true}
	for _, o := range offsets {
		g, err := lookup.Offset(got, o, opts)
		if err != nil {
			t.Fatalf("%s: lookup %d: %v", name, o, err)
		}
		w, err := lookup.Offset(want, o, opts)
		if err != nil {
			t.Fatalf("%s: lookup %d on the reference: %v", name, o, err)
		}
		if g.Found != w.Found || fmt.Sprint(g.IndexEntry) != fmt.Sprint(w.IndexEntry) || g.ScannedBatches != w.ScannedBatches ||
			g.ScannedBytes != w.ScannedBytes || g.Batch != w.Batch || searchSteps(g.Trace) != searchSteps(w.Trace) {
			t.Fatalf("%s: lookup %d: entry %v, %d batches, %d bytes, steps %s\nthe broker's: entry %v, %d batches, %d bytes, steps %s",
				name, o, g.IndexEntry, g.ScannedBatches, g.ScannedBytes, searchSteps(g.Trace), w.IndexEntry, w.ScannedBatches, w.ScannedBytes, searchSteps(w.Trace))
		}
	}
	for _, ts := range timestamps {
		g, err := lookup.Time(got, ts, opts)
		if err != nil {
			t.Fatalf("%s: lookup-time %d: %v", name, ts, err)
		}
		w, err := lookup.Time(want, ts, opts)
		if err != nil {
			t.Fatalf("%s: lookup-time %d on the reference: %v", name, ts, err)
		}
		if g.Found != w.Found || g.Offset != w.Offset || fmt.Sprint(g.TimeIndexEntry) != fmt.Sprint(w.TimeIndexEntry) || searchSteps(g.Trace) != searchSteps(w.Trace) {
			t.Fatalf("%s: lookup-time %d: offset %d entry %v steps %s\nthe broker's: offset %d entry %v steps %s",
				name, ts, g.Offset, g.TimeIndexEntry, searchSteps(g.Trace), w.Offset, w.TimeIndexEntry, searchSteps(w.Trace))
		}
	}
}

// targetsOf lists every offset from the first segment's base to one past
// the log end, and every batch's max timestamp (and one past the last),
// as scanned from the logs.
func targetsOf(t *testing.T, p *inspect.Partition) (offsets, timestamps []int64) {
	t.Helper()
	var last int64 = -1
	var maxTs int64 = -1
	for _, sf := range p.Segments {
		seg, err := inspect.OpenSegment(sf, inspect.SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc := seg.Batches(0)
		for sc.Next() {
			b := sc.Batch()
			last = max(last, b.LastOffset)
			if b.MaxTimestamp >= 0 {
				timestamps = append(timestamps, b.MaxTimestamp, b.MaxTimestamp-1)
				maxTs = max(maxTs, b.MaxTimestamp)
			}
		}
		seg.Close()
	}
	for o := p.Segments[0].BaseOffset; o <= last+1; o++ {
		offsets = append(offsets, o)
	}
	// (TimestampMax is left out: it picks a segment by its largest
	// timestamp, not through an index search.)
	return offsets, append(timestamps, maxTs+1, inspect.TimestampEarliest)
}

func TestLookupPaddedIndexAsTheBrokerSearches(t *testing.T) {
	t.Parallel()
	for _, o := range []kafkagen.Options{
		{Seed: 41, Segments: 2, Batches: 80, PreallocatedIndexBytes: 4096, IndexIntervalBytes: 300},
		{Seed: 42, Segments: 1, Batches: 150, PreallocatedIndexBytes: 10485760, IndexIntervalBytes: kafkagen.IndexEveryBatch, Compression: "gzip"},
		{Seed: 43, Segments: 2, Batches: 60, PreallocatedIndexBytes: 4096, CompactionGaps: true, IndexIntervalBytes: 500},
	} {
		dir := filepath.Join(t.TempDir(), "demo-0")
		m, err := kafkagen.Generate(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		// The broker's view: the same files with the padding cut off.
		trimmed := copyPartition(t, dir, t.TempDir())
		s := &m.Segments[len(m.Segments)-1]
		if err := os.Truncate(filepath.Join(trimmed, filepath.Base(m.IndexPath(s))), int64(s.IndexEntries)*8); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filepath.Join(trimmed, filepath.Base(m.TimeIndexPath(s))), int64(s.TimeIndexEntries)*12); err != nil {
			t.Fatal(err)
		}
		p := partitionAt(t, dir)
		offsets, timestamps := targetsOf(t, p)
		lookupsAgree(t, fmt.Sprintf("seed %d", o.Seed), p, partitionAt(t, trimmed), offsets, timestamps)

		// And against the manifest, by brute force: the last entry the
		// generator wrote at or below the target, then the batches from
		// its position to the first one reaching the target.
		for _, target := range offsets {
			r, err := lookup.Offset(p, target, lookup.Options{Trace: true})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Found || r.SegmentBaseOffset != s.BaseOffset {
				continue
			}
			pos, slot := int64(0), -1
			for i, e := range s.OffsetIndex {
				if e.Offset <= target {
					pos, slot = int64(e.Position), i
				}
			}
			var bytes int64
			for _, b := range s.Batches {
				if b.Position < pos {
					continue
				}
				bytes += b.Size
				if b.LastOffset >= target {
					break
				}
			}
			gotSlot := -1
			if r.IndexEntry != nil {
				gotSlot = r.IndexEntry.Slot
			}
			if gotSlot != slot || r.ScannedBytes != bytes {
				t.Fatalf("seed %d: offset %d: slot %d, %d bytes scanned; the broker: slot %d, %d bytes", o.Seed, target, gotSlot, r.ScannedBytes, slot, bytes)
			}
			if slot >= 0 && slot >= s.IndexEntries {
				t.Fatalf("seed %d: offset %d: answered with padding slot %d", o.Seed, target, slot)
			}
		}
		r, err := lookup.Offset(p, s.Batches[len(s.Batches)-1].LastOffset, lookup.Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		if words := traceWords(r.Trace); !strings.Contains(words, "are zero padding") || strings.Contains(words, "KAFKA-10207") {
			t.Errorf("seed %d: the trace does not say padding was left out (or names KAFKA-10207 on a recovered segment): %s", o.Seed, words)
		}
	}
}

// A padded index on a segment the next start keeps (a clean shutdown
// marker here) is named in --trace: a restarted broker would search the
// padding (KAFKA-10207).
func TestLookupTracePaddingKept(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "demo-0")
	if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 44, Batches: 50, PreallocatedIndexBytes: 4096, IndexIntervalBytes: 300}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, ".kafka_cleanshutdown"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runKseg(t, nil, "lookup", "--trace", dir, "100")
	if code != exitOK || !strings.Contains(out, "KAFKA-10207") || !strings.Contains(out, ".kafka_cleanshutdown") {
		t.Errorf("exit %d:\n%s", code, out)
	}

	// A rolled segment below the recovery point whose index ends in zeros.
	data = t.TempDir()
	dir = filepath.Join(data, "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 47, Segments: 2, Batches: 50, IndexIntervalBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	s0 := &m.Segments[0]
	repairEdit(t, m.IndexPath(s0), func(b []byte) []byte { return append(b, make([]byte, 80)...) })
	if err := os.WriteFile(filepath.Join(data, "recovery-point-offset-checkpoint"), fmt.Appendf(nil, "0\n1\ndemo 0 %d\n", m.LogEndOffset), 0o644); err != nil {
		t.Fatal(err)
	}
	target := s0.Batches[len(s0.Batches)-1].LastOffset
	out, _, code = runKseg(t, nil, "-o", "json", "lookup", "--trace", dir, fmt.Sprint(target))
	if code != exitOK || !strings.Contains(out, "below the recovery point") || !strings.Contains(out, "KAFKA-10207") ||
		!strings.Contains(out, fmt.Sprintf(`"index_entry":{"slot":%d,`, s0.IndexEntries-1)) {
		t.Errorf("exit %d:\n%s", code, out)
	}
	// verify reports it as a warning there.
	out, _, _ = runKseg(t, nil, "-o", "json", "verify", dir)
	if !strings.Contains(out, `"severity":"warning","check":"index.padding"`) {
		t.Errorf("verify: %s", out)
	}
}

func TestLookupMissingIndexUsesRecoveredIndex(t *testing.T) {
	t.Parallel()
	check := func(name, dir string) {
		t.Helper()
		// The broker's view: the same logs with the indexes recovery
		// writes, written by kseg rebuild.
		rebuilt := copyPartition(t, dir, t.TempDir())
		if _, errOut, code := runKseg(t, nil, "-q", "rebuild", "--no-backup", rebuilt); code != exitOK {
			t.Fatalf("%s: rebuild: %d %s", name, code, errOut)
		}
		p := partitionAt(t, dir)
		offsets, timestamps := targetsOf(t, p)
		if len(offsets) > 400 {
			offsets = offsets[len(offsets)-400:]
		}
		lookupsAgree(t, name, p, partitionAt(t, rebuilt), offsets, timestamps)
	}
	dir := filepath.Join(t.TempDir(), "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 45, Segments: 3, Batches: 90, ValueSize: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*kafkagen.SegmentManifest{&m.Segments[0], &m.Segments[1]} {
		if err := os.Remove(m.IndexPath(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(m.TimeIndexPath(&m.Segments[1])); err != nil {
		t.Fatal(err)
	}
	check("generated", dir)
	goCallerGetsTheCLIsAnswer(t, dir, m.LogEndOffset)
	out, _, _ := runKseg(t, nil, "-o", "json", "lookup", "--trace", dir, "50")
	if !strings.Contains(out, `"index_entry":{"slot":`) || !strings.Contains(out, "recovery would write (built in memory, nothing written)") {
		t.Errorf("lookup on a segment without .index: %s", out)
	}

	real := realFixturesIfAny()
	if real == "" {
		t.Skipf("real broker fixtures not found at %s; the generated partition was checked", realFixtures)
	}
	n := 0
	for _, fx := range []string{"cp51-zk-lz4-unclean-noindex", "zk-kafka26-unclean-noindex", "kafkalite-magic0-none-gzip-snappy"} {
		parts, _ := filepath.Glob(filepath.Join(real, fx, "*-[0-9]*"))
		for _, pd := range parts {
			if fi, err := os.Stat(pd); err != nil || !fi.IsDir() {
				continue
			}
			check(fx+"/"+filepath.Base(pd), pd)
			n++
		}
	}
	if n < 5 {
		t.Errorf("%d real partitions without index files checked", n)
	}
}

// goCallerGetsTheCLIsAnswer: lookup.Offset, called from Go on a partition
// whose segments miss index files, answers every offset as kseg lookup
// does (the same index entry, from the recovered index, and the same
// scanned bytes), and Partition.LookupOffset without recovered indexes
// does not (it searches such a segment from position 0).
func goCallerGetsTheCLIsAnswer(t *testing.T, dir string, leo int64) {
	t.Helper()
	p := partitionAt(t, dir)
	differ := 0
	for o := int64(0); o < leo; o += 7 {
		r, err := lookup.Offset(p, o, lookup.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runKseg(t, nil, "-o", "json", "lookup", dir, strconv.FormatInt(o, 10))
		var cli lookupJSON
		if code != exitOK || json.Unmarshal([]byte(out), &cli) != nil {
			t.Fatalf("kseg lookup %d: exit %d, %s%s", o, code, out, errOut)
		}
		if (cli.IndexEntry == nil) != (r.IndexEntry == nil) || cli.IndexEntry != nil && (cli.IndexEntry.Offset != r.IndexEntry.Offset || cli.IndexEntry.Position != r.IndexEntry.Position) ||
			cli.ScannedBytes != r.ScannedBytes || cli.Batch.BaseOffset != r.Batch.BaseOffset {
			t.Fatalf("offset %d: lookup.Offset %+v, kseg lookup %s", o, r, out)
		}
		plain, err := p.LookupOffset(o, inspect.LookupOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if plain.ScannedBytes != r.ScannedBytes {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("Partition.LookupOffset without recovered indexes answered every offset as the broker does: the check checks nothing")
	}
}

// The log start offset comes from log-start-offset-checkpoint when it is
// above the first segment's base offset (after DeleteRecords or
// retention): lookups below it find nothing, time lookups start there.
func TestLookupLogStartFromCheckpoint(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "orders-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 46, Segments: 2, Batches: 30})
	if err != nil {
		t.Fatal(err)
	}
	start := m.Segments[1].Batches[2].BaseOffset
	if err := os.WriteFile(filepath.Join(data, "log-start-offset-checkpoint"), fmt.Appendf(nil, "0\n1\norders 0 %d\n", start), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runKseg(t, nil, "-o", "json", "lookup", "--trace", dir, fmt.Sprint(start-1))
	if code != exitNegative || !strings.Contains(out, `"found":false`) || !strings.Contains(out, "below the log start offset") || !strings.Contains(out, "from log-start-offset-checkpoint") {
		t.Errorf("lookup below the log start: exit %d %s", code, out)
	}
	out, _, code = runKseg(t, nil, "-o", "json", "lookup", dir, fmt.Sprint(start))
	if code != exitOK || !strings.Contains(out, fmt.Sprintf(`"base_offset":%d`, start)) {
		t.Errorf("lookup at the log start: exit %d %s", code, out)
	}
	out, _, code = runKseg(t, nil, "-o", "json", "lookup-time", "--trace", dir, "earliest")
	if code != exitOK || !strings.Contains(out, fmt.Sprintf(`"offset":%d,`, start)) || !strings.Contains(out, "from log-start-offset-checkpoint") {
		t.Errorf("earliest: exit %d %s", code, out)
	}
	// A timestamp of the first segment, all of whose records are below the
	// log start: the broker picks that segment (the first whose largest
	// timestamp reaches the target, UnifiedLog.fetchOffsetByTimestamp),
	// finds no record at or above the log start in it, and answers none.
	first := m.Segments[0].Batches[0].MaxTimestamp
	out, _, code = runKseg(t, nil, "-o", "json", "lookup-time", dir, fmt.Sprint(first))
	if code != exitNegative || !strings.Contains(out, `"found":false`) {
		t.Errorf("lookup-time %d: exit %d %s; want not found", first, code, out)
	}
	// A timestamp of the second segment: the first record at or above the
	// log start whose timestamp reaches it.
	target := m.Segments[1].Batches[0].MaxTimestamp
	want := int64(-1)
	for _, b := range m.Segments[1].Batches {
		for _, r := range b.Records {
			if want < 0 && r.Offset >= start && r.Timestamp >= target {
				want = r.Offset
			}
		}
	}
	out, _, code = runKseg(t, nil, "-o", "json", "lookup-time", dir, fmt.Sprint(target))
	if code != exitOK || !strings.Contains(out, fmt.Sprintf(`"found":true,"offset":%d,`, want)) {
		t.Errorf("lookup-time %d: exit %d %s; want offset %d", target, code, out, want)
	}
	// Without the checkpoint: the first segment's base offset.
	if err := os.Remove(filepath.Join(data, "log-start-offset-checkpoint")); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runKseg(t, nil, "-o", "json", "lookup-time", "--trace", dir, "earliest")
	if !strings.Contains(out, `"offset":0,`) || !strings.Contains(out, "from first segment's base offset") {
		t.Errorf("earliest without a checkpoint: %s", out)
	}
}

// A .timeindex missing on a segment the next start does not recover: the
// broker's loader creates an empty one, so the segment's largest timestamp
// is the .log's modification time (LogSegment.largestTimestamp), and a
// timestamp lookup passes over a segment whose file time is older than the
// target. Recovered (no recovery point), the index is rebuilt and the
// segment is found.
func TestLookupTimeMissingTimeIndexKept(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 48, Segments: 2, Batches: 30})
	if err != nil {
		t.Fatal(err)
	}
	s0 := &m.Segments[0]
	if err := os.Remove(m.TimeIndexPath(s0)); err != nil {
		t.Fatal(err)
	}
	old := time.UnixMilli(s0.Batches[0].MaxTimestamp - 1000)
	if err := os.Chtimes(m.LogPath(s0), old, old); err != nil {
		t.Fatal(err)
	}
	target := s0.Batches[5].MaxTimestamp
	out, _, code := runKseg(t, nil, "-o", "json", "lookup-time", dir, fmt.Sprint(target))
	if code != exitOK || !strings.Contains(out, `"segment_base_offset":0,`) {
		t.Errorf("recovered segment 0 (its time index rebuilt): exit %d %s", code, out)
	}
	if err := os.WriteFile(filepath.Join(data, "recovery-point-offset-checkpoint"), fmt.Appendf(nil, "0\n1\ndemo 0 %d\n", m.LogEndOffset), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = runKseg(t, nil, "-o", "json", "lookup-time", "--trace", dir, fmt.Sprint(target))
	want := fmt.Sprintf(`"found":true,"offset":%d,`, m.Segments[1].Batches[0].BaseOffset)
	if code != exitOK || !strings.Contains(out, want) || !strings.Contains(out, "creates an empty time index") {
		t.Errorf("kept segment 0 without a time index: exit %d %s; want %s", code, out, want)
	}
}
