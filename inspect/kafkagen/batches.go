package kafkagen

import "encoding/binary"

// Hand-built logs: tests that need exact batches (a replica whose batch
// boundaries differ from another's, a __consumer_offsets partition with
// chosen records) build them with these encoders and write the bytes as a
// segment's .log; the rest of the partition (indexes, checkpoints) is up
// to the caller.

// Record is one record of a hand-built v2 batch.
type Record struct {
	// OffsetDelta is the record's offset minus the batch's base offset
	// (records must come in increasing deltas; gaps are compaction's).
	OffsetDelta int32
	Timestamp   int64
	Key, Value  []byte // nil means null
	Headers     []RecordHeader
}

// Batch is a hand-built v2 batch.
type Batch struct {
	BaseOffset  int64
	LeaderEpoch int32 // partitionLeaderEpoch (-1: none)
	// ProducerID -1 writes no producer (epoch and base sequence -1).
	ProducerID    int64
	ProducerEpoch int16
	Transactional bool
	// Compression is a codec name of Options.Compression ("" or "none":
	// uncompressed).
	Compression string
	Records     []Record
}

// AppendBatch appends b as one v2 batch with CreateTime timestamps:
// baseTimestamp is the first record's, maxTimestamp the largest,
// lastOffsetDelta the last record's delta. It panics on an unknown codec
// name (a test's mistake).
func AppendBatch(dst []byte, b Batch) []byte {
	h := v2Header{
		baseOffset:           b.BaseOffset,
		partitionLeaderEpoch: b.LeaderEpoch,
		producerID:           b.ProducerID,
		producerEpoch:        b.ProducerEpoch,
		baseSequence:         -1,
		recordsCount:         int32(len(b.Records)),
		maxTimestamp:         -1,
	}
	if b.ProducerID < 0 {
		h.producerID, h.producerEpoch = -1, -1
	} else {
		h.baseSequence = 0
	}
	if b.Transactional {
		h.attributes |= attrTransactional
	}
	var payload []byte
	for i, r := range b.Records {
		if i == 0 {
			h.baseTimestamp = r.Timestamp
		}
		h.maxTimestamp = max(h.maxTimestamp, r.Timestamp)
		h.lastOffsetDelta = r.OffsetDelta
		payload = appendV2Record(payload, r.Timestamp-h.baseTimestamp, r.OffsetDelta, r.Key, r.Value, r.Headers)
	}
	if b.Compression != "" && b.Compression != "none" {
		c, ok := codecByName[b.Compression]
		if !ok {
			panic("kafkagen: unknown codec " + b.Compression)
		}
		z, err := newCompressor(c)
		if err == nil {
			payload, err = z.compress(payload, 2)
		}
		if err != nil {
			panic("kafkagen: " + err.Error())
		}
		h.attributes |= int16(c.id)
	}
	dst, _ = appendV2Batch(dst, &h, payload)
	return dst
}

// AppendEndTxnMarker appends the COMMIT (commit true) or ABORT marker batch
// of producerID at offset, as a transaction coordinator has it written.
func AppendEndTxnMarker(dst []byte, offset int64, leaderEpoch int32, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, timestamp int64) []byte {
	typ := controlAbort
	if commit {
		typ = controlCommit
	}
	dst, _ = appendControlBatch(dst, offset, leaderEpoch, producerID, producerEpoch, typ, coordinatorEpoch, timestamp, timestamp, false, nil)
	return dst
}

// __consumer_offsets records, written from the message definitions
// (group-coordinator/src/main/resources/common/message/OffsetCommitKey.json,
// OffsetCommitValue.json): an i16 version, then the fields. Versions 0-3
// of the value are not flexible; version 4 is (compact strings, a tagged
// field section).

// OffsetCommitKey is the key of an offset commit (key version 1, as every
// broker since 0.9 writes it).
func OffsetCommitKey(group, topic string, partition int32) []byte {
	b := binary.BigEndian.AppendUint16(nil, 1)
	b = appendString(b, group)
	b = appendString(b, topic)
	return binary.BigEndian.AppendUint32(b, uint32(partition))
}

// OffsetCommitValue is an offset commit's value in the given version
// (0-4): offset, leaderEpoch (v3+), metadata, commitTimestamp,
// expireTimestamp (v1 only).
func OffsetCommitValue(version int16, offset int64, leaderEpoch int32, metadata string, commitTimestamp, expireTimestamp int64) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(version))
	b = binary.BigEndian.AppendUint64(b, uint64(offset))
	if version >= 3 {
		b = binary.BigEndian.AppendUint32(b, uint32(leaderEpoch))
	}
	if version >= 4 {
		b = binary.AppendUvarint(b, uint64(len(metadata)+1))
		b = append(b, metadata...)
	} else {
		b = appendString(b, metadata)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(commitTimestamp))
	if version == 1 {
		b = binary.BigEndian.AppendUint64(b, uint64(expireTimestamp))
	}
	if version >= 4 {
		b = append(b, 0) // no tagged fields
	}
	return b
}

// GroupMetadataKey is the key of a classic group's metadata record (key
// version 2).
func GroupMetadataKey(group string) []byte {
	return appendString(binary.BigEndian.AppendUint16(nil, 2), group)
}

// ConsumerGroupMetadataKey is the key of a KIP-848 consumer group's
// metadata record (key version 3).
func ConsumerGroupMetadataKey(group string) []byte {
	return appendString(binary.BigEndian.AppendUint16(nil, 3), group)
}

// appendString appends a non-flexible string: i16 length, then the bytes.
func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}
