package recovery

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// txnOracle derives every segment's aborted-transaction entries from the
// generator's manifest alone, the slow obvious way, as kafka-on-disk.md 7.2
// states the rule: a transaction of producer P starts at P's first
// transactional data batch after its previous marker; an ABORT marker at
// offset M for an open transaction gets (P, start, M, LSO) in the segment
// holding M, where LSO is the earliest start of another producer's open
// transaction, or M + 1.
func txnOracle(m *kafkagen.Manifest) [][]indexfmt.AbortedTxn {
	open := map[int64]int64{} // producer -> first offset of its open transaction
	out := make([][]indexfmt.AbortedTxn, len(m.Segments))
	for si := range m.Segments {
		for _, b := range m.Segments[si].Batches {
			if b.ProducerID < 0 || !b.Transactional {
				continue
			}
			if !b.Control {
				if _, ok := open[b.ProducerID]; !ok {
					open[b.ProducerID] = b.BaseOffset
				}
				continue
			}
			first, ok := open[b.ProducerID]
			if !ok {
				continue
			}
			delete(open, b.ProducerID)
			if b.ControlType != 0 {
				continue
			}
			lso := b.BaseOffset + 1
			for _, f := range open {
				lso = min(lso, f)
			}
			out[si] = append(out[si], indexfmt.AbortedTxn{ProducerID: b.ProducerID, FirstOffset: first, LastOffset: b.BaseOffset, LastStableOffset: lso})
		}
	}
	return out
}

// TestTxnIndexRebuildShapes: over transactional partitions of several
// shapes and seeds, PlanPartition's .txnindex bytes equal the generator's
// files and the oracle's entries, and the shapes cover what the rule has to
// get right: commits and aborts, aborts while another producer's
// transaction is open (last stable offset below the marker), transactions
// interleaved with another producer's batches, and transactions spanning
// segments.
func TestTxnIndexRebuildShapes(t *testing.T) {
	var commits, aborts, lsoBelow, interleaved, spanning int
	for i, o := range []kafkagen.Options{
		{Segments: 4, Batches: 50, Transactions: true},
		{Segments: 3, Batches: 60, Transactions: true, Compression: "gzip", CompactionGaps: true},
		{Segments: 5, Batches: 25, Transactions: true, Compression: "zstd", LogAppendTime: 0.3},
		{Segments: 2, SegmentBytes: 30000, Transactions: true, Compression: "lz4"},
	} {
		for seed := int64(1); seed <= 3; seed++ {
			o.Seed = seed + int64(10*i)
			dir := filepath.Join(t.TempDir(), "txn-0")
			m, err := kafkagen.Generate(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			p, err := inspect.ReadPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			plans, err := PlanPartition(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := txnOracle(m)
			for si := range plans {
				sm := &m.Segments[si]
				var oracle []byte
				for _, a := range want[si] {
					oracle = indexfmt.AppendTxnEntry(oracle, a)
				}
				file, err := os.ReadFile(m.TxnIndexPath(sm))
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if !bytes.Equal(plans[si].TxnIndex, oracle) || !bytes.Equal(plans[si].TxnIndex, file) || (plans[si].TxnIndex == nil) != (file == nil) {
					t.Errorf("shape %d seed %d segment %d: plan %x\n oracle %x\n file %x", i, o.Seed, sm.BaseOffset, plans[si].TxnIndex, oracle, file)
				}
				for _, a := range want[si] {
					if a.LastStableOffset <= a.LastOffset {
						lsoBelow++
					}
					if a.FirstOffset < sm.BaseOffset {
						spanning++
					}
				}
				aborts += len(want[si])
			}
			// Commits, and batches of another producer inside a transaction.
			openAt := map[int64]bool{}
			for _, b := range m.Batches() {
				if b.ProducerID < 0 {
					continue
				}
				if b.Control {
					if b.ControlType == 1 && openAt[b.ProducerID] {
						commits++
					}
					delete(openAt, b.ProducerID)
					continue
				}
				for q := range openAt {
					if q != b.ProducerID {
						interleaved++
						break
					}
				}
				openAt[b.ProducerID] = true
			}
		}
	}
	if commits < 10 || aborts < 10 || lsoBelow < 5 || interleaved < 10 || spanning < 2 {
		t.Errorf("shapes cover %d commits, %d aborts (%d with another transaction open, %d spanning segments), %d interleaved batches: not enough",
			commits, aborts, lsoBelow, spanning, interleaved)
	}
}
