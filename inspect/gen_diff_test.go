package inspect_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// genShapes are the partition shapes the differential tests run over: every
// magic and codec, every timestamp pattern, LogAppendTime, compaction gaps,
// transactions, several segments, an empty active segment and zero-padded
// indexes, each with dense (every batch), default and no index entries.
func genShapes() map[string]kafkagen.Options {
	base := map[string]kafkagen.Options{
		"v2-none":          {},
		"v2-gzip":          {Compression: "gzip"},
		"v2-snappy":        {Compression: "snappy", Timestamps: "jumping"},
		"v2-snappy-raw":    {Compression: "snappy-raw"},
		"v2-lz4-lat":       {Compression: "lz4", LogAppendTime: 0.5},
		"v2-zstd-random":   {Compression: "zstd", Timestamps: "random"},
		"v2-equal-ts":      {Timestamps: "equal"},
		"v2-compacted":     {CompactionGaps: true, Timestamps: "random"},
		"v2-txn":           {Transactions: true, Timestamps: "jumping"},
		"v2-txn-compacted": {Transactions: true, CompactionGaps: true, Compression: "lz4"},
		"v2-padded-empty":  {PreallocatedIndexBytes: 4096, EmptyActiveSegment: true},
		"v2-start-offset":  {StartOffset: 1 << 40, LogAppendTime: 1},
		"v1-none":          {Magic: 1},
		"v1-gzip-lat":      {Magic: 1, Compression: "gzip", LogAppendTime: 0.3},
		"v1-lz4-compacted": {Magic: 1, Compression: "lz4", CompactionGaps: true, Timestamps: "random"},
		"v0-none":          {Magic: kafkagen.MagicV0},
		"v0-snappy":        {Magic: kafkagen.MagicV0, Compression: "snappy"},
		"v0-lz4":           {Magic: kafkagen.MagicV0, Compression: "lz4", CompactionGaps: true},
	}
	out := map[string]kafkagen.Options{}
	intervals := map[string]int{"dense": kafkagen.IndexEveryBatch, "default": 0, "none": 1 << 30}
	i := int64(0)
	for name, o := range base {
		for iname, iv := range intervals {
			i++
			o := o
			o.Seed = i
			o.Segments = 3
			o.Batches = 25
			o.RecordsPerBatch = 6
			o.ValueSize = 100
			o.IndexIntervalBytes = iv
			out[name+"/"+iname] = o
		}
	}
	return out
}

type manifestRecord struct {
	segment int
	batch   *kafkagen.BatchManifest
	rec     kafkagen.RecordManifest
}

func generate(t *testing.T, name string, o kafkagen.Options) (*inspect.Partition, *kafkagen.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo-0")
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatalf("%s: gen: %v", name, err)
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tg.Partitions[0], m
}

// TestLookupsMatchBruteForceOnGeneratedPartitions is the differential test
// of issue #2: for every offset from below the start to past the end,
// LookupOffset returns the first batch whose last offset >= target (in the
// floor segment or later); for every record timestamp, +-1, and outside the
// range, LookupTime returns the first record in offset order whose
// timestamp >= target.
func TestLookupsMatchBruteForceOnGeneratedPartitions(t *testing.T) {
	for name, o := range genShapes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, m := generate(t, name, o)
			var recs []manifestRecord
			for si := range m.Segments {
				s := &m.Segments[si]
				for bi := range s.Batches {
					b := &s.Batches[bi]
					for _, r := range b.Records {
						recs = append(recs, manifestRecord{si, b, r})
					}
				}
			}
			// Every offset (-short: every third, and those within 3 of
			// either end).
			every, sample := int64(1), 300
			if testing.Short() {
				every, sample = 3, 100
			}
			first := m.Segments[0].BaseOffset
			for target := first - 3; target <= m.LogEndOffset+3; target++ {
				if (target-first)%every != 0 && target > first+3 && target < m.LogEndOffset-3 {
					continue
				}
				got, err := p.LookupOffset(target, inspect.LookupOptions{})
				if err != nil {
					t.Fatalf("offset %d: %v", target, err)
				}
				wantSeg, wantBatch := bruteOffset(m, target)
				if got.Found != (wantBatch != nil) {
					t.Fatalf("offset %d: found=%v (%s), brute force found=%v", target, got.Found, got.Reason, wantBatch != nil)
				}
				if wantBatch == nil {
					continue
				}
				if got.SegmentBaseOffset != m.Segments[wantSeg].BaseOffset || got.Batch.Position != wantBatch.Position {
					t.Fatalf("offset %d: got %s@%d, want segment %d @%d", target, got.Segment, got.Batch.Position, m.Segments[wantSeg].BaseOffset, wantBatch.Position)
				}
			}
			targets := map[int64]bool{0: true, 1 << 62: true}
			for _, r := range recs {
				targets[r.rec.Timestamp-1], targets[r.rec.Timestamp], targets[r.rec.Timestamp+1] = true, true, true
			}
			// Every record timestamp and its neighbours in small partitions;
			// a deterministic sample of 300 of them otherwise (-short: 100).
			var list []int64
			for target := range targets {
				if target >= 0 {
					list = append(list, target)
				}
			}
			slices.Sort(list)
			if n := len(list); n > sample {
				picked := list[:0:0]
				for i := 0; i < sample; i++ {
					picked = append(picked, list[i*n/sample])
				}
				list = append(picked, list[n-1])
			}
			for _, target := range list {
				got, err := p.LookupTime(target, inspect.LookupOptions{})
				if err != nil {
					t.Fatalf("timestamp %d: %v", target, err)
				}
				want, ok := bruteTime(recs, target)
				if got.Found != ok {
					t.Fatalf("timestamp %d: found=%v (%s), brute force found=%v %+v", target, got.Found, got.Reason, ok, want.rec)
				}
				if ok && (got.Offset != want.rec.Offset || got.Timestamp != want.rec.Timestamp || got.Batch.Position != want.batch.Position) {
					t.Fatalf("timestamp %d: got offset %d ts %d batch@%d, want offset %d ts %d batch@%d", target, got.Offset, got.Timestamp, got.Batch.Position, want.rec.Offset, want.rec.Timestamp, want.batch.Position)
				}
			}
			checkSpecialTimes(t, p, m, recs)
		})
	}
}

func bruteOffset(m *kafkagen.Manifest, target int64) (int, *kafkagen.BatchManifest) {
	floor := -1
	for i, s := range m.Segments {
		if s.BaseOffset <= target {
			floor = i
		}
	}
	if floor < 0 {
		return 0, nil
	}
	for si := floor; si < len(m.Segments); si++ {
		for bi := range m.Segments[si].Batches {
			if b := &m.Segments[si].Batches[bi]; b.LastOffset >= target {
				return si, b
			}
		}
	}
	return 0, nil
}

func bruteTime(recs []manifestRecord, target int64) (manifestRecord, bool) {
	for _, r := range recs {
		if r.rec.Timestamp >= target {
			return r, true
		}
	}
	return manifestRecord{}, false
}

// checkSpecialTimes: earliest is the first segment's base offset, latest
// the log end offset, max the first record carrying the largest timestamp
// (Kafka 3.8+), none for a partition without timestamps.
func checkSpecialTimes(t *testing.T, p *inspect.Partition, m *kafkagen.Manifest, recs []manifestRecord) {
	t.Helper()
	e, err := p.LookupTime(inspect.TimestampEarliest, inspect.LookupOptions{})
	if err != nil || !e.Found || e.Offset != m.Segments[0].BaseOffset {
		t.Fatalf("earliest: %v %+v", err, e)
	}
	l, err := p.LookupTime(inspect.TimestampLatest, inspect.LookupOptions{})
	if err != nil || !l.Found || l.Offset != m.LogEndOffset {
		t.Fatalf("latest: %v %+v, want %d", err, l, m.LogEndOffset)
	}
	x, err := p.LookupTime(inspect.TimestampMax, inspect.LookupOptions{})
	if err != nil {
		t.Fatalf("max: %v", err)
	}
	var best *manifestRecord
	for i := range recs {
		if r := &recs[i]; r.rec.Timestamp >= 0 && (best == nil || r.rec.Timestamp > best.rec.Timestamp) {
			best = r
		}
	}
	if best == nil {
		if x.Found {
			t.Fatalf("max: found %+v in a partition without timestamps", x)
		}
		return
	}
	if !x.Found || x.Offset != best.rec.Offset || x.Timestamp != best.rec.Timestamp {
		t.Fatalf("max: got %+v, want offset %d ts %d", x, best.rec.Offset, best.rec.Timestamp)
	}
}
