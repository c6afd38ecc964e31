package gentest

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
)

// Hand-built log entries for the tests of broker recovery (inspect/recovery)
// and of rebuild, encoded here independently of inspect and of the
// generator (kafka-on-disk.md sections 2 and 3), for cases the generator
// does not write: damage, odd producer-state sequences, offsets out of
// order.

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// V2Record encodes one record (DefaultRecord): length, attributes,
// timestampDelta, offsetDelta, key, value, no headers. A nil key or value is
// written as null (length -1).
func V2Record(offsetDelta int32, key, value []byte) []byte {
	var body []byte
	body = append(body, 0)              // attributes
	body = binary.AppendVarint(body, 0) // timestamp delta
	body = binary.AppendVarint(body, int64(offsetDelta))
	body = appendField(body, key)
	body = appendField(body, value)
	body = binary.AppendVarint(body, 0) // headers
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

func appendField(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

// BatchSpec is a v2 record batch header.
type BatchSpec struct {
	Base      int64
	LastDelta int32
	MaxTs     int64
	PID       int64 // -1: none
	Attrs     int16
	Count     int32
	Payload   []byte // records as stored
}

// V2Batch encodes a record batch with a correct CRC-32C.
func V2Batch(s BatchSpec) []byte {
	b := make([]byte, 61, 61+len(s.Payload))
	binary.BigEndian.PutUint64(b[0:], uint64(s.Base))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(s.Payload)))
	binary.BigEndian.PutUint32(b[12:], 0) // partition leader epoch
	b[16] = 2
	binary.BigEndian.PutUint16(b[21:], uint16(s.Attrs))
	binary.BigEndian.PutUint32(b[23:], uint32(s.LastDelta))
	binary.BigEndian.PutUint64(b[27:], uint64(s.MaxTs)) // base timestamp
	binary.BigEndian.PutUint64(b[35:], uint64(s.MaxTs))
	binary.BigEndian.PutUint64(b[43:], uint64(s.PID))
	epoch, seq := int16(-1), int32(-1)
	if s.PID >= 0 {
		epoch, seq = 0, 0
	}
	binary.BigEndian.PutUint16(b[51:], uint16(epoch))
	binary.BigEndian.PutUint32(b[53:], uint32(seq))
	binary.BigEndian.PutUint32(b[57:], uint32(s.Count))
	b = append(b, s.Payload...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoliTable))
	return b
}

// Data is a plain batch of n records at base with max timestamp ts.
func Data(base int64, n int32, ts int64) []byte {
	return TxnData(base, n, ts, -1, false)
}

// TxnData is a data batch of producer pid, transactional or not.
func TxnData(base int64, n int32, ts, pid int64, transactional bool) []byte {
	var payload []byte
	for i := int32(0); i < n; i++ {
		payload = append(payload, V2Record(i, []byte("k"), []byte("value"))...)
	}
	attrs := int16(0)
	if transactional {
		attrs |= 0x10
	}
	return V2Batch(BatchSpec{Base: base, LastDelta: n - 1, MaxTs: ts, PID: pid, Attrs: attrs, Count: n, Payload: payload})
}

// Sized is a data batch of exactly size bytes (records are not decoded by
// recovery, so the payload is filler).
func Sized(base int64, lastDelta int32, ts int64, size int) []byte {
	return V2Batch(BatchSpec{Base: base, LastDelta: lastDelta, MaxTs: ts, PID: -1, Count: lastDelta + 1, Payload: make([]byte, size-61)})
}

// ControlKey and MarkerValue are a control record's key and an end
// transaction marker's value (version 0).
func ControlKey(typ int16) []byte {
	return binary.BigEndian.AppendUint16([]byte{0, 0}, uint16(typ))
}

func MarkerValue(epoch int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(epoch))
}

// Marker is a COMMIT (typ CommitType) or ABORT (typ AbortType) control
// batch of pid at offset.
func Marker(offset, ts, pid int64, typ int16) []byte {
	return V2Batch(BatchSpec{Base: offset, MaxTs: ts, PID: pid, Attrs: 0x30, Count: 1,
		Payload: V2Record(0, ControlKey(typ), MarkerValue(7))})
}

// Control record types of end transaction markers (ControlRecordType).
const (
	AbortType  = 0
	CommitType = 1
)

// LegacyMessage encodes a v0 or v1 message with a correct CRC-32.
func LegacyMessage(offset int64, magic int8, ts int64, value []byte) []byte {
	var m []byte
	m = append(m, byte(magic), 0)
	if magic == 1 {
		m = binary.BigEndian.AppendUint64(m, uint64(ts))
	}
	m = binary.BigEndian.AppendUint32(m, 0xffffffff) // null key
	m = binary.BigEndian.AppendUint32(m, uint32(len(value)))
	m = append(m, value...)
	b := binary.BigEndian.AppendUint64(nil, uint64(offset))
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(m)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(m))
	return append(b, m...)
}

// Concat joins log entries into one log.
func Concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// WriteLogs writes a partition directory holding one .log per base offset
// (and nothing else) and reads it back.
func WriteLogs(t *testing.T, dir string, logs map[int64][]byte) *inspect.Partition {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for base, b := range logs {
		if err := os.WriteFile(filepath.Join(dir, inspect.SegmentName(base)+".log"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ReadFileOrNil reads path; a missing file (or no path) is nil.
func ReadFileOrNil(t *testing.T, path string) []byte {
	t.Helper()
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// OverlapLogs is a partition whose first segment runs into the second:
// segment 0 holds offsets 0..39 in batches of ten, segment 15 starts at
// offset 15. The batch 10..19 is the first to reach offset 15, at cutAt.
func OverlapLogs() (seg0, seg15 []byte, cutAt int64) {
	var b []byte
	for i := int64(0); i < 4; i++ {
		if i == 1 {
			cutAt = int64(len(b))
		}
		b = append(b, Data(i*10, 10, 1000+i)...)
	}
	return b, Concat(Data(15, 10, 2000), Data(25, 10, 2001)), cutAt
}
