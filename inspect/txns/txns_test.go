package txns

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/sidefile"
	"github.com/kseg/kseg/inspect/topicconfig"
)

// A hand-built partition: batches in segments, and the data directory's
// checkpoints.
type part struct {
	topic     string
	segments  map[int64][]byte
	snapshots map[int64][]sidefile.ProducerEntry
	rawSnaps  map[int64][]byte
	hw, start *int64
	clean     bool
}

func writePart(t *testing.T, dir string, p part) *inspect.Target {
	t.Helper()
	pdir := filepath.Join(dir, p.topic+"-0")
	gentest.WriteLogs(t, pdir, p.segments)
	for off, entries := range p.snapshots {
		write(t, filepath.Join(pdir, inspect.SegmentName(off)+".snapshot"), sidefile.AppendProducerSnapshot(nil, entries))
	}
	for off, b := range p.rawSnaps {
		write(t, filepath.Join(pdir, inspect.SegmentName(off)+".snapshot"), b)
	}
	if p.hw != nil {
		write(t, filepath.Join(dir, sidefile.ReplicationCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: p.topic, Partition: 0, Offset: *p.hw}}))
	}
	if p.start != nil {
		write(t, filepath.Join(dir, sidefile.LogStartOffsetCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: p.topic, Partition: 0, Offset: *p.start}}))
	}
	if p.clean {
		write(t, filepath.Join(dir, sidefile.CleanShutdownFile), nil)
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func analyze(t *testing.T, tg *inspect.Target, now int64, flags ...string) *Report {
	t.Helper()
	r, err := topicconfig.New(topicconfig.Inputs{Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze([]*inspect.Target{tg}, Options{Now: now, Configs: r})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func i64(v int64) *int64 { return &v }

const minute = 60 * 1000

// Hand-worked: producer 7 opens a transaction at offset 2 and never ends
// it; producer 8's transaction 5..6 commits at 7. The LSO is 2 (held by
// producer 7), the transaction is 20 minutes old at now: over the default
// 15-minute timeout but not over 15+5, so ongoing; at 21 minutes late.
func TestOpenTransactionHoldsLSO(t *testing.T) {
	t0 := int64(1_700_000_000_000)
	log := gentest.Concat(
		gentest.Data(0, 2, t0),
		gentest.TxnData(2, 3, t0+1, 7, true),
		gentest.TxnData(5, 2, t0+2, 8, true),
		gentest.Marker(7, t0+3, 8, gentest.CommitType),
		gentest.Data(8, 2, t0+4),
	)
	tg := writePart(t, t.TempDir(), part{topic: "orders", segments: map[int64][]byte{0: log}, hw: i64(10)})
	rep := analyze(t, tg, t0+1+20*minute)
	pt := rep.Partitions[0]
	if pt.LogEndOffset != 10 || pt.HighWatermark != 10 || pt.LastStableOffset != 2 || pt.LSOLag != 8 || pt.ProducerStateFrom != "log" {
		t.Fatalf("partition: %+v", pt)
	}
	if len(pt.Open) != 1 {
		t.Fatalf("open: %+v", pt.Open)
	}
	o := pt.Open[0]
	if o.ProducerID != 7 || o.FirstOffset != 2 || o.LastOffset != 4 || o.LastTimestamp != t0+1 || *o.FirstTimestamp != t0+1 || *o.Batches != 1 || o.AgeMs != 20*minute || o.Verdict != VerdictOngoing {
		t.Fatalf("open transaction: %+v", o)
	}
	rep = analyze(t, tg, t0+1+20*minute+1)
	if v := rep.Partitions[0].Open[0].Verdict; v != VerdictLate || rep.Late != 1 {
		t.Fatalf("at 20 min + 1 ms: %s", v)
	}
	// A shorter timeout by flag.
	rep = analyze(t, tg, t0+1+6*minute+1, "transaction.max.timeout.ms=60000")
	if v := rep.Partitions[0].Open[0].Verdict; v != VerdictLate {
		t.Fatalf("timeout 1 min: %s", v)
	}
}

// Hand-worked: the high watermark is behind. Producer 8's marker at 7 is
// at the high watermark 7, so its transaction (first offset 5) is still
// unstable: LSO 5. With the high watermark at 8 the LSO is the HW.
func TestHighWatermarkBehindMarker(t *testing.T) {
	t0 := int64(1_700_000_000_000)
	log := gentest.Concat(gentest.Data(0, 5, t0), gentest.TxnData(5, 2, t0, 8, true), gentest.Marker(7, t0, 8, gentest.AbortType), gentest.Data(8, 2, t0))
	for _, tc := range []struct{ hw, lso int64 }{{7, 5}, {8, 8}, {3, 3}, {99, 10}, {-5, 0}} {
		tg := writePart(t, t.TempDir(), part{topic: "t", segments: map[int64][]byte{0: log}, hw: i64(tc.hw)})
		pt := analyze(t, tg, t0).Partitions[0]
		hw := min(max(tc.hw, 0), 10)
		if pt.HighWatermark != hw || pt.LastStableOffset != tc.lso {
			t.Errorf("hw checkpoint %d: hw %d lso %d, want %d %d", tc.hw, pt.HighWatermark, pt.LastStableOffset, hw, tc.lso)
		}
	}
	// No checkpoint: the HW is the log start offset.
	tg := writePart(t, t.TempDir(), part{topic: "t", segments: map[int64][]byte{0: log}})
	if pt := analyze(t, tg, t0).Partitions[0]; pt.HighWatermark != 0 || pt.HighWatermarkSource != inspect.HighWatermarkAbsent || pt.LastStableOffset != 0 {
		t.Errorf("no checkpoint: %+v", pt)
	}
}

// Snapshots: the latest in range is loaded; a corrupt one falls back to
// the next older; one beyond the log end, strays and those at or below
// the log start offset are skipped; a clean shutdown without snapshots
// rebuilds nothing.
func TestSnapshotChoice(t *testing.T) {
	t0 := int64(1_700_000_000_000)
	seg0 := gentest.Concat(gentest.TxnData(0, 2, t0, 5, true), gentest.Data(2, 3, t0))
	seg5 := gentest.Concat(gentest.TxnData(5, 2, t0+10, 6, true), gentest.Data(7, 3, t0+10))
	segs := map[int64][]byte{0: seg0, 5: seg5}
	open5 := []sidefile.ProducerEntry{{ProducerID: 5, ProducerEpoch: 0, LastSequence: 1, LastOffset: 1, OffsetDelta: 1, Timestamp: t0, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 0}}
	// The snapshot at 5 carries producer 5's transaction; producer 6's is replayed.
	rep := analyze(t, writePart(t, t.TempDir(), part{topic: "t", segments: segs, snapshots: map[int64][]sidefile.ProducerEntry{5: open5}, hw: i64(10)}), t0)
	pt := rep.Partitions[0]
	if pt.ProducerStateFrom != inspect.SegmentName(5)+".snapshot" || len(pt.Open) != 2 || pt.LastStableOffset != 0 {
		t.Fatalf("snapshot at 5: %+v", pt)
	}
	if o := pt.Open[0]; o.ProducerID != 5 || o.FirstTimestamp != nil || o.Batches != nil || o.LastOffset != 1 {
		t.Errorf("from the snapshot: %+v", o)
	}
	if o := pt.Open[1]; o.ProducerID != 6 || o.Batches == nil || *o.Batches != 1 {
		t.Errorf("replayed: %+v", o)
	}
	// An empty snapshot at 5 hides producer 5's transaction (the broker
	// trusts the snapshot); a corrupt one at 10 (the log end) falls back to it.
	bad := sidefile.AppendProducerSnapshot(nil, nil)
	bad[len(bad)-1] ^= 1
	rep = analyze(t, writePart(t, t.TempDir(), part{topic: "t", segments: segs, snapshots: map[int64][]sidefile.ProducerEntry{5: nil}, rawSnaps: map[int64][]byte{10: bad}, hw: i64(10)}), t0)
	pt = rep.Partitions[0]
	if pt.ProducerStateFrom != inspect.SegmentName(5)+".snapshot" || len(pt.Open) != 1 || pt.Open[0].ProducerID != 6 || pt.LastStableOffset != 5 {
		t.Fatalf("corrupt at 10: %+v %+v", pt, pt.Open)
	}
	if len(pt.Loaded.Skipped) != 1 || !pt.Loaded.Skipped[0].Abnormal {
		t.Errorf("skipped: %+v", pt.Loaded.Skipped)
	}
	// A snapshot beyond the log end (a stray above the last base is kept by
	// removeStraySnapshots, then dropped by truncateAndReload): the log is
	// replayed from the start.
	rep = analyze(t, writePart(t, t.TempDir(), part{topic: "t", segments: segs, snapshots: map[int64][]sidefile.ProducerEntry{12: nil}, hw: i64(10)}), t0)
	pt = rep.Partitions[0]
	if pt.ProducerStateFrom != "log" || len(pt.Open) != 2 || len(pt.Loaded.Skipped) != 1 || !pt.Loaded.Skipped[0].Abnormal {
		t.Fatalf("beyond the end: %+v %+v", pt, pt.Loaded.Skipped)
	}
	// A stray below the last base offset is removed.
	rep = analyze(t, writePart(t, t.TempDir(), part{topic: "t", segments: segs, snapshots: map[int64][]sidefile.ProducerEntry{3: nil}, hw: i64(10)}), t0)
	if pt = rep.Partitions[0]; pt.ProducerStateFrom != "log" || len(pt.Open) != 2 {
		t.Fatalf("stray: %+v", pt)
	}
	// At or below the log start offset (5): skipped, and replay starts at 5.
	rep = analyze(t, writePart(t, t.TempDir(), part{topic: "t", segments: segs, snapshots: map[int64][]sidefile.ProducerEntry{5: open5}, start: i64(5), hw: i64(10)}), t0)
	if pt = rep.Partitions[0]; pt.ProducerStateFrom != "log" || len(pt.Open) != 1 || pt.Open[0].ProducerID != 6 || pt.LastStableOffset != 5 {
		t.Fatalf("at the log start: %+v", pt)
	}
	// Clean shutdown, no snapshot: no producer state.
	rep = analyze(t, writePart(t, t.TempDir(), part{topic: "t", segments: segs, hw: i64(10), clean: true}), t0)
	if pt = rep.Partitions[0]; pt.ProducerStateFrom != "none" || len(pt.Open) != 0 || pt.LastStableOffset != 10 {
		t.Fatalf("clean shutdown: %+v", pt)
	}
}

// model is an independent replay of a partition: every batch from the
// log start offset, a transactional batch opening its producer's
// transaction, a marker closing it; a transaction is unstable while open
// or while its marker is at or above the high watermark, but only when the
// load replayed its marker (markers before the loaded snapshot are not
// seen). Snapshots carry the open transactions at their offset.
type modelBatch struct {
	first, last int64
	pid         int64 // -1: none
	txn, marker bool
	ts          int64
}

func modelLSO(batches []modelBatch, snapOffset, logStart, hw int64) (lso int64, open map[int64]int64) {
	open = map[int64]int64{}
	unstable := []int64{}
	for _, b := range batches {
		if b.last < logStart || b.pid < 0 {
			continue
		}
		switch {
		case b.marker:
			if f, ok := open[b.pid]; ok {
				delete(open, b.pid)
				if b.first >= snapOffset && b.first >= hw {
					unstable = append(unstable, f)
				}
			}
		case b.txn:
			if _, ok := open[b.pid]; !ok {
				open[b.pid] = b.first
			}
		}
	}
	for _, f := range open {
		unstable = append(unstable, f)
	}
	if len(unstable) == 0 {
		return hw, open
	}
	sort.Slice(unstable, func(i, j int) bool { return unstable[i] < unstable[j] })
	if fu := max(unstable[0], logStart); fu < hw {
		return fu, open
	}
	return hw, open
}

// Generated partitions: random producers, transactions, markers, segment
// boundaries, a snapshot at a segment base (holding the open transactions
// there), a log start and a high watermark checkpoint. txns's LSO and open
// transactions must be the model's.
func TestDifferentialGenerated(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 31))
		var batches []modelBatch
		segs := map[int64][]byte{}
		var bases []int64
		off, ts := int64(0), int64(1_700_000_000_000)
		open := map[int64]int64{}
		var cur int64 = -1
		snapAt, snapOpen := int64(-1), map[int64]int64{}
		nseg := 1 + rng.IntN(4)
		for s := 0; s < nseg; s++ {
			cur = off
			bases = append(bases, cur)
			if s > 0 && snapAt < 0 && rng.IntN(2) == 0 {
				snapAt = cur
				for k, v := range open {
					snapOpen[k] = v
				}
			}
			for i := 0; i < 1+rng.IntN(8); i++ {
				ts += int64(rng.IntN(1000))
				pid := int64(-1)
				if rng.IntN(4) > 0 {
					pid = int64(100 + rng.IntN(4))
				}
				_, isOpen := open[pid]
				var b []byte
				mb := modelBatch{first: off, pid: pid, ts: ts}
				switch {
				case pid >= 0 && isOpen && rng.IntN(3) == 0:
					typ := int16(gentest.CommitType)
					if rng.IntN(2) == 0 {
						typ = gentest.AbortType
					}
					b = gentest.Marker(off, ts, pid, typ)
					mb.last, mb.marker = off, true
					delete(open, pid)
				case pid >= 0 && (isOpen || rng.IntN(2) == 0):
					n := int32(1 + rng.IntN(3))
					b = gentest.TxnData(off, n, ts, pid, true)
					mb.last, mb.txn = off+int64(n)-1, true
					if !isOpen {
						open[pid] = off
					}
				default:
					n := int32(1 + rng.IntN(3))
					b = gentest.TxnData(off, n, ts, pid, false)
					mb.last = off + int64(n) - 1
				}
				if pid >= 0 && !isOpen && !mb.txn && mb.marker {
					t.Fatal("unreachable")
				}
				segs[cur] = append(segs[cur], b...)
				batches = append(batches, mb)
				off = mb.last + 1
			}
		}
		leo := off
		p := part{topic: "g", segments: segs, hw: i64(rng.Int64N(leo + 3)), start: i64(rng.Int64N(leo/2 + 1))}
		if snapAt >= 0 {
			var entries []sidefile.ProducerEntry
			for pid, f := range snapOpen {
				entries = append(entries, sidefile.ProducerEntry{ProducerID: pid, LastSequence: -1, LastOffset: -1, Timestamp: ts, CoordinatorEpoch: -1, CurrentTxnFirstOffset: f})
			}
			p.snapshots = map[int64][]sidefile.ProducerEntry{snapAt: entries}
		}
		tg := writePart(t, t.TempDir(), p)
		pt := analyze(t, tg, ts).Partitions[0]
		if pt.Err != nil {
			t.Fatalf("seed %d: %v", seed, pt.Err)
		}
		logStart := max(*p.start, bases[0])
		hw := min(max(*p.hw, logStart), leo)
		// The model replays from the snapshot when the broker loads it.
		modelBatches := batches
		var wantLSO int64
		var wantOpen map[int64]int64
		if snapAt > logStart {
			// Start from the snapshot's open transactions.
			pre := []modelBatch{}
			for pid, f := range snapOpen {
				pre = append(pre, modelBatch{first: f, last: f, pid: pid, txn: true})
			}
			sort.Slice(pre, func(i, j int) bool { return pre[i].first < pre[j].first })
			var rest []modelBatch
			for _, b := range modelBatches {
				if b.last >= snapAt {
					rest = append(rest, b)
				}
			}
			wantLSO, wantOpen = modelLSO(append(pre, rest...), snapAt, 0, hw)
			wantLSO = modelRaise(wantLSO, logStart, hw)
		} else {
			wantLSO, wantOpen = modelLSO(modelBatches, logStart, logStart, hw)
		}
		gotOpen := map[int64]int64{}
		for _, o := range pt.Open {
			gotOpen[o.ProducerID] = o.FirstOffset
		}
		if pt.LogEndOffset != leo || pt.HighWatermark != hw || pt.LastStableOffset != wantLSO || fmt.Sprint(gotOpen) != fmt.Sprint(wantOpen) {
			t.Fatalf("seed %d (log start %d, hw %d, snapshot at %d): leo %d hw %d lso %d open %v; model leo %d hw %d lso %d open %v",
				seed, logStart, hw, snapAt, pt.LogEndOffset, pt.HighWatermark, pt.LastStableOffset, gotOpen, leo, hw, wantLSO, wantOpen)
		}
	}
}

// modelRaise applies the log start offset to a first unstable offset
// found without it.
func modelRaise(lso, logStart, hw int64) int64 {
	if lso < hw {
		if r := max(lso, logStart); r < hw {
			return r
		}
		return hw
	}
	return hw
}
