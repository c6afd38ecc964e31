package txns

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Every real fixture with producer snapshots or transactional data: the
// open transactions are those of a full replay of the log (every v2 batch
// with a producer id from the log start offset, independently of the
// snapshot the load used), the LSO is the HW when none is open, and every
// loaded snapshot is one the broker writes (it parses).
func TestRealFixtures(t *testing.T) {
	checked := 0
	for _, dir := range fixtures.Dirs(t) {
		tg, err := inspect.Resolve(dir)
		if err != nil {
			continue
		}
		rep := analyze(t, tg, 1_800_000_000_000)
		for _, pt := range rep.Partitions {
			p := pt.Partition
			transactional := false
			_ = p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
				transactional = transactional || w.Batch.IsTransactional()
				return nil
			})
			if len(p.Snapshots) == 0 && !transactional {
				continue
			}
			checked++
			if pt.Err != nil {
				t.Errorf("%s: %v", p.Dir, pt.Err)
				continue
			}
			want := fullReplay(t, p, pt.Loaded.LogStartOffset)
			got := map[int64]int64{}
			for _, o := range pt.Open {
				got[o.ProducerID] = o.FirstOffset
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: open %v, full replay %v", p.Dir, got, want)
			}
			if len(want) == 0 && pt.LastStableOffset != pt.HighWatermark {
				t.Errorf("%s: LSO %d, HW %d without open transactions", p.Dir, pt.LastStableOffset, pt.HighWatermark)
			}
			if s := pt.Loaded.Snapshot; s != nil {
				if _, err := sidefile.ReadProducerSnapshot(s.Path); err != nil {
					t.Errorf("%s: loaded a snapshot that does not read: %v", s.Path, err)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d fixture partitions with snapshots or transactions", checked)
	}
}

func fullReplay(t *testing.T, p *inspect.Partition, logStart int64) map[int64]int64 {
	t.Helper()
	open := map[int64]int64{}
	err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		b := w.Batch
		if b.Magic < 2 || b.ProducerID < 0 || b.LastOffset < logStart {
			return nil
		}
		if b.IsControl() {
			delete(open, b.ProducerID)
			return nil
		}
		if _, ok := open[b.ProducerID]; !ok && b.IsTransactional() {
			open[b.ProducerID] = b.BaseOffset
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return open
}

// The ksqlDB fixture: its command topic's transaction committed, and the
// coordinator (its __transaction_state-44, replayed) holds the
// transactional id "default_" of producer 0, completed.
func TestKsqlFixtureCoordinator(t *testing.T) {
	dir := filepath.Join(fixtures.Root(t), "cp-kraft-ksql-txn-committed")
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	// An hour after the records: producer 0 has not expired yet
	// (producer.id.expiration.ms, a day).
	rep := analyze(t, tg, 1_728_561_475_630+3_600_000)
	c := rep.Coordinator
	if c == nil || c.Len() != 1 || len(c.Stopped) != 0 {
		t.Fatalf("coordinator: %+v", c)
	}
	txns := c.ByProducer(0)
	if len(txns) != 1 || txns[0].TransactionalID != "default_" || txns[0].State != "CompleteCommit" || txns[0].Offset != 3 || len(txns[0].Partitions) != 0 {
		t.Fatalf("default_: %+v", txns)
	}
	for _, pt := range rep.Partitions {
		if pt.Partition.Topic == "_confluent-ksql-default__command_topic" {
			if pt.LogEndOffset != 2 || pt.LastStableOffset != 2 || len(pt.Open) != 0 || pt.ProducerStateFrom != inspect.SegmentName(2)+".snapshot" {
				t.Errorf("command topic: %+v", pt)
			}
			// The snapshot at 2 holds producer 0, its transaction closed.
			if e := pt.Loaded.State.Producer(0); e == nil || e.CurrentTxnFirstOffset != -1 {
				t.Errorf("producer 0: %+v", e)
			}
			// Two days later it has expired (isProducerExpired).
			late := analyze(t, tg, 1_728_561_475_630+2*86_400_000)
			for _, lp := range late.Partitions {
				if lp.Partition == pt.Partition && lp.Loaded.State.Producer(0) != nil {
					t.Errorf("producer 0 not expired after two days")
				}
			}
		}
	}
}

// kafkagen partitions with open transactions, segments and snapshots at
// every roll, recorded in the data directory's checkpoints: the open
// transactions are those of a full replay, the LSO the first of them, and
// the last snapshot (at the log end) carries the same.
func TestGeneratedOpenTransactions(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		dir := t.TempDir()
		opts := kafkagen.Options{Seed: seed, Segments: 1 + int(seed%3), Batches: 20, Transactions: true, OpenTransactions: int(seed % 4), DataDirCheckpoints: true, Timestamps: []string{"increasing", "jumping", "random"}[seed%3]}
		if _, err := kafkagen.Generate(filepath.Join(dir, "g-0"), opts); err != nil {
			t.Fatal(err)
		}
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		pt := analyze(t, tg, kafkagen.DefaultStartTimestamp).Partitions[0]
		want := fullReplay(t, pt.Partition, 0)
		got := map[int64]int64{}
		lso := pt.HighWatermark
		for _, o := range pt.Open {
			got[o.ProducerID] = o.FirstOffset
			lso = min(lso, o.FirstOffset)
		}
		if len(want) != opts.OpenTransactions || fmt.Sprint(got) != fmt.Sprint(want) || pt.LastStableOffset != lso || pt.HighWatermark != pt.LogEndOffset {
			t.Fatalf("seed %d: open %v, replay %v; lso %d want %d; hw %d leo %d", seed, got, want, pt.LastStableOffset, lso, pt.HighWatermark, pt.LogEndOffset)
		}
		snaps := pt.Partition.Snapshots
		last, err := sidefile.ReadProducerSnapshot(snaps[len(snaps)-1].Path)
		if err != nil {
			t.Fatal(err)
		}
		fromSnap := map[int64]int64{}
		for _, e := range last.OpenTransactions() {
			fromSnap[e.ProducerID] = e.CurrentTxnFirstOffset
		}
		if fmt.Sprint(fromSnap) != fmt.Sprint(want) || pt.ProducerStateFrom != filepath.Base(snaps[len(snaps)-1].Path) {
			t.Fatalf("seed %d: last snapshot %v (%s)", seed, fromSnap, pt.ProducerStateFrom)
		}
	}
}
