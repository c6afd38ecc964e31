package inspect_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// wantSummary is what a segment's summary must say, from the generator's
// manifest.
func wantSummary(m *kafkagen.Manifest, s *kafkagen.SegmentManifest) inspect.SegmentSummary {
	w := inspect.SegmentSummary{LogBytes: s.LogSize, Batches: int64(len(s.Batches)), FirstOffset: -1, LastOffset: -1,
		NextOffset: s.BaseOffset, FirstTimestamp: -1, LastTimestamp: -1}
	for _, b := range s.Batches {
		w.Records += int64(b.RecordCount)
	}
	if n := len(s.Batches); n > 0 {
		first, last := s.Batches[0], s.Batches[n-1]
		w.FirstOffset = first.BaseOffset
		if len(first.Records) > 0 {
			w.FirstOffset = first.Records[0].Offset
			w.FirstTimestamp = max(first.Records[0].Timestamp, -1)
		}
		w.LastOffset, w.NextOffset = last.LastOffset, last.LastOffset+1
		w.LastTimestamp = max(last.MaxTimestamp, -1)
	}
	// DumpLogSegments' padding rule never takes slot 0 for padding: a
	// zero-filled index of an empty segment has one entry (base offset,
	// position 0).
	atLeastSlot0 := func(entries int, size int64, entrySize int64) int {
		if entries == 0 && size >= entrySize {
			return 1
		}
		return entries
	}
	w.Index = inspect.IndexStats{Present: true, Bytes: s.IndexFileSize, Slots: int(s.IndexFileSize / indexfmt.OffsetEntrySize),
		Entries: atLeastSlot0(s.IndexEntries, s.IndexFileSize, indexfmt.OffsetEntrySize)}
	w.TimeIndex = inspect.IndexStats{Present: true, Bytes: s.TimeIndexFileSize, Slots: int(s.TimeIndexFileSize / indexfmt.TimeEntrySize),
		Entries: atLeastSlot0(s.TimeIndexEntries, s.TimeIndexFileSize, indexfmt.TimeEntrySize)}
	if s.TxnIndexWritten {
		w.TxnIndex = inspect.IndexStats{Present: true, Bytes: int64(s.TxnEntries) * indexfmt.TxnEntrySize, Slots: s.TxnEntries, Entries: s.TxnEntries}
	}
	return w
}

// Summaries of every generated shape agree with the generator: offsets,
// timestamps, counts, index files; a shallow summary (which reads from the
// last index entry) finds the same end as a deep one.
func TestSummarizeGeneratedShapes(t *testing.T) {
	for name, o := range genShapes() {
		p, m := generate(t, name, o)
		deep, err := p.Summarize(inspect.SummaryOptions{Deep: true})
		if err != nil {
			t.Fatalf("%s: deep: %v", name, err)
		}
		shallow, err := p.Summarize(inspect.SummaryOptions{})
		if err != nil {
			t.Fatalf("%s: shallow: %v", name, err)
		}
		if len(deep) != len(m.Segments) || len(shallow) != len(m.Segments) {
			t.Fatalf("%s: %d and %d summaries for %d segments", name, len(deep), len(shallow), len(m.Segments))
		}
		for i := range m.Segments {
			w := wantSummary(m, &m.Segments[i])
			checkSummary(t, name, i, "deep", deep[i], w, &m.Segments[i])
			checkSummary(t, name, i, "shallow", shallow[i], w, &m.Segments[i])
		}
	}
}

// checkSummary compares the summary g of segment i (sm) with w, from
// wantSummary; how is "deep" or "shallow".
func checkSummary(t *testing.T, name string, i int, how string, g, w inspect.SegmentSummary, sm *kafkagen.SegmentManifest) {
	t.Helper()
	if g.Files.BaseOffset != sm.BaseOffset || g.LogBytes != w.LogBytes ||
		g.FirstOffset != w.FirstOffset || g.LastOffset != w.LastOffset || g.NextOffset != w.NextOffset ||
		g.FirstTimestamp != w.FirstTimestamp || g.LastTimestamp != w.LastTimestamp ||
		g.Index != w.Index || g.TimeIndex != w.TimeIndex || g.TxnIndex != w.TxnIndex ||
		g.Damage != nil || g.IndexAstray {
		t.Errorf("%s segment %d %s:\n got %+v\nwant %+v", name, i, how, g, w)
	}
	// Counted when the scan covered the log: always deep; shallow when no
	// index entry gave a later start.
	wantCounted := how == "deep" || sm.IndexEntries == 0 || sm.OffsetIndex[sm.IndexEntries-1].Position == 0
	if g.Counted != wantCounted {
		t.Errorf("%s segment %d %s: Counted %v, want %v", name, i, how, g.Counted, wantCounted)
	}
	if g.Counted && (g.Batches != w.Batches || g.Records != w.Records) {
		t.Errorf("%s segment %d %s: %d batches, %d records; want %d, %d", name, i, how, g.Batches, g.Records, w.Batches, w.Records)
	}
	if !g.Counted && (g.Batches != -1 || g.Records != -1) {
		t.Errorf("%s segment %d %s: not counted but %d batches, %d records", name, i, how, g.Batches, g.Records)
	}
}

// TestSummarizeReusesScratchAcrossSizes: shallow summaries reuse their
// buffers and iterators from segment to segment. Segments whose batches
// are larger than the first read (16 KiB) and than the tail window (64 KiB)
// grow them; the segments of small batches summarized after them, in
// turn and many times, must still be summarized exactly.
func TestSummarizeReusesScratchAcrossSizes(t *testing.T) {
	shapes := []struct {
		name string
		o    kafkagen.Options
	}{
		{"small", kafkagen.Options{Seed: 1, Segments: 3, Batches: 20, RecordsPerBatch: 2, ValueSize: 100}},
		{"large", kafkagen.Options{Seed: 2, Segments: 3, Batches: 6, RecordsPerBatch: 3, ValueSize: 40 << 10, IndexIntervalBytes: kafkagen.IndexEveryBatch}},
		{"first-20k", kafkagen.Options{Seed: 3, Segments: 2, Batches: 8, RecordsPerBatch: 2, ValueSize: 10 << 10}},
		{"large-zstd", kafkagen.Options{Seed: 4, Segments: 2, Batches: 4, RecordsPerBatch: 2, ValueSize: 50 << 10, Compression: "zstd"}},
	}
	type gen struct {
		p *inspect.Partition
		m *kafkagen.Manifest
	}
	var gens []gen
	for _, sh := range shapes {
		p, m := generate(t, sh.name, sh.o)
		gens = append(gens, gen{p, m})
	}
	for round := range 3 {
		for k, g := range gens {
			sums, err := g.p.Summarize(inspect.SummaryOptions{})
			if err != nil {
				t.Fatalf("%s: %v", shapes[k].name, err)
			}
			if len(sums) != len(g.m.Segments) {
				t.Fatalf("%s: %d summaries for %d segments", shapes[k].name, len(sums), len(g.m.Segments))
			}
			for i := range sums {
				checkSummary(t, fmt.Sprintf("%s (round %d)", shapes[k].name, round), i, "shallow", sums[i], wantSummary(g.m, &g.m.Segments[i]), &g.m.Segments[i])
			}
		}
	}
}

func summarizeOne(t *testing.T, dir string, deep bool) inspect.SegmentSummary {
	t.Helper()
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := p.Summarize(inspect.SummaryOptions{Deep: deep})
	if err != nil {
		t.Fatal(err)
	}
	return sums[len(sums)-1]
}

// Damage, found where a broker's iterator would stop, with its position.
func TestSummarizeDamage(t *testing.T) {
	o := kafkagen.Options{Seed: 4, Batches: 40, ValueSize: 200}
	newPart := func(t *testing.T) (*kafkagen.Manifest, *kafkagen.SegmentManifest, string) {
		m, err := kafkagen.Generate(filepath.Join(t.TempDir(), "demo-0"), o)
		if err != nil {
			t.Fatal(err)
		}
		s := &m.Segments[0]
		return m, s, m.LogPath(s)
	}
	damageAt := func(t *testing.T, err error, kind error, pos int64) {
		t.Helper()
		var ce *fileio.CorruptError
		if !errors.Is(err, kind) || !errors.As(err, &ce) || ce.Position != pos {
			t.Errorf("damage %v, want %v at byte %d", err, kind, pos)
		}
	}

	t.Run("torn tail", func(t *testing.T) {
		m, s, log := newPart(t)
		last := s.Batches[len(s.Batches)-1]
		if err := os.Truncate(log, last.Position+last.Size-7); err != nil {
			t.Fatal(err)
		}
		for _, deep := range []bool{false, true} {
			g := summarizeOne(t, m.Dir, deep)
			damageAt(t, g.Damage, fileio.ErrTorn, last.Position)
			prev := s.Batches[len(s.Batches)-2]
			if g.LastOffset != prev.LastOffset || g.IndexAstray {
				t.Errorf("deep %v: last offset %d (astray %v), want %d", deep, g.LastOffset, g.IndexAstray, prev.LastOffset)
			}
		}
	})
	t.Run("corrupt header in the middle", func(t *testing.T) {
		m, s, log := newPart(t)
		b := s.Batches[5]
		f, err := os.OpenFile(log, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte{0, 0, 0, 1}, b.Position+8) // length 1 < 14
		f.Close()
		shallow := summarizeOne(t, m.Dir, false)
		if shallow.Damage != nil || shallow.LastOffset != s.Batches[len(s.Batches)-1].LastOffset {
			t.Errorf("shallow: damage %v, last offset %d: a shallow summary reads only the tail", shallow.Damage, shallow.LastOffset)
		}
		deep := summarizeOne(t, m.Dir, true)
		damageAt(t, deep.Damage, fileio.ErrCorruptHeader, b.Position)
		if deep.Batches != 5 || deep.LastOffset != s.Batches[4].LastOffset {
			t.Errorf("deep: %d batches up to offset %d, want 5 up to %d", deep.Batches, deep.LastOffset, s.Batches[4].LastOffset)
		}
	})
	t.Run("last index entry astray", func(t *testing.T) {
		m, s, _ := newPart(t)
		if s.IndexEntries == 0 {
			t.Fatal("no index entries to damage")
		}
		// Point the last entry into the middle of a batch whose bytes
		// cannot be a header: the scan from position 0 proves the log fine.
		last := s.OffsetIndex[s.IndexEntries-1]
		var target kafkagen.BatchManifest
		for _, b := range s.Batches {
			if b.Position == int64(last.Position) {
				target = b
			}
		}
		bad := int32(target.Position + 30)
		f, err := os.OpenFile(m.IndexPath(s), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		var pos [4]byte
		pos[0], pos[1], pos[2], pos[3] = byte(bad>>24), byte(bad>>16), byte(bad>>8), byte(bad)
		f.WriteAt(pos[:], int64(s.IndexEntries-1)*8+4)
		f.Close()
		g := summarizeOne(t, m.Dir, false)
		if g.Damage == nil && !g.IndexAstray {
			t.Fatal("the bytes at the bad position parse as a batch: choose another seed or position")
		}
		w := wantSummary(m, s)
		if !g.IndexAstray || g.Damage != nil || g.LastOffset != w.LastOffset || !g.Counted || g.Batches != w.Batches {
			t.Errorf("got astray %v damage %v last %d counted %v batches %d; want astray, no damage, last %d, %d batches",
				g.IndexAstray, g.Damage, g.LastOffset, g.Counted, g.Batches, w.LastOffset, w.Batches)
		}
	})
	t.Run("entry past the log", func(t *testing.T) {
		m, s, _ := newPart(t)
		f, err := os.OpenFile(m.IndexPath(s), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte{0x7f, 0, 0, 0}, int64(s.IndexEntries-1)*8+4)
		f.Close()
		g := summarizeOne(t, m.Dir, false)
		w := wantSummary(m, s)
		if !g.IndexAstray || g.Damage != nil || g.LastOffset != w.LastOffset || !g.Counted {
			t.Errorf("got astray %v damage %v last %d counted %v; want astray, no damage, last %d, counted", g.IndexAstray, g.Damage, g.LastOffset, g.Counted, w.LastOffset)
		}
	})
	t.Run("trailing bytes and missing files", func(t *testing.T) {
		m, s, _ := newPart(t)
		f, err := os.OpenFile(m.IndexPath(s), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte{9, 9, 9})
		f.Close()
		if err := os.Remove(m.TimeIndexPath(s)); err != nil {
			t.Fatal(err)
		}
		g := summarizeOne(t, m.Dir, false)
		if g.Index.Trailing != 3 || g.Index.Entries != s.IndexEntries || g.TimeIndex.Present || g.Damage != nil {
			t.Errorf("index %+v, time index %+v, damage %v", g.Index, g.TimeIndex, g.Damage)
		}
	})
	t.Run("empty log", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "empty-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"00000000000000000042.log", "00000000000000000042.index", "00000000000000000042.timeindex"} {
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		g := summarizeOne(t, dir, false)
		if g.FirstOffset != -1 || g.LastOffset != -1 || g.NextOffset != 42 || !g.Counted || g.Batches != 0 || g.Damage != nil || g.Index.Padded() {
			t.Errorf("empty segment: %+v", g)
		}
	})
}

// Progress of a deep summary counts every byte of every log once.
func TestSummarizeProgress(t *testing.T) {
	p, m := generate(t, "progress", kafkagen.Options{Seed: 2, Segments: 3, Batches: 120, RecordsPerBatch: 3, ValueSize: 20000})
	var total int64
	for i := range m.Segments {
		total += m.Segments[i].LogSize
	}
	var calls [][2]int64
	if _, err := p.Summarize(inspect.SummaryOptions{Deep: true, Progress: func(d, n int64) { calls = append(calls, [2]int64{d, n}) }}); err != nil {
		t.Fatal(err)
	}
	if len(calls) < 2 || calls[len(calls)-1] != [2]int64{total, total} {
		t.Fatalf("calls %v, want several ending with (%d, %d)", calls, total, total)
	}
	calls = nil
	if _, err := p.Summarize(inspect.SummaryOptions{Progress: func(d, n int64) { calls = append(calls, [2]int64{d, n}) }}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 0 {
		t.Errorf("a shallow summary reported progress %v", calls)
	}
}
