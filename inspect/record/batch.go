package record

import (
	"encoding/binary"
	"hash/crc32"
	"math"

	"github.com/kseg/kseg/inspect/fileio"
)

// Log entry framing, common to every magic (broker: Records, DefaultRecordBatch,
// LegacyRecord):
//
//	0   i64 offset   v2: base offset; v0/v1: offset of the message (wrapper: last inner offset)
//	8   i32 length   bytes that follow this field; whole entry = 12 + length
//	12  4 bytes      v2: partition leader epoch; v0/v1: CRC-32 (IEEE)
//	16  i8  magic
//
// v2 record batch header (DefaultRecordBatch):
//
//	17 u32 crc (CRC-32C over [21, end))   21 i16 attributes   23 i32 lastOffsetDelta
//	27 i64 baseTimestamp   35 i64 maxTimestamp   43 i64 producerId   51 i16 producerEpoch
//	53 i32 baseSequence    57 i32 recordsCount   61 records
//
// v0/v1 message (LegacyRecord), after the 12-byte prefix:
//
//	12 u32 crc (CRC-32 over [16, end))  16 i8 magic  17 i8 attributes  [v1: 18 i64 timestamp]
//	then i32 keyLength, key, i32 valueLength, value.
const (
	LogOverhead         = 12               // offset + length prefix (Records.LOG_OVERHEAD)
	HeaderSizeUpToMagic = 17               // Records.HEADER_SIZE_UP_TO_MAGIC
	V2HeaderSize        = 61               // DefaultRecordBatch.RECORD_BATCH_OVERHEAD
	MinEntryLength      = 14               // smallest length field the file iterator accepts (LegacyRecord.RECORD_OVERHEAD_V0)
	LegacyHeaderV0      = LogOverhead + 6  // a v0 entry up to its key length: offset, length, crc, magic, attributes
	LegacyHeaderV1      = LogOverhead + 14 // a v1 entry up to its key length: v0 plus the timestamp

	// HeaderReadSize is how many bytes of an entry ParseBatch needs to see
	// (fewer are fine when the entry is shorter).
	HeaderReadSize = V2HeaderSize
)

// Compression codec ids (attribute bits 0-2; CompressionType.forId).
type Compression int8

const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4
)

// compressionNames are the codecs' names, by id (CompressionType.name).
var compressionNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

func (c Compression) String() string { return nameOf(compressionNames, int(c)) }

// nameOf is names[i], or "unknown" for an id outside the list.
func nameOf(names []string, i int) string {
	if i < 0 || i >= len(names) {
		return "unknown"
	}
	return names[i]
}

// Attribute masks (DefaultRecordBatch; bit 3 is also LegacyRecord's timestamp type).
const (
	AttrCompressionMask = 0x07
	AttrLogAppendTime   = 0x08
	AttrTransactional   = 0x10
	AttrControl         = 0x20
	AttrDeleteHorizon   = 0x40
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Batch is what the header of one log entry says, decoded by value (no
// allocation). For magic 0/1 an entry is one message, possibly a compressed
// wrapper; the broker calls both "batches" and so do we.
type Batch struct {
	Position   int64 // byte position of the entry in its .log
	Size       int64 // whole entry on disk: 12 + length
	Magic      int8
	BaseOffset int64 // v2: header field; legacy: the offset field, or -1 for a compressed wrapper until its inner messages are read
	LastOffset int64 // v2: base + lastOffsetDelta; legacy: the offset field
	CRC        uint32
	Attributes int16 // v2: the i16 field; legacy: the i8 attributes

	// v2 only; legacy entries carry the broker's defaults (-1, or 0 for
	// LastOffsetDelta and RecordCount -1).
	PartitionLeaderEpoch int32
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64 // legacy v1: the message timestamp; v0: -1
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32 // legacy: -1 (countOrNull is null)
}

// Compression is the codec in the attributes.
func (b *Batch) Compression() Compression { return Compression(b.Attributes & AttrCompressionMask) }

// LogAppendTime reports timestamp type LogAppendTime (v1 and v2 only).
func (b *Batch) LogAppendTime() bool { return b.Magic > 0 && b.Attributes&AttrLogAppendTime != 0 }

// TimestampType is "create", "log_append" or "none" (magic 0), as the contract spells them.
func (b *Batch) TimestampType() string {
	switch {
	case b.Magic == 0:
		return "none"
	case b.LogAppendTime():
		return "log_append"
	}
	return "create"
}

// IsTransactional reports the transactional attribute bit (v2 only).
func (b *Batch) IsTransactional() bool { return b.Magic >= 2 && b.Attributes&AttrTransactional != 0 }

// IsControl reports the control attribute bit (v2 only).
func (b *Batch) IsControl() bool { return b.Magic >= 2 && b.Attributes&AttrControl != 0 }

// End is the byte position just past the entry.
func (b *Batch) End() int64 { return b.Position + b.Size }

// NextOffset is the offset after the batch, OffsetAfter(LastOffset): a
// log's log end offset when the batch is its last.
func (b *Batch) NextOffset() int64 { return OffsetAfter(b.LastOffset) }

// OffsetAfter is o+1, except for o = 2^63-1, which no offset follows
// (offsets are Kafka longs): then o itself. A log whose last batch ends
// at 2^63-1 thus has the log end offset 2^63-1, the largest there is,
// where o+1 would wrap to -2^63, the smallest.
func OffsetAfter(o int64) int64 {
	if o == math.MaxInt64 {
		return o
	}
	return o + 1
}

// ParseBatch decodes the header of the entry at position pos. hdr holds the
// first bytes of the entry: at least HeaderSizeUpToMagic, and
// min(HeaderReadSize, bytes left in the file). It does not check that the
// whole entry fits in the file (the caller knows the file size) and it does
// not check the CRC.
//
// Like the broker's file iterator (FileLogInputStream.nextBatch) it chooses
// the legacy layout when the magic byte is < 2 as a signed byte, and the v2
// layout otherwise; a v2 entry shorter than 61 bytes or a legacy entry
// shorter than its fixed header is corrupt (DefaultRecordBatch.ensureValid,
// LegacyRecord.ensureValid).
func ParseBatch(hdr []byte, pos int64, file string) (Batch, error) {
	var b Batch
	err := ParseBatchTo(&b, hdr, pos, file)
	return b, err
}

// ParseBatchTo is ParseBatch decoding into *b, for readers that keep one
// Batch for a whole log: returning a Batch copied it out and back per
// batch, which cost as much as decoding it. *b is overwritten whatever the
// outcome.
func ParseBatchTo(b *Batch, hdr []byte, pos int64, file string) error {
	*b = Batch{}
	if len(hdr) < HeaderSizeUpToMagic {
		return fileio.Corruptf(file, pos, fileio.ErrTorn, "%d bytes left, a batch header needs %d", len(hdr), HeaderSizeUpToMagic)
	}
	length := int32(binary.BigEndian.Uint32(hdr[8:]))
	offset := int64(binary.BigEndian.Uint64(hdr[0:]))
	b.Position = pos
	b.Size = LogOverhead + int64(length)
	b.Magic = int8(hdr[16])
	if length < MinEntryLength {
		return fileio.Corruptf(file, pos, fileio.ErrCorruptHeader, "batch length %d is smaller than the minimum record overhead (%d)", length, MinEntryLength)
	}
	if b.Magic >= 2 {
		if b.Size < V2HeaderSize {
			return fileio.Corruptf(file, pos, fileio.ErrCorruptHeader, "record batch size %d is smaller than the minimum allowed overhead %d", b.Size, V2HeaderSize)
		}
		if len(hdr) < V2HeaderSize {
			return fileio.Corruptf(file, pos, fileio.ErrTorn, "%d bytes left, a v2 batch header needs %d", len(hdr), V2HeaderSize)
		}
		b.BaseOffset = offset
		b.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(hdr[12:]))
		b.CRC = binary.BigEndian.Uint32(hdr[17:])
		b.Attributes = int16(binary.BigEndian.Uint16(hdr[21:]))
		b.LastOffsetDelta = int32(binary.BigEndian.Uint32(hdr[23:]))
		b.LastOffset = offset + int64(b.LastOffsetDelta)
		b.BaseTimestamp = int64(binary.BigEndian.Uint64(hdr[27:]))
		b.MaxTimestamp = int64(binary.BigEndian.Uint64(hdr[35:]))
		b.ProducerID = int64(binary.BigEndian.Uint64(hdr[43:]))
		b.ProducerEpoch = int16(binary.BigEndian.Uint16(hdr[51:]))
		b.BaseSequence = int32(binary.BigEndian.Uint32(hdr[53:]))
		b.RecordCount = int32(binary.BigEndian.Uint32(hdr[57:]))
		if b.LastOffsetDelta < 0 {
			return fileio.Corruptf(file, pos, fileio.ErrCorruptHeader, "negative last offset delta %d", b.LastOffsetDelta)
		}
		return nil
	}
	need := int64(LegacyHeaderV0)
	if b.Magic == 1 {
		need = LegacyHeaderV1
	}
	if b.Size < need+8 { // + key and value length fields
		return fileio.Corruptf(file, pos, fileio.ErrCorruptHeader, "magic %d message size %d is smaller than its header", b.Magic, length)
	}
	if int64(len(hdr)) < need {
		return fileio.Corruptf(file, pos, fileio.ErrTorn, "%d bytes left, a magic %d header needs %d", len(hdr), b.Magic, need)
	}
	b.LastOffset = offset
	b.CRC = binary.BigEndian.Uint32(hdr[12:])
	b.Attributes = int16(hdr[17])
	b.PartitionLeaderEpoch = -1
	b.BaseTimestamp = -1
	b.MaxTimestamp = -1
	b.ProducerID = -1
	b.ProducerEpoch = -1
	b.BaseSequence = -1
	b.RecordCount = -1
	if b.Magic == 1 {
		b.MaxTimestamp = int64(binary.BigEndian.Uint64(hdr[18:]))
		b.BaseTimestamp = b.MaxTimestamp
	}
	if b.Compression() == CompressionNone {
		b.BaseOffset = offset
	} else {
		b.BaseOffset = -1
	}
	return nil
}

// ComputeCRC computes the checksum the header's CRC field should hold, over
// the whole entry bytes: CRC-32C of [21, end) for v2 (DefaultRecordBatch.
// computeChecksum), CRC-32 (IEEE) of [16, end) for v0/v1 (LegacyRecord).
// entry must be the complete entry (len(entry) == Size).
func ComputeCRC(magic int8, entry []byte) uint32 {
	if magic >= 2 {
		return crc32.Checksum(entry[21:], castagnoli)
	}
	return crc32.ChecksumIEEE(entry[16:])
}

// StoredCRC is the CRC stored in a whole entry with magic (the 4 bytes
// before CRCStart), as ParseBatch decodes it.
func StoredCRC(magic int8, entry []byte) uint32 {
	return binary.BigEndian.Uint32(entry[CRCStart(magic)-4:])
}

// UpdateCRC continues a checksum over part of an entry, for entries read in
// pieces; start with crc 0 over the bytes from CRCStart(magic).
func UpdateCRC(magic int8, crc uint32, p []byte) uint32 {
	if magic >= 2 {
		return crc32.Update(crc, castagnoli, p)
	}
	return crc32.Update(crc, crc32.IEEETable, p)
}

// CRCStart is the entry position where the checksummed bytes begin.
func CRCStart(magic int8) int64 {
	if magic >= 2 {
		return 21
	}
	return 16
}
