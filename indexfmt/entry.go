package indexfmt

import "encoding/binary"

// Entry sizes (OffsetIndex.ENTRY_SIZE, TimeIndex.ENTRY_SIZE, AbortedTxn.TOTAL_SIZE).
const (
	OffsetEntrySize = 8
	TimeEntrySize   = 12
	TxnEntrySize    = 34
)

// AppendOffsetEntry appends one offset-index entry:
//
//	0 i32 relative offset (absolute = base offset + value)
//	4 i32 position of the batch in the .log
func AppendOffsetEntry(dst []byte, relativeOffset, position int32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(relativeOffset))
	return binary.BigEndian.AppendUint32(dst, uint32(position))
}

// AppendTimeEntry appends one time-index entry:
//
//	0 i64 timestamp (ms)
//	8 i32 relative offset
func AppendTimeEntry(dst []byte, timestamp int64, relativeOffset int32) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(timestamp))
	return binary.BigEndian.AppendUint32(dst, uint32(relativeOffset))
}

// AbortedTxn is one transaction-index entry (AbortedTxn):
//
//	0 i16 version (0)   2 i64 producerId   10 i64 firstOffset
//	18 i64 lastOffset (the ABORT marker)   26 i64 lastStableOffset
type AbortedTxn struct {
	Version          int16
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// AppendTxnEntry appends one transaction-index entry.
func AppendTxnEntry(dst []byte, t AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(t.Version))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(t.LastStableOffset))
}

// DecodeTxnEntry decodes a 34-byte transaction-index entry. Like
// encoding/binary it panics when b is shorter than TxnEntrySize: the caller
// slices the file (TxnIndex.Entry does, with a bounds check).
func DecodeTxnEntry(b []byte) AbortedTxn {
	_ = b[TxnEntrySize-1]
	return AbortedTxn{
		Version:          int16(binary.BigEndian.Uint16(b[0:])),
		ProducerID:       int64(binary.BigEndian.Uint64(b[2:])),
		FirstOffset:      int64(binary.BigEndian.Uint64(b[10:])),
		LastOffset:       int64(binary.BigEndian.Uint64(b[18:])),
		LastStableOffset: int64(binary.BigEndian.Uint64(b[26:])),
	}
}

// VersionByte is what the broker checks: AbortedTxn.version() reads only
// byte 0, the high byte of the i16 field, and rejects a value > 0.
func (t AbortedTxn) VersionByte() int8 { return int8(uint16(t.Version) >> 8) }
