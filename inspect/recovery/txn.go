package recovery

import (
	"fmt"
	"slices"

	"github.com/kseg/kseg/indexfmt"
)

// txnState is the part of the broker's producer state that decides the
// transaction index: which producers have an open transaction and where it
// started. Recovery replays every v2 batch with a producer id through it
// (broker: LogSegment.updateProducerState, ProducerStateManager,
// ProducerAppendInfo); sequence numbers, epochs and coordinator epochs are
// only checked for logging on the replication path, so they are not kept.
//
// Two structures are kept, as in the broker, because on damaged data they
// can disagree:
//   - open: ProducerStateEntry.currentTxnFirstOffset per producer id;
//   - ongoing: ProducerStateManager.ongoingTxns, a TreeMap keyed by the
//     transaction's first offset (a second transaction with the same first
//     offset replaces the first one's entry).
//
// Memory is proportional to the number of open transactions, not to the
// size of the log.
type txnState struct {
	open    map[int64]int64
	ongoing []ongoingTxn // sorted by firstOffset, keys unique
}

type ongoingTxn struct {
	firstOffset int64
	producerID  int64
}

func newTxnState() *txnState { return &txnState{open: map[int64]int64{}} }

// clone copies the state, to roll a segment back (recovery that empties a
// segment also forgets what its batches did to the producer state).
func (s *txnState) clone() *txnState {
	c := &txnState{open: make(map[int64]int64, len(s.open)), ongoing: slices.Clone(s.ongoing)}
	for k, v := range s.open {
		c.open[k] = v
	}
	return c
}

// find returns the index of firstOffset in ongoing, or where it would go.
func (s *txnState) find(firstOffset int64) (int, bool) {
	return slices.BinarySearchFunc(s.ongoing, firstOffset, func(t ongoingTxn, k int64) int {
		switch {
		case t.firstOffset < k:
			return -1
		case t.firstOffset > k:
			return 1
		}
		return 0
	})
}

// dataBatch replays a data batch (ProducerAppendInfo.appendDataBatch): a
// transactional batch of a producer with no open transaction opens one at
// the batch's base offset. A non-transactional batch while a transaction is
// open makes the broker throw InvalidTxnStateException, which recovery does
// not catch: the log cannot be loaded.
func (s *txnState) dataBatch(producerID, baseOffset int64, transactional bool) error {
	_, isOpen := s.open[producerID]
	switch {
	case isOpen && !transactional:
		return fmt.Errorf("non-transactional batch of producer %d while its transaction is open (broker: InvalidTxnStateException)", producerID)
	case !isOpen && transactional:
		s.open[producerID] = baseOffset
		i, found := s.find(baseOffset)
		if found {
			s.ongoing[i].producerID = producerID
		} else {
			s.ongoing = slices.Insert(s.ongoing, i, ongoingTxn{baseOffset, producerID})
		}
	}
	return nil
}

// endMarker replays a COMMIT or ABORT marker at offset markerOffset (the
// control batch's base offset; ProducerAppendInfo.appendEndTxnMarker). A
// marker of a producer without an open transaction completes nothing. For
// a completed transaction it returns the entry the transaction index gets
// when it was aborted (LogSegment.updateTxnIndex): lastStableOffset is the
// first offset of the earliest still-open transaction of another producer,
// else markerOffset + 1 (ProducerStateManager.lastStableOffset, evaluated
// before completeTxn removes this transaction).
func (s *txnState) endMarker(producerID, markerOffset int64, abort bool) (txn indexfmt.AbortedTxn, aborted bool, err error) {
	first, isOpen := s.open[producerID]
	if !isOpen {
		return txn, false, nil
	}
	delete(s.open, producerID) // ProducerStateEntry.update clears currentTxnFirstOffset
	lso := markerOffset + 1
	for _, t := range s.ongoing { // ascending first offset, as TreeMap.values()
		if t.producerID != producerID {
			lso = t.firstOffset
			break
		}
	}
	txn = indexfmt.AbortedTxn{Version: 0, ProducerID: producerID, FirstOffset: first, LastOffset: markerOffset, LastStableOffset: lso}
	// ProducerStateManager.completeTxn: removes by first offset, and throws
	// IllegalArgumentException when no transaction started there.
	i, found := s.find(first)
	if !found {
		return txn, false, fmt.Errorf("marker of producer %d completes a transaction at offset %d that is no longer tracked (broker: IllegalArgumentException in completeTxn)", producerID, first)
	}
	s.ongoing = slices.Delete(s.ongoing, i, i+1)
	return txn, abort, nil
}
