package kafkagen

import (
	"encoding/binary"
	"hash/crc32"
)

// This file is the write side of the log formats, written from the byte
// layouts alone (it does not share code with any decoder in this module).
//
// Framing common to every magic (Records):
//
//	0 i64 offset   8 i32 length (bytes that follow)   12 4 bytes   16 i8 magic
//
// v2 record batch (DefaultRecordBatch):
//
//	0  i64 baseOffset          8  i32 batchLength       12 i32 partitionLeaderEpoch
//	16 i8  magic (2)           17 u32 crc (CRC-32C over [21, end))
//	21 i16 attributes          23 i32 lastOffsetDelta   27 i64 baseTimestamp
//	35 i64 maxTimestamp        43 i64 producerId        51 i16 producerEpoch
//	53 i32 baseSequence        57 i32 recordsCount      61 records (raw or one compressed stream)
//
// v0/v1 message (LegacyRecord), after offset and length:
//
//	12 u32 crc (CRC-32 IEEE over [16, end))   16 i8 magic   17 i8 attributes
//	v1: 18 i64 timestamp;  then i32 keyLength, key, i32 valueLength, value (-1 = null)

const (
	logOverhead     = 12 // Records.LOG_OVERHEAD
	v2HeaderSize    = 61 // DefaultRecordBatch.RECORD_BATCH_OVERHEAD
	v2CRCStart      = 21 // DefaultRecordBatch.ATTRIBUTES_OFFSET: the CRC covers [21, end)
	controlBatchLen = 78 // 61 + 17 (EndTransactionMarker.CURRENT_END_TXN_SCHEMA_RECORD_SIZE)
)

// Attribute bits (DefaultRecordBatch; bits 0-3 also LegacyRecord).
const (
	attrCompressionMask = 0x07
	attrLogAppendTime   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
)

// Control record types (ControlRecordType).
const (
	controlAbort  int16 = 0
	controlCommit int16 = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendVarint appends n as Kafka's zig-zag LEB128 varint/varlong
// (ByteUtils.writeVarint/writeVarlong). Go's binary.AppendVarint uses the
// same zig-zag mapping and 7-bit groups, low group first; for values in
// int32 range the 64-bit zig-zag equals the 32-bit one, so one function
// serves both widths.
func appendVarint(dst []byte, n int64) []byte { return binary.AppendVarint(dst, n) }

// varintSize is the encoded length of appendVarint(n).
func varintSize(n int64) int {
	u := uint64(n<<1) ^ uint64(n>>63)
	s := 1
	for u >= 0x80 {
		u >>= 7
		s++
	}
	return s
}

// genRecord is one record to encode. Offsets are absolute; timestamp is the
// producer's (create) timestamp. A nil key is null; values are never null.
type genRecord struct {
	offset    int64
	timestamp int64
	key       []byte
	value     []byte
	headers   []RecordHeader
}

func bytesFieldSize(b []byte) int {
	if b == nil {
		return varintSize(-1)
	}
	return varintSize(int64(len(b))) + len(b)
}

func appendBytesField(dst, b []byte) []byte {
	if b == nil {
		return appendVarint(dst, -1)
	}
	dst = appendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// appendV2Record appends one record (DefaultRecord.writeTo):
//
//	length varint (bytes that follow), attributes i8 (0), timestampDelta
//	varlong, offsetDelta varint, key (varint length, -1 = null), value,
//	header count varint, headers (key varint length + UTF-8, value).
func appendV2Record(dst []byte, timestampDelta int64, offsetDelta int32, key, value []byte, headers []RecordHeader) []byte {
	body := 1 + varintSize(timestampDelta) + varintSize(int64(offsetDelta)) +
		bytesFieldSize(key) + bytesFieldSize(value) + varintSize(int64(len(headers)))
	for i := range headers {
		body += varintSize(int64(len(headers[i].Key))) + len(headers[i].Key) + bytesFieldSize(headers[i].Value)
	}
	dst = appendVarint(dst, int64(body))
	dst = append(dst, 0) // attributes: unused, written as 0
	dst = appendVarint(dst, timestampDelta)
	dst = appendVarint(dst, int64(offsetDelta))
	dst = appendBytesField(dst, key)
	dst = appendBytesField(dst, value)
	dst = appendVarint(dst, int64(len(headers)))
	for i := range headers {
		dst = appendVarint(dst, int64(len(headers[i].Key)))
		dst = append(dst, headers[i].Key...)
		dst = appendBytesField(dst, headers[i].Value)
	}
	return dst
}

// v2Header holds the header fields of a v2 batch.
type v2Header struct {
	baseOffset           int64
	partitionLeaderEpoch int32
	attributes           int16
	lastOffsetDelta      int32
	baseTimestamp        int64
	maxTimestamp         int64
	producerID           int64
	producerEpoch        int16
	baseSequence         int32
	recordsCount         int32
}

// appendV2Batch appends a whole v2 batch whose records section (already
// encoded and, if the attributes say so, compressed) is payload. It fills
// in batchLength and the CRC-32C over [21, end) (DefaultRecordBatch.writeHeader,
// computeChecksum). It returns the new slice and the CRC.
func appendV2Batch(dst []byte, h *v2Header, payload []byte) ([]byte, uint32) {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.baseOffset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(v2HeaderSize-logOverhead+len(payload)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.partitionLeaderEpoch))
	dst = append(dst, 2)
	dst = append(dst, 0, 0, 0, 0) // crc, filled below
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.attributes))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.lastOffsetDelta))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.baseTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.maxTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.producerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.producerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.baseSequence))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.recordsCount))
	dst = append(dst, payload...)
	crc := crc32.Checksum(dst[start+v2CRCStart:], castagnoli)
	binary.BigEndian.PutUint32(dst[start+17:], crc)
	return dst, crc
}

// controlKey and markerValue are the key and value of an end-transaction
// marker record (ControlRecordType key: version i16 0, type i16;
// EndTransactionMarker value: version i16 0, coordinatorEpoch i32).
func controlKey(typ int16) []byte {
	return []byte{0, 0, byte(uint16(typ) >> 8), byte(typ)}
}

func markerValue(coordinatorEpoch int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(coordinatorEpoch))
}

// appendControlBatch appends an end-transaction marker batch exactly as
// MemoryRecords.writeEndTransactionalMarker builds it: attributes
// transactional|control (0x30, plus 0x08 when the topic uses
// LogAppendTime), baseSequence -1, lastOffsetDelta 0, no compression, one
// 17-byte record with offsetDelta 0 and timestampDelta 0: 78 bytes in all.
// maxTimestamp is the append time for LogAppendTime, else timestamp.
func appendControlBatch(dst []byte, offset int64, leaderEpoch int32, producerID int64, producerEpoch int16,
	typ int16, coordinatorEpoch int32, timestamp, maxTimestamp int64, logAppendTime bool, scratch []byte) ([]byte, uint32) {
	attrs := int16(attrTransactional | attrControl)
	if logAppendTime {
		attrs |= attrLogAppendTime
	}
	h := v2Header{
		baseOffset:           offset,
		partitionLeaderEpoch: leaderEpoch,
		attributes:           attrs,
		lastOffsetDelta:      0,
		baseTimestamp:        timestamp,
		maxTimestamp:         maxTimestamp,
		producerID:           producerID,
		producerEpoch:        producerEpoch,
		baseSequence:         -1,
		recordsCount:         1,
	}
	rec := appendV2Record(scratch[:0], 0, 0, controlKey(typ), markerValue(coordinatorEpoch), nil)
	return appendV2Batch(dst, &h, rec)
}

// appendLegacyMessage appends one v0/v1 log entry (LegacyRecord.write):
// offset, length, CRC-32 over [magic, end), magic, attributes, timestamp
// (v1 only), key and value with i32 lengths (-1 = null). It returns the new
// slice and the CRC.
func appendLegacyMessage(dst []byte, offset int64, magic int8, attributes int8, timestamp int64, key, value []byte) ([]byte, uint32) {
	start := len(dst)
	size := 4 + 1 + 1 + 4 + len(key) + 4 + len(value)
	if magic == 1 {
		size += 8
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(offset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(size))
	dst = append(dst, 0, 0, 0, 0) // crc, filled below
	dst = append(dst, byte(magic), byte(attributes))
	if magic == 1 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(timestamp))
	}
	dst = appendLegacyBytes(dst, key)
	dst = appendLegacyBytes(dst, value)
	crc := crc32.ChecksumIEEE(dst[start+16:])
	binary.BigEndian.PutUint32(dst[start+12:], crc)
	return dst, crc
}

func appendLegacyBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// nextSequence is DefaultRecordBatch.incrementSequence: sequence numbers
// wrap from Integer.MAX_VALUE to 0.
func nextSequence(seq, increment int32) int32 {
	if seq > 1<<31-1-increment {
		return increment - (1<<31 - 1 - seq) - 1
	}
	return seq + increment
}
