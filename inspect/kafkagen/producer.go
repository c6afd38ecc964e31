package kafkagen

import (
	"sort"

	"github.com/kseg/kseg/inspect/sidefile"
)

// producer is the state the broker keeps per producer id
// (ProducerStateEntry) plus what the generator needs to continue it.
type producer struct {
	id               int64
	epoch            int16
	nextSequence     int32
	coordinatorEpoch int32 // -1 until the first marker
	txnFirstOffset   int64 // currentTxnFirstOffset: -1 when no transaction is open

	hasBatch        bool // batch metadata exists (a data batch was appended)
	lastSequence    int32
	lastDataOffset  int64
	lastOffsetDelta int32
	lastTimestamp   int64 // max timestamp of the last batch or marker
}

// lastStableOffset is ProducerStateManager.lastStableOffset(completedTxn):
// the first offset of the earliest transaction still open of another
// producer, or lastOffset + 1 when there is none.
func lastStableOffset(producers []producer, producerID, lastOffset int64) int64 {
	lso := int64(-1)
	for i := range producers {
		p := &producers[i]
		if p.id != producerID && p.txnFirstOffset >= 0 && (lso < 0 || p.txnFirstOffset < lso) {
			lso = p.txnFirstOffset
		}
	}
	if lso < 0 {
		return lastOffset + 1
	}
	return lso
}

// snapshotOf lists the producers the broker would have in its state: every
// producer id that appended a batch or marker.
func snapshotOf(producers []producer) []sidefile.ProducerEntry {
	var out []sidefile.ProducerEntry
	for i := range producers {
		p := &producers[i]
		if !p.hasBatch && p.coordinatorEpoch < 0 {
			continue
		}
		e := sidefile.ProducerEntry{
			ProducerID:            p.id,
			ProducerEpoch:         p.epoch,
			LastSequence:          -1,
			LastOffset:            -1,
			Timestamp:             p.lastTimestamp,
			CoordinatorEpoch:      p.coordinatorEpoch,
			CurrentTxnFirstOffset: p.txnFirstOffset,
		}
		if p.hasBatch {
			e.LastSequence, e.LastOffset, e.OffsetDelta = p.lastSequence, p.lastDataOffset, p.lastOffsetDelta
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}
