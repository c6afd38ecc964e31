package recovery

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

func TestPlanOverlap(t *testing.T) {
	seg0, seg15, cutAt := gentest.OverlapLogs()
	dir := filepath.Join(t.TempDir(), "t-0")
	p := gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 15: seg15})
	opts := Options{IndexIntervalBytes: IndexEveryBatch}

	// Recovery alone keeps the batches, and the plan reports the first.
	plans, err := PlanPartition(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	var ce *inspect.CorruptError
	pl := plans[0]
	if pl.StopErr != nil || pl.ValidBytes != int64(len(seg0)) || !errors.Is(pl.Overlap, ErrOverlap) ||
		!errors.As(pl.Overlap, &ce) || ce.Position != cutAt || ce.Offset != 19 || ce.File != p.Segments[0].Log {
		t.Fatalf("without CutOverlap: stop %v, valid %d, overlap %v", pl.StopErr, pl.ValidBytes, pl.Overlap)
	}
	if pl.IndexEntries != 3 {
		t.Errorf("recovery indexes every batch after the first: %d entries, want 3", pl.IndexEntries)
	}
	if plans[1].Overlap != nil {
		t.Errorf("the last segment reaches no next segment: %v", plans[1].Overlap)
	}

	// With CutOverlap the plan is recovery's over the log cut before that
	// batch: the same bytes as planning the prefix alone.
	opts.CutOverlap = true
	cut, err := PlanPartition(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	pl = cut[0]
	if pl.StopErr != pl.Overlap || !errors.Is(pl.StopErr, ErrOverlap) || pl.ValidBytes != cutAt || pl.TruncatedBytes != int64(len(seg0))-cutAt || pl.Batches != 1 {
		t.Fatalf("with CutOverlap: stop %v, valid %d, truncated %d, %d batches", pl.StopErr, pl.ValidBytes, pl.TruncatedBytes, pl.Batches)
	}
	alone := planOne(t, seg0[:cutAt], Options{IndexIntervalBytes: IndexEveryBatch})
	if !bytes.Equal(pl.Index, alone.Index) || !bytes.Equal(pl.TimeIndex, alone.TimeIndex) {
		t.Errorf("cut plan's indexes %x %x, want the prefix's %x %x", pl.Index, pl.TimeIndex, alone.Index, alone.TimeIndex)
	}
	if ts, off := lastTimeEntry(t, pl.TimeIndex, 0); ts != 1000 || off != 9 {
		t.Errorf("time index ends at (%d, %d), want the prefix's maximum (1000, 9)", ts, off)
	}
	if cut[1].StopErr != nil || cut[1].ValidBytes != int64(len(seg15)) {
		t.Errorf("segment 15: %+v", cut[1])
	}
}

// lastTimeEntry decodes the last entry of a time index (timestamp,
// absolute offset).
func lastTimeEntry(t *testing.T, b []byte, base int64) (int64, int64) {
	t.Helper()
	n := len(b) / indexfmt.TimeEntrySize
	if n == 0 {
		t.Fatal("empty time index")
	}
	e := b[(n-1)*indexfmt.TimeEntrySize:]
	return int64(binary.BigEndian.Uint64(e)), base + int64(int32(binary.BigEndian.Uint32(e[8:])))
}

// TestPlanOverlapEdges: a segment whose first batch already reaches
// the next segment's base offset is cut whole; one that stops earlier for
// damage keeps recovery's stop.
func TestPlanOverlapEdges(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	seg0 := gentest.Concat(gentest.Data(20, 5, 1), gentest.Data(25, 5, 2))
	p := gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 22: gentest.Data(22, 10, 3)})
	plans, err := PlanPartition(p, Options{CutOverlap: true})
	if err != nil {
		t.Fatal(err)
	}
	if pl := plans[0]; pl.ValidBytes != 0 || pl.Batches != 0 || !errors.Is(pl.StopErr, ErrOverlap) || len(pl.Index) != 0 || len(pl.TimeIndex) != 0 {
		t.Errorf("first batch reaching: valid %d, %d batches, stop %v, index %x, time index %x", pl.ValidBytes, pl.Batches, pl.StopErr, pl.Index, pl.TimeIndex)
	}

	// Damage before the overlap: recovery's stop comes first, and the
	// overlapping batch, past it, is not looked at.
	seg0, seg15, cutAt := gentest.OverlapLogs()
	seg0[cutAt-3] ^= 0xff // in the first batch's last record
	dir = filepath.Join(t.TempDir(), "t-0")
	p = gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 15: seg15})
	plans, err = PlanPartition(p, Options{CutOverlap: true})
	if err != nil {
		t.Fatal(err)
	}
	if pl := plans[0]; pl.ValidBytes != 0 || !errors.Is(pl.StopErr, inspect.ErrCRC) || pl.Overlap != nil {
		t.Errorf("damage first: valid %d, stop %v, overlap %v", pl.ValidBytes, pl.StopErr, pl.Overlap)
	}
}

// TestPlanOverlapTransactions: the cut batches are not replayed, so a
// transaction whose ABORT marker was cut stays open into the next segment,
// whose own ABORT then records it there, as a broker recovering the cut
// partition would.
func TestPlanOverlapTransactions(t *testing.T) {
	seg0 := gentest.Concat(gentest.TxnData(0, 5, 1, 7, true), gentest.Marker(5, 2, 7, gentest.CommitType), gentest.TxnData(6, 4, 3, 7, true), gentest.Marker(12, 4, 7, gentest.AbortType))
	seg10 := gentest.Concat(gentest.Data(10, 5, 5), gentest.Marker(15, 6, 7, gentest.AbortType))
	dir := filepath.Join(t.TempDir(), "t-0")
	p := gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 10: seg10})
	plain, err := PlanPartition(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain[0].TxnEntries != 1 || plain[1].TxnEntries != 0 {
		t.Fatalf("recovery: %d and %d aborted transactions, want 1 and 0", plain[0].TxnEntries, plain[1].TxnEntries)
	}
	cut, err := PlanPartition(p, Options{CutOverlap: true})
	if err != nil {
		t.Fatal(err)
	}
	if cut[0].TxnEntries != 0 || cut[1].TxnEntries != 1 {
		t.Fatalf("cut: %d and %d aborted transactions, want 0 and 1", cut[0].TxnEntries, cut[1].TxnEntries)
	}
	txn := indexfmt.DecodeTxnEntry(cut[1].TxnIndex)
	if txn.ProducerID != 7 || txn.FirstOffset != 6 || txn.LastOffset != 15 {
		t.Errorf("aborted transaction %+v, want producer 7, offsets 6..15", txn)
	}
}
