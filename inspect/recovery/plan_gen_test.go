package recovery

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// genShapes are generated partitions of every shape gen writes. gen builds
// its indexes through the broker's append path (4.1+, one batch per append,
// one LogSegment object per segment), which leaves exactly what recovery
// rebuilds (kafka-on-disk.md section 8.2), so every plan must equal the
// files byte for byte.
var genShapes = []struct {
	name string
	opts kafkagen.Options
}{
	{"v2-none", kafkagen.Options{}},
	{"v2-gzip", kafkagen.Options{Compression: "gzip"}},
	{"v2-snappy", kafkagen.Options{Compression: "snappy"}},
	{"v2-snappy-raw", kafkagen.Options{Compression: "snappy-raw"}},
	{"v2-lz4", kafkagen.Options{Compression: "lz4"}},
	{"v2-zstd", kafkagen.Options{Compression: "zstd"}},
	{"random-timestamps", kafkagen.Options{Timestamps: "random"}},
	{"jumping-timestamps", kafkagen.Options{Timestamps: "jumping", Compression: "lz4"}},
	{"equal-timestamps", kafkagen.Options{Timestamps: "equal"}},
	{"log-append-time", kafkagen.Options{LogAppendTime: 0.5, Timestamps: "random"}},
	{"compaction-gaps", kafkagen.Options{CompactionGaps: true, Segments: 3}},
	{"transactions", kafkagen.Options{Transactions: true, Segments: 4, Batches: 120}},
	{"transactions-gzip-random", kafkagen.Options{Transactions: true, Segments: 3, Compression: "gzip", Timestamps: "random"}},
	{"several-segments", kafkagen.Options{Segments: 5, Batches: 40, StartOffset: 1 << 33}},
	{"empty-active-segment", kafkagen.Options{Segments: 2, Batches: 30, EmptyActiveSegment: true}},
	{"v1-none", kafkagen.Options{Magic: 1}},
	{"v1-gzip-gaps", kafkagen.Options{Magic: 1, Compression: "gzip", CompactionGaps: true, Segments: 2}},
	{"v1-log-append-time", kafkagen.Options{Magic: 1, Compression: "lz4", LogAppendTime: 1}},
	{"v0-none", kafkagen.Options{Magic: kafkagen.MagicV0}},
	{"v0-snappy", kafkagen.Options{Magic: kafkagen.MagicV0, Compression: "snappy", Segments: 2}},
}

// intervals are index.interval.bytes values: every batch, the smallest
// positive, the default, and larger than any generated segment.
var intervals = []struct {
	gen  int
	plan int64
}{
	{kafkagen.IndexEveryBatch, IndexEveryBatch},
	{1, 1},
	{4096, 0}, // the plan's zero value is the default
	{1 << 30, 1 << 30},
}

func TestPlanMatchesGeneratedIndexes(t *testing.T) {
	for _, shape := range genShapes {
		for _, iv := range intervals {
			t.Run(fmt.Sprintf("%s/interval=%d", shape.name, iv.gen), func(t *testing.T) {
				o := shape.opts
				o.Seed = int64(len(shape.name))*1000 + int64(iv.gen)
				o.IndexIntervalBytes = iv.gen
				dir := filepath.Join(t.TempDir(), "demo-0")
				m, err := kafkagen.Generate(dir, o)
				if err != nil {
					t.Fatalf("kafkagen.Generate: %v", err)
				}
				p, err := inspect.ReadPartition(dir)
				if err != nil {
					t.Fatal(err)
				}
				plans, err := PlanPartition(p, Options{IndexIntervalBytes: iv.plan})
				if err != nil {
					t.Fatalf("PlanPartition: %v", err)
				}
				if len(plans) != len(m.Segments) {
					t.Fatalf("%d plans for %d segments", len(plans), len(m.Segments))
				}
				entries := 0
				for i := range plans {
					pl, sm := &plans[i], &m.Segments[i]
					entries += pl.IndexEntries
					checkPlanAgainstManifest(t, m, pl, sm)
				}
				if iv.gen != 1<<30 && m.LogEndOffset > 200 && entries == 0 {
					t.Errorf("no offset-index entry in the whole partition: the case does not exercise index points")
				}
			})
		}
	}
}

func checkPlanAgainstManifest(t *testing.T, m *kafkagen.Manifest, pl *SegmentRecovery, sm *kafkagen.SegmentManifest) {
	t.Helper()
	name := pl.Segment.Name()
	if pl.Segment.BaseOffset != sm.BaseOffset {
		t.Fatalf("plan for base %d, manifest segment %d", pl.Segment.BaseOffset, sm.BaseOffset)
	}
	if pl.StopErr != nil || pl.ValidBytes != sm.LogSize || pl.TruncatedBytes != 0 {
		t.Errorf("%s: valid %d truncated %d stop %v; want the whole log (%d bytes) valid", name, pl.ValidBytes, pl.TruncatedBytes, pl.StopErr, sm.LogSize)
	}
	if pl.Batches != len(sm.Batches) {
		t.Errorf("%s: %d batches, manifest has %d", name, pl.Batches, len(sm.Batches))
	}
	if got := gentest.ReadFileOrNil(t, m.IndexPath(sm)); !bytes.Equal(pl.Index, got) {
		t.Errorf("%s: offset index differs: plan %d bytes (%d entries), file %d bytes (%d entries)", name, len(pl.Index), pl.IndexEntries, len(got), sm.IndexEntries)
	}
	if got := gentest.ReadFileOrNil(t, m.TimeIndexPath(sm)); !bytes.Equal(pl.TimeIndex, got) {
		t.Errorf("%s: time index differs: plan %d bytes (%d entries), file %d bytes (%d entries)", name, len(pl.TimeIndex), pl.TimeIndexEntries, len(got), sm.TimeIndexEntries)
	}
	got := gentest.ReadFileOrNil(t, m.TxnIndexPath(sm))
	if (pl.TxnIndex == nil) != !sm.TxnIndexWritten || !bytes.Equal(pl.TxnIndex, got) {
		t.Errorf("%s: transaction index: plan %d bytes (nil %v), file written %v with %d bytes", name, len(pl.TxnIndex), pl.TxnIndex == nil, sm.TxnIndexWritten, len(got))
	}
	if pl.IndexEntries != sm.IndexEntries || pl.TimeIndexEntries != sm.TimeIndexEntries || pl.TxnEntries != sm.TxnEntries {
		t.Errorf("%s: entries %d/%d/%d, manifest %d/%d/%d", name, pl.IndexEntries, pl.TimeIndexEntries, pl.TxnEntries, sm.IndexEntries, sm.TimeIndexEntries, sm.TxnEntries)
	}
}

// TestPlanTransactionsCoverAborts makes sure the transaction shapes above do
// test something: across seeds, aborted transactions spanning segments are
// generated and land where the marker is.
func TestPlanTransactionsCoverAborts(t *testing.T) {
	spanning, total := 0, 0
	for seed := int64(1); seed <= 6; seed++ {
		dir := filepath.Join(t.TempDir(), "txn-0")
		m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: seed, Transactions: true, Segments: 4, Batches: 60, IndexIntervalBytes: 512})
		if err != nil {
			t.Fatal(err)
		}
		p, err := inspect.ReadPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		plans, err := PlanPartition(p, Options{IndexIntervalBytes: 512})
		if err != nil {
			t.Fatal(err)
		}
		for i := range plans {
			checkPlanAgainstManifest(t, m, &plans[i], &m.Segments[i])
			for _, a := range m.Segments[i].AbortedTxns {
				total++
				if a.FirstOffset < m.Segments[i].BaseOffset {
					spanning++
				}
			}
		}
	}
	if total == 0 || spanning == 0 {
		t.Errorf("generated %d aborted transactions, %d spanning segments: the shapes do not cover the transaction index", total, spanning)
	}
}

// TestPlanPreallocatedActiveSegment: a running broker's active segment has
// zero-padded indexes and lacks the close-time time-index entry; recovery
// keeps the real entries and adds that entry.
func TestPlanPreallocatedActiveSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Segments: 2, Batches: 80, IndexIntervalBytes: 700, PreallocatedIndexBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := PlanPartition(p, Options{IndexIntervalBytes: 700})
	if err != nil {
		t.Fatal(err)
	}
	checkPlanAgainstManifest(t, m, &plans[0], &m.Segments[0]) // rolled: trimmed
	active, pl := &m.Segments[1], &plans[1]
	idx := gentest.ReadFileOrNil(t, m.IndexPath(active))
	tidx := gentest.ReadFileOrNil(t, m.TimeIndexPath(active))
	if len(idx) != 1<<16 || pl.IndexEntries == 0 {
		t.Fatalf("active index %d bytes, %d planned entries: not the case under test", len(idx), pl.IndexEntries)
	}
	if !bytes.Equal(pl.Index, idx[:len(pl.Index)]) || !bytes.Equal(idx[len(pl.Index):], make([]byte, len(idx)-len(pl.Index))) {
		t.Errorf("active offset index: planned entries are not the file's entries followed by zero padding")
	}
	written := active.TimeIndexEntries * 12
	if !bytes.Equal(pl.TimeIndex[:written], tidx[:written]) {
		t.Errorf("active time index: planned entries differ from the written ones")
	}
	lastWritten := int64(-1)
	if written > 0 {
		lastWritten = int64(binary.BigEndian.Uint64(tidx[written-12:]))
	}
	if active.MaxTimestamp <= lastWritten {
		t.Fatalf("the written time index already ends at the max timestamp: not the case under test")
	}
	last := pl.TimeIndex[len(pl.TimeIndex)-12:]
	if pl.TimeIndexEntries != active.TimeIndexEntries+1 ||
		int64(binary.BigEndian.Uint64(last)) != active.MaxTimestamp ||
		int64(binary.BigEndian.Uint32(last[8:]))+active.BaseOffset != active.OffsetOfMaxTimestamp {
		t.Errorf("active time index: %d planned entries ending %x; want the %d written plus the close-time entry (%d, %d)",
			pl.TimeIndexEntries, last, active.TimeIndexEntries, active.MaxTimestamp, active.OffsetOfMaxTimestamp)
	}
}
