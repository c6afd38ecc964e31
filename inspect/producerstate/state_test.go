package producerstate

import (
	"testing"

	"github.com/kseg/kseg/inspect/sidefile"
)

// Hand-worked ProducerStateManager sequences: the first unstable offset
// over ongoing and unreplicated transactions, the high watermark
// acknowledging completed ones, the last stable offset raised to the log
// start offset, the lastStableOffset of a completed transaction, and
// hasLateTransaction's strict bounds.
func TestStateSequences(t *testing.T) {
	s := New()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.DataBatch(1, 0, 10, 12, 100, true))  // producer 1 opens at 10
	must(s.DataBatch(2, 0, 13, 13, 101, true))  // producer 2 opens at 13
	must(s.DataBatch(1, 0, 14, 15, 102, true))  // still 10
	must(s.DataBatch(3, 0, 16, 16, 103, false)) // idempotent only
	done, err := s.EndMarker(1, 0, 5, 17, 104, true)
	must(err)
	// Its index entry's LSO is producer 2's open transaction.
	if done == nil || done.FirstOffset != 10 || done.LastOffset != 17 || !done.Aborted || done.LastStableOffset != 13 {
		t.Fatalf("completed: %+v", done)
	}
	if fu, ok := s.FirstUnstableOffset(); !ok || fu != 10 {
		t.Fatalf("first unstable %d %v: the marker is not yet below the HW", fu, ok)
	}
	s.OnHighWatermark(17) // marker at 17 is not below 17
	if lso := s.LastStableOffset(17, 0); lso != 10 {
		t.Fatalf("hw 17: lso %d", lso)
	}
	s.OnHighWatermark(18)
	if lso := s.LastStableOffset(18, 0); lso != 13 {
		t.Fatalf("hw 18: lso %d", lso)
	}
	if lso := s.LastStableOffset(18, 14); lso != 14 {
		t.Fatalf("log start 14: lso %d", lso)
	}
	if lso := s.LastStableOffset(12, 0); lso != 12 {
		t.Fatalf("hw 12 below the first unstable offset 13: lso %d", lso)
	}
	if e := s.Producer(1); e.CurrentTxnFirstOffset != -1 || e.CoordinatorEpoch != 5 || e.LastTimestamp != 104 {
		t.Fatalf("producer 1 after its marker: %+v", e)
	}
	if e := s.Producer(2); e.TxnBatches != 1 || e.TxnFirstTimestamp != 101 || e.LastTimestamp != 101 {
		t.Fatalf("producer 2: %+v", e)
	}
	// A marker of a producer without a transaction completes nothing.
	if done, err := s.EndMarker(3, 0, 0, 19, 105, false); done != nil || err != nil {
		t.Fatalf("marker without transaction: %+v %v", done, err)
	}
	// A non-transactional batch inside a transaction: InvalidTxnStateException.
	if err := s.DataBatch(2, 0, 20, 20, 106, false); err == nil {
		t.Fatal("non-transactional batch inside a transaction accepted")
	}
	// hasLateTransaction: strictly over timeout + 5 min, timestamps > 0.
	if !IsLate(1000, 1000+60000+LateTransactionBufferMs+1, 60000) || IsLate(1000, 1000+60000+LateTransactionBufferMs, 60000) || IsLate(0, 1<<40, 1) {
		t.Fatal("IsLate bounds")
	}
	if s.OldestTxnLastTimestamp() != 101 {
		t.Fatalf("oldest txn last timestamp %d", s.OldestTxnLastTimestamp())
	}
}

// A snapshot's entries: expired producers without a transaction dropped
// (>= producer.id.expiration.ms), open transactions kept whatever their age.
func TestLoadSnapshotExpiration(t *testing.T) {
	s := New()
	s.LoadSnapshot([]sidefile.ProducerEntry{
		{ProducerID: 1, Timestamp: 1000, LastOffset: -1, CurrentTxnFirstOffset: -1},
		{ProducerID: 2, Timestamp: 1001, LastOffset: 7, CurrentTxnFirstOffset: -1},
		{ProducerID: 3, Timestamp: 0, LastOffset: 9, CurrentTxnFirstOffset: 4},
	}, 1000+500, 500)
	if s.Producer(1) != nil || s.Producer(2) == nil || s.Producer(3) == nil {
		t.Fatalf("producers %v", s.Producers())
	}
	if o := s.Ongoing(); len(o) != 1 || o[0].FirstOffset != 4 || s.Producer(3).TxnBatches != -1 {
		t.Fatalf("ongoing %+v", o)
	}
}
