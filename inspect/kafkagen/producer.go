package kafkagen

import (
	"encoding/binary"
	"hash/crc32"
	"sort"
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

// Producer snapshot file (ProducerStateManager.writeSnapshot,
// ProducerSnapshot.json version 1):
//
//	0 i16 version (1)   2 u32 crc: CRC-32C of [6, end)   6 i32 entry count
//	then 46 bytes per producer: i64 producerId, i16 epoch, i32 lastSequence,
//	i64 lastOffset, i32 offsetDelta, i64 timestamp, i32 coordinatorEpoch,
//	i64 currentTxnFirstOffset
//
// A producer without batch metadata is written with lastSequence -1,
// lastOffset -1, offsetDelta 0. Entries appear in hash-map order in Kafka;
// here they are sorted by producer id.
const (
	snapshotVersion   = 1
	snapshotEntrySize = 46
)

// snapshotEntry is one producer in a snapshot file.
type snapshotEntry struct {
	ProducerID            int64
	Epoch                 int16
	LastSequence          int32
	LastOffset            int64
	OffsetDelta           int32
	Timestamp             int64
	CoordinatorEpoch      int32
	CurrentTxnFirstOffset int64
}

func encodeSnapshot(entries []snapshotEntry) []byte {
	b := make([]byte, 0, 10+snapshotEntrySize*len(entries))
	b = binary.BigEndian.AppendUint16(b, snapshotVersion)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.ProducerID))
		b = binary.BigEndian.AppendUint16(b, uint16(e.Epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(e.LastSequence))
		b = binary.BigEndian.AppendUint64(b, uint64(e.LastOffset))
		b = binary.BigEndian.AppendUint32(b, uint32(e.OffsetDelta))
		b = binary.BigEndian.AppendUint64(b, uint64(e.Timestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.CoordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.CurrentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
	return b
}

// snapshotOf lists the producers the broker would have in its state: every
// producer id that appended a batch or marker.
func snapshotOf(producers []producer) []snapshotEntry {
	var out []snapshotEntry
	for i := range producers {
		p := &producers[i]
		if !p.hasBatch && p.coordinatorEpoch < 0 {
			continue
		}
		e := snapshotEntry{
			ProducerID:            p.id,
			Epoch:                 p.epoch,
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
