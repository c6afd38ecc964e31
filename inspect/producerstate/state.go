// Package producerstate holds a partition's producer state as the broker
// keeps it (ProducerStateManager, ProducerStateEntry, ProducerAppendInfo):
// which producers have an open transaction and since which offset, the
// transactions completed above the high watermark, and the last stable
// offset; and how a partition leader loads it (LogLoader.load,
// UnifiedLog.rebuildProducerState: the latest usable snapshot, then the
// log after it). Broker recovery's transaction-index replay
// (inspect/recovery) and kseg txns and cleaner all replay through it.
package producerstate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kseg/kseg/inspect/sidefile"
)

// LateTransactionBufferMs is ProducerStateManager.LATE_TRANSACTION_BUFFER_MS:
// a transaction is late when its producer's last batch is older than
// transaction.max.timeout.ms plus this.
const LateTransactionBufferMs = 5 * 60 * 1000

// Entry is ProducerStateEntry, plus what the replay saw of the producer's
// open transaction.
type Entry struct {
	ProducerID       int64
	Epoch            int16
	CoordinatorEpoch int32
	// LastTimestamp is the max timestamp of the producer's last data batch,
	// or its last marker's timestamp (ProducerStateEntry.lastTimestamp).
	LastTimestamp int64
	// LastDataOffset is the last offset of its last data batch, -1 when
	// none is known.
	LastDataOffset int64
	// CurrentTxnFirstOffset is the first offset of its open transaction, -1
	// when none is open.
	CurrentTxnFirstOffset int64

	// What the replay saw of the open transaction: its data batches, the
	// first one's max timestamp and the last one's last offset. TxnBatches
	// is -1 when the transaction began before what was replayed (it came
	// from a snapshot), 0 without an open transaction.
	TxnBatches        int
	TxnFirstTimestamp int64
	TxnLastOffset     int64
}

// Txn is a transaction tracked by first offset (TxnMetadata): LastOffset
// is its marker's offset, -1 while it is open.
type Txn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// Completed is a transaction a marker closed (CompletedTxn) and the last
// stable offset its transaction index entry gets
// (ProducerStateManager.lastStableOffset, evaluated before the
// transaction is removed).
type Completed struct {
	Txn
	Aborted          bool
	LastStableOffset int64
}

// State is ProducerStateManager's in-memory state. Memory grows with the
// producers and open transactions, not with the log.
type State struct {
	producers map[int64]*Entry
	// ongoing is ongoingTxns (a TreeMap by first offset: a second
	// transaction with the same first offset replaces the first's entry);
	// unreplicated is unreplicatedTxns, completed transactions whose
	// marker may be at or above the high watermark. Both sorted by
	// FirstOffset, keys unique.
	ongoing      []Txn
	unreplicated []Txn
}

// New returns an empty state.
func New() *State { return &State{producers: map[int64]*Entry{}} }

// Clone copies the state (recovery rolls a segment back with it).
func (s *State) Clone() *State {
	c := &State{producers: make(map[int64]*Entry, len(s.producers)), ongoing: slices.Clone(s.ongoing), unreplicated: slices.Clone(s.unreplicated)}
	for k, v := range s.producers {
		e := *v
		c.producers[k] = &e
	}
	return c
}

// LoadSnapshot loads a snapshot's entries (ProducerStateManager.
// loadFromSnapshot): a producer without an open transaction whose last
// timestamp is producer.id.expiration.ms or more before now is dropped
// (isProducerExpired); every open transaction becomes ongoing.
func (s *State) LoadSnapshot(entries []sidefile.ProducerEntry, now, expirationMs int64) {
	for _, pe := range entries {
		if pe.CurrentTxnFirstOffset < 0 && now-pe.Timestamp >= expirationMs {
			continue
		}
		e := &Entry{ProducerID: pe.ProducerID, Epoch: pe.ProducerEpoch, CoordinatorEpoch: pe.CoordinatorEpoch,
			LastTimestamp: pe.Timestamp, LastDataOffset: -1, CurrentTxnFirstOffset: -1, TxnFirstTimestamp: -1, TxnLastOffset: -1}
		if pe.HasBatchMetadata() {
			e.LastDataOffset = pe.LastOffset
		}
		s.producers[pe.ProducerID] = e
		if pe.CurrentTxnFirstOffset >= 0 {
			e.CurrentTxnFirstOffset, e.TxnBatches = pe.CurrentTxnFirstOffset, -1
			s.ongoing = putTxn(s.ongoing, Txn{ProducerID: pe.ProducerID, FirstOffset: pe.CurrentTxnFirstOffset, LastOffset: -1})
		}
	}
}

// entry is the producer's entry, created empty (ProducerStateEntry.empty:
// no epoch, no coordinator epoch, no timestamp) on first use.
func (s *State) entry(pid int64) *Entry {
	e := s.producers[pid]
	if e == nil {
		e = &Entry{ProducerID: pid, Epoch: -1, CoordinatorEpoch: -1, LastTimestamp: -1, LastDataOffset: -1,
			CurrentTxnFirstOffset: -1, TxnFirstTimestamp: -1, TxnLastOffset: -1}
		s.producers[pid] = e
	}
	return e
}

// DataBatch replays a data batch of producer pid (ProducerAppendInfo.
// appendDataBatch on the replication path: epochs and sequences are only
// logged): the entry takes the batch's epoch, last offset and max
// timestamp; a transactional batch of a producer with no open transaction
// opens one at its first offset. A non-transactional batch while a
// transaction is open is InvalidTxnStateException, which no load path
// catches: the error says so.
func (s *State) DataBatch(pid int64, epoch int16, firstOffset, lastOffset, maxTimestamp int64, transactional bool) error {
	e := s.entry(pid)
	open := e.CurrentTxnFirstOffset >= 0
	if open && !transactional {
		return fmt.Errorf("non-transactional batch of producer %d while its transaction is open (broker: InvalidTxnStateException)", pid)
	}
	e.Epoch, e.LastDataOffset, e.LastTimestamp = epoch, lastOffset, maxTimestamp
	if !transactional {
		return nil
	}
	if !open {
		e.CurrentTxnFirstOffset = firstOffset
		e.TxnBatches, e.TxnFirstTimestamp = 0, maxTimestamp
		s.ongoing = putTxn(s.ongoing, Txn{ProducerID: pid, FirstOffset: firstOffset, LastOffset: -1})
	}
	if e.TxnBatches >= 0 {
		e.TxnBatches++
	}
	e.TxnLastOffset = lastOffset
	return nil
}

// EndMarker replays a COMMIT or ABORT marker of producer pid at offset
// (ProducerAppendInfo.appendEndTxnMarker, then completeTxn): the entry
// takes the marker's epoch, coordinator epoch and timestamp and no longer
// has a transaction. A marker of a producer without an open transaction
// completes nothing (done is nil). A completed transaction moves from the
// ongoing ones to the unreplicated ones; completing one that is no longer
// tracked is IllegalArgumentException in completeTxn.
func (s *State) EndMarker(pid int64, epoch int16, coordinatorEpoch int32, offset, timestamp int64, abort bool) (done *Completed, err error) {
	e := s.entry(pid)
	first := e.CurrentTxnFirstOffset
	e.Epoch, e.CoordinatorEpoch, e.LastTimestamp = epoch, coordinatorEpoch, timestamp
	e.CurrentTxnFirstOffset, e.TxnBatches, e.TxnFirstTimestamp, e.TxnLastOffset = -1, 0, -1, -1
	if first < 0 {
		return nil, nil
	}
	c := &Completed{Txn: Txn{ProducerID: pid, FirstOffset: first, LastOffset: offset}, Aborted: abort, LastStableOffset: offset + 1}
	for _, t := range s.ongoing { // ascending first offset, as TreeMap.values()
		if t.ProducerID != pid {
			c.LastStableOffset = t.FirstOffset
			break
		}
	}
	i, found := findTxn(s.ongoing, first)
	if !found {
		return c, fmt.Errorf("marker of producer %d completes a transaction at offset %d that is no longer tracked (broker: IllegalArgumentException in completeTxn)", pid, first)
	}
	s.ongoing = slices.Delete(s.ongoing, i, i+1)
	s.unreplicated = putTxn(s.unreplicated, c.Txn)
	return c, nil
}

// OnHighWatermark is onHighWatermarkUpdated: completed transactions whose
// marker is below hw are no longer unstable.
func (s *State) OnHighWatermark(hw int64) {
	s.unreplicated = slices.DeleteFunc(s.unreplicated, func(t Txn) bool { return t.LastOffset < hw })
}

// FirstUnstableOffset is ProducerStateManager.firstUnstableOffset: the
// smaller of the first ongoing transaction's first offset and the first
// unreplicated one's; ok is false when there is neither.
func (s *State) FirstUnstableOffset() (offset int64, ok bool) {
	switch {
	case len(s.ongoing) > 0 && len(s.unreplicated) > 0:
		return min(s.ongoing[0].FirstOffset, s.unreplicated[0].FirstOffset), true
	case len(s.ongoing) > 0:
		return s.ongoing[0].FirstOffset, true
	case len(s.unreplicated) > 0:
		return s.unreplicated[0].FirstOffset, true
	}
	return 0, false
}

// LastStableOffset is UnifiedLog.lastStableOffset for a high watermark hw
// and log start offset: the first unstable offset, raised to the log start
// offset (maybeIncrementFirstUnstableOffset), when it is below hw, else
// hw. OnHighWatermark(hw) must have been applied.
func (s *State) LastStableOffset(hw, logStart int64) int64 {
	if fu, ok := s.FirstUnstableOffset(); ok {
		if fu = max(fu, logStart); fu < hw {
			return fu
		}
	}
	return hw
}

// Ongoing lists the open transactions by first offset.
func (s *State) Ongoing() []Txn { return slices.Clone(s.ongoing) }

// Unreplicated lists the completed transactions still unstable.
func (s *State) Unreplicated() []Txn { return slices.Clone(s.unreplicated) }

// Producer returns a producer's entry (nil when unknown).
func (s *State) Producer(pid int64) *Entry { return s.producers[pid] }

// Producers lists the producer ids.
func (s *State) Producers() []int64 { return slices.Sorted(maps.Keys(s.producers)) }

// OldestTxnLastTimestamp is oldestTxnLastTimestamp: the last timestamp of
// the producer of the ongoing transaction with the smallest first offset,
// -1 when there is none.
func (s *State) OldestTxnLastTimestamp() int64 {
	if len(s.ongoing) == 0 {
		return -1
	}
	if e := s.producers[s.ongoing[0].ProducerID]; e != nil {
		return e.LastTimestamp
	}
	return -1
}

// IsLate is hasLateTransaction's test for one producer's last timestamp:
// set (> 0) and older than maxTimeoutMs plus LateTransactionBufferMs.
func IsLate(lastTimestamp, now, maxTimeoutMs int64) bool {
	return lastTimestamp > 0 && now-lastTimestamp > maxTimeoutMs+LateTransactionBufferMs
}

// HasLateTransaction is ProducerStateManager.hasLateTransaction: the
// oldest ongoing transaction is late.
func (s *State) HasLateTransaction(now, maxTimeoutMs int64) bool {
	return IsLate(s.OldestTxnLastTimestamp(), now, maxTimeoutMs)
}

func findTxn(ts []Txn, firstOffset int64) (int, bool) {
	return slices.BinarySearchFunc(ts, firstOffset, func(t Txn, k int64) int {
		switch {
		case t.FirstOffset < k:
			return -1
		case t.FirstOffset > k:
			return 1
		}
		return 0
	})
}

// putTxn is TreeMap.put by first offset.
func putTxn(ts []Txn, t Txn) []Txn {
	i, found := findTxn(ts, t.FirstOffset)
	if found {
		ts[i] = t
		return ts
	}
	return slices.Insert(ts, i, t)
}
