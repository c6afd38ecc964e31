package inspect_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// healthyShapes are generated partitions whose indexes are as brokers
// write them: every magic, codecs, timestamp patterns, LogAppendTime,
// compaction gaps, transactions, sparse and dense indexes, several
// segments, an empty active segment.
var healthyShapes = []kafkagen.Options{
	{},
	{Compression: "gzip", Timestamps: "jumping"},
	{Compression: "lz4", LogAppendTime: 0.5, IndexIntervalBytes: kafkagen.IndexEveryBatch},
	{Compression: "zstd", Timestamps: "random"},
	{CompactionGaps: true, Timestamps: "random", IndexIntervalBytes: kafkagen.IndexEveryBatch},
	{Transactions: true, Timestamps: "jumping", Compression: "snappy"},
	{Magic: 1, Compression: "gzip", LogAppendTime: 0.3},
	{Magic: 1, CompactionGaps: true, Timestamps: "random", IndexIntervalBytes: 1 << 30},
	{Magic: 1, Timestamps: "equal", IndexIntervalBytes: kafkagen.IndexEveryBatch},
	{Magic: kafkagen.MagicV0, Compression: "snappy"},
	{StartOffset: 1 << 40, Timestamps: "equal", EmptyActiveSegment: true},
	{Timestamps: "equal", IndexIntervalBytes: kafkagen.IndexEveryBatch},
}

// noMisleading looks up offsets and timestamps across p (every batch's
// first and last offset and max timestamp, at most about 120 of each)
// and fails when a lookup calls an entry misleading: healthy indexes
// never are.
func noMisleading(t *testing.T, p *inspect.Partition) int {
	t.Helper()
	all := allBatches(t, p)
	step := max(1, len(all)/120)
	n := 0
	for i := 0; i < len(all); i += step {
		b := all[i].b
		for _, off := range []int64{b.BaseOffset, b.LastOffset} {
			if off < 0 {
				continue
			}
			ol, err := p.LookupOffset(off, inspect.LookupOptions{})
			if err != nil {
				t.Fatalf("offset %d: %v", off, err)
			}
			if len(ol.Misleading) > 0 || ol.ByScan != nil {
				t.Fatalf("offset %d: %s", off, ol.Misleading[0].String())
			}
			n++
		}
		if b.MaxTimestamp < 0 {
			continue
		}
		for _, ts := range []int64{b.MaxTimestamp, b.MaxTimestamp - 1} {
			tl, err := p.LookupTime(ts, inspect.LookupOptions{CheckPassedOver: true})
			if err != nil {
				t.Fatalf("timestamp %d: %v", ts, err)
			}
			if len(tl.Misleading) > 0 || tl.ByScan != nil {
				t.Fatalf("timestamp %d: %s", ts, tl.Misleading[0].String())
			}
			n++
		}
	}
	return n
}

// TestHealthyIndexesNeverMislead: the rule for index entries
// (MisleadingEntry) holds on every real broker's data and on every
// generated shape: no lookup calls an entry misleading.
func TestHealthyIndexesNeverMislead(t *testing.T) {
	for _, p := range realPartitions(t) {
		t.Run(filepath.Base(filepath.Dir(p.Dir))+"/"+p.Name(), func(t *testing.T) {
			if noMisleading(t, p) == 0 && len(p.Segments) > 0 && p.Segments[0].Log != "" {
				t.Logf("no lookup made")
			}
		})
	}
	root := t.TempDir()
	for i, o := range healthyShapes {
		o.Seed = int64(i + 1)
		o.Segments = 3
		o.Batches = 40
		dir := filepath.Join(root, "shape-"+string(rune('a'+i)))
		if _, err := kafkagen.Generate(dir, o); err != nil {
			t.Fatal(err)
		}
		p, err := inspect.ReadPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if noMisleading(t, p) == 0 {
				t.Fatal("no lookup made")
			}
		})
	}
}

// bruteTimeLookup is the broker's timestamp search over a consistent
// partition, written over the generator's manifest: the first segment
// whose largest timestamp (its batches' max) is >= target, and in it the
// first record with a timestamp >= target and an offset >= start.
func bruteTimeLookup(m *kafkagen.Manifest, target, start int64) (offset, ts int64, found bool) {
	for si := range m.Segments {
		seg := &m.Segments[si]
		if seg.MaxTimestamp < target {
			continue
		}
		for _, b := range seg.Batches {
			for _, r := range b.Records {
				if r.Timestamp >= target && r.Offset >= start {
					return r.Offset, r.Timestamp, true
				}
			}
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// TestLookupsThroughDamagedIndexes: over partitions whose indexes were
// damaged at random (gentest.DamageIndexes; the logs intact), an offset or
// timestamp lookup either reports no misleading entry and answers what a
// scan of the log answers, or names the entries that misled it and gives
// that answer in ByScan; the broker's own answer (the lookup's fields) is
// still the one that follows the entries (checked against the lookup
// without the rule by TestLookupOffsetRealFixturesMatchBruteForce and the
// command's broker tests). Both brute forces scan the log: allBatches for
// offsets, the generator's manifest for timestamps; the timestamp lookups
// judge the segments they pass over too (CheckPassedOver, as a search
// does).
func TestLookupsThroughDamagedIndexes(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	root := t.TempDir()
	misled := 0
	for trial := range 36 {
		o := healthyShapes[trial%len(healthyShapes)]
		o.Seed = int64(200 + trial)
		o.Segments, o.Batches, o.RecordsPerBatch = 2, 30, 4
		dir := filepath.Join(root, fmt.Sprintf("t-%d", trial))
		m, err := kafkagen.Generate(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		did := gentest.DamageIndexes(t, rng, m)
		p, err := inspect.ReadPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.ReadBrokerState()
		if err != nil {
			t.Fatal(err)
		}
		all := allBatches(t, p)
		if len(all) == 0 {
			continue
		}
		for range 16 {
			b := all[rng.IntN(len(all))].b
			target := b.LastOffset - int64(rng.IntN(3))
			ol, err := p.LookupOffset(target, inspect.LookupOptions{})
			if err != nil {
				t.Fatalf("trial %d (%s) offset %d: %v", trial, did, target, err)
			}
			got := ol
			if ol.ByScan != nil {
				got, misled = ol.ByScan, misled+1
			}
			want, ok := bruteLookup(p, all, target)
			if got.Found != ok || ok && (got.Batch.Position != want.b.Position || got.SegmentBaseOffset != p.Segments[want.segment].BaseOffset) {
				t.Errorf("trial %d (%s) offset %d: found %v at %s:%d, a scan finds %v at %d:%d; misleading: %v",
					trial, did, target, got.Found, got.Segment, got.Batch.Position, ok, want.segment, want.b.Position, ol.Misleading)
			}
			if b.MaxTimestamp < 0 {
				continue
			}
			ts := b.MaxTimestamp - int64(rng.IntN(3))
			tl, err := p.LookupTime(ts, inspect.LookupOptions{CheckPassedOver: true})
			if err != nil {
				t.Fatalf("trial %d (%s) timestamp %d: %v", trial, did, ts, err)
			}
			gt := tl
			if tl.ByScan != nil {
				gt, misled = tl.ByScan, misled+1
			}
			off, ots, ok := bruteTimeLookup(m, ts, st.LogStart)
			if gt.Found != ok || ok && (gt.Offset != off || gt.Timestamp != ots) {
				t.Errorf("trial %d (%s) timestamp %d: found %v offset %d (%d), a scan finds %v offset %d (%d); misleading: %v",
					trial, did, ts, gt.Found, gt.Offset, gt.Timestamp, ok, off, ots, tl.Misleading)
			}
		}
	}
	if misled == 0 {
		t.Fatal("no lookup was misled: the test exercises nothing")
	}
}

// TestLookupMaxThroughAMisleadingLastEntry: ListOffsets MAX_TIMESTAMP
// picks the segment with the greatest last time index entry. When that
// entry is too high (a timestamp no batch carries), the broker's answer
// finds no record; the lookup names the entry and ByScan is the record
// carrying the partition's largest timestamp, as a scan finds it.
func TestLookupMaxThroughAMisleadingLastEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 5, Segments: 3, Batches: 30, Timestamps: "random"})
	if err != nil {
		t.Fatal(err)
	}
	// The brute force: the first segment with the largest max timestamp,
	// its first batch carrying it, that batch's first record carrying it.
	var want kafkagen.RecordManifest
	best := -1
	for si, seg := range m.Segments {
		if best < 0 || seg.MaxTimestamp > m.Segments[best].MaxTimestamp {
			best = si
		}
	}
	for _, b := range m.Segments[best].Batches {
		if b.MaxTimestamp == m.Segments[best].MaxTimestamp {
			for _, r := range b.Records {
				if r.Timestamp == b.MaxTimestamp {
					want = r
					break
				}
			}
			break
		}
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	healthy, err := p.LookupTime(inspect.TimestampMax, inspect.LookupOptions{})
	if err != nil || !healthy.Found || healthy.Offset != want.Offset || healthy.ByScan != nil {
		t.Fatalf("healthy: %+v, %v; want offset %d", healthy, err, want.Offset)
	}
	// The first segment's last entry raised above everything.
	seg := &m.Segments[0]
	last := seg.TimeIndexEntries - 1
	gentest.EditTimeIndex(t, m.TimeIndexPath(seg), func(slot int, ts *int64, _ *int32) {
		if slot == last {
			*ts = m.Segments[best].MaxTimestamp + 1000
		}
	})
	got, err := p.LookupTime(inspect.TimestampMax, inspect.LookupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Found || got.SegmentBaseOffset != seg.BaseOffset || len(got.Misleading) != 1 || got.ByScan == nil {
		t.Fatalf("the broker's answer %+v, misleading %v", got, got.Misleading)
	}
	if by := got.ByScan; !by.Found || by.Offset != want.Offset || by.Timestamp != want.Timestamp {
		t.Fatalf("by scan: %+v, want offset %d timestamp %d", by, want.Offset, want.Timestamp)
	}
}
