package rebuild

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
)

// Hand-built log entries, encoded here independently of inspect and gen
// (kafka-on-disk.md sections 2 and 3), for cases the generator does not
// write: damage, odd producer-state sequences, offsets out of order.

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// v2Record encodes one record (DefaultRecord): length, attributes,
// timestampDelta, offsetDelta, key, value, no headers. A nil key or value is
// written as null (length -1).
func v2Record(offsetDelta int32, key, value []byte) []byte {
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

// batchSpec is a v2 record batch header.
type batchSpec struct {
	base      int64
	lastDelta int32
	maxTs     int64
	pid       int64 // -1: none
	attrs     int16
	count     int32
	payload   []byte // records as stored
}

// v2Batch encodes a record batch with a correct CRC-32C.
func v2Batch(s batchSpec) []byte {
	b := make([]byte, 61, 61+len(s.payload))
	binary.BigEndian.PutUint64(b[0:], uint64(s.base))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(s.payload)))
	binary.BigEndian.PutUint32(b[12:], 0) // partition leader epoch
	b[16] = 2
	binary.BigEndian.PutUint16(b[21:], uint16(s.attrs))
	binary.BigEndian.PutUint32(b[23:], uint32(s.lastDelta))
	binary.BigEndian.PutUint64(b[27:], uint64(s.maxTs)) // base timestamp
	binary.BigEndian.PutUint64(b[35:], uint64(s.maxTs))
	binary.BigEndian.PutUint64(b[43:], uint64(s.pid))
	epoch, seq := int16(-1), int32(-1)
	if s.pid >= 0 {
		epoch, seq = 0, 0
	}
	binary.BigEndian.PutUint16(b[51:], uint16(epoch))
	binary.BigEndian.PutUint32(b[53:], uint32(seq))
	binary.BigEndian.PutUint32(b[57:], uint32(s.count))
	b = append(b, s.payload...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoliTable))
	return b
}

// data is a plain batch of n records at base with max timestamp ts.
func data(base int64, n int32, ts int64) []byte {
	return txnData(base, n, ts, -1, false)
}

// txnData is a data batch of producer pid, transactional or not.
func txnData(base int64, n int32, ts, pid int64, transactional bool) []byte {
	var payload []byte
	for i := int32(0); i < n; i++ {
		payload = append(payload, v2Record(i, []byte("k"), []byte("value"))...)
	}
	attrs := int16(0)
	if transactional {
		attrs |= 0x10
	}
	return v2Batch(batchSpec{base: base, lastDelta: n - 1, maxTs: ts, pid: pid, attrs: attrs, count: n, payload: payload})
}

// controlKey and markerValue are a control record's key and an end
// transaction marker's value (version 0).
func controlKey(typ int16) []byte {
	return binary.BigEndian.AppendUint16([]byte{0, 0}, uint16(typ))
}

func markerValue(epoch int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(epoch))
}

// marker is a COMMIT (typ 1) or ABORT (typ 0) control batch of pid at offset.
func marker(offset, ts, pid int64, typ int16) []byte {
	return v2Batch(batchSpec{base: offset, maxTs: ts, pid: pid, attrs: 0x30, count: 1,
		payload: v2Record(0, controlKey(typ), markerValue(7))})
}

const (
	abortType  = 0
	commitType = 1
)

// legacyMessage encodes a v0 or v1 message with a correct CRC-32.
func legacyMessage(offset int64, magic int8, ts int64, value []byte) []byte {
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

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// writeLogs writes a partition directory holding one .log per base offset
// (and nothing else) and reads it back.
func writeLogs(t *testing.T, dir string, logs map[int64][]byte) *inspect.Partition {
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

// planOne plans a one-segment partition at base offset 0.
func planOne(t *testing.T, log []byte, opts Options) SegmentPlan {
	t.Helper()
	p := writeLogs(t, filepath.Join(t.TempDir(), "t-0"), map[int64][]byte{0: log})
	plans, err := PlanPartition(p, opts)
	if err != nil {
		t.Fatalf("PlanPartition: %v", err)
	}
	if len(plans) != 1 {
		t.Fatalf("%d plans, want 1", len(plans))
	}
	return plans[0]
}

func readFileOrNil(t *testing.T, path string) []byte {
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

// fixturesDir locates the shared real broker data beside the module.
func fixturesDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join("..", "..", "shared", "fixtures", "real")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("real broker fixtures not found at %s (they live beside the module): %v", d, err)
	}
	return d
}
