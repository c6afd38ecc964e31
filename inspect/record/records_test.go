package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/internal/fuzzcheck"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ---- test builders (hand-written encoders, independent of the decoder) ----

// rdRec is one v2 record to encode.
type rdRec struct {
	attrs    int8
	tsDelta  int64
	offDelta int32
	key      []byte // nil = null
	value    []byte // nil = null
	headers  []Header
}

func rdAppendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// rdRecordBody encodes everything after a record's length varint.
func rdRecordBody(r rdRec) []byte {
	body := []byte{byte(r.attrs)}
	body = binary.AppendVarint(body, r.tsDelta)
	body = binary.AppendVarint(body, int64(r.offDelta))
	body = rdAppendVarBytes(body, r.key)
	body = rdAppendVarBytes(body, r.value)
	body = binary.AppendVarint(body, int64(len(r.headers)))
	for _, h := range r.headers {
		body = rdAppendVarBytes(body, h.Key)
		body = rdAppendVarBytes(body, h.Value)
	}
	return body
}

// rdRecords encodes records back to back (an uncompressed v2 payload).
func rdRecords(recs ...rdRec) []byte {
	var out []byte
	for _, r := range recs {
		body := rdRecordBody(r)
		out = binary.AppendVarint(out, int64(len(body)))
		out = append(out, body...)
	}
	return out
}

// rdSpec describes a v2 batch; payload is stored as given (compress it first).
type rdSpec struct {
	baseOffset      int64
	leaderEpoch     int32
	magic           int8 // 0 means 2
	attrs           int16
	lastOffsetDelta int32
	baseTs, maxTs   int64
	producerID      int64
	producerEpoch   int16
	baseSeq         int32
	count           int32
	payload         []byte
}

// rdBatch encodes a v2 batch with a correct CRC-32C.
func rdBatch(s rdSpec) []byte {
	magic := s.magic
	if magic == 0 {
		magic = 2
	}
	b := make([]byte, 0, V2HeaderSize+len(s.payload))
	b = binary.BigEndian.AppendUint64(b, uint64(s.baseOffset))
	b = binary.BigEndian.AppendUint32(b, uint32(V2HeaderSize-LogOverhead+len(s.payload)))
	b = binary.BigEndian.AppendUint32(b, uint32(s.leaderEpoch))
	b = append(b, byte(magic))
	b = binary.BigEndian.AppendUint32(b, 0) // crc, below
	b = binary.BigEndian.AppendUint16(b, uint16(s.attrs))
	b = binary.BigEndian.AppendUint32(b, uint32(s.lastOffsetDelta))
	b = binary.BigEndian.AppendUint64(b, uint64(s.baseTs))
	b = binary.BigEndian.AppendUint64(b, uint64(s.maxTs))
	b = binary.BigEndian.AppendUint64(b, uint64(s.producerID))
	b = binary.BigEndian.AppendUint16(b, uint16(s.producerEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(s.baseSeq))
	b = binary.BigEndian.AppendUint32(b, uint32(s.count))
	b = append(b, s.payload...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// rdParse parses an entry's header with the package's ParseBatch.
func rdParse(t testing.TB, entry []byte) Batch {
	t.Helper()
	b, err := ParseBatch(entry[:min(len(entry), HeaderReadSize)], 0, "test.log")
	if err != nil {
		t.Fatalf("ParseBatch: %v", err)
	}
	if b.Size != int64(len(entry)) {
		t.Fatalf("ParseBatch size %d, entry has %d bytes", b.Size, len(entry))
	}
	return b
}

// rdGot is a decoded record, copied out of the decoder's buffers.
type rdGot struct {
	Offset, Timestamp int64
	Key, Value        []byte
	Headers           []Header
	Sequence          int32
	Attributes, Magic int8
	CRC               uint32
	CRCValid          bool
}

func rdCopy(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// rdDecode decodes every record of entry with d, copying them out.
func rdDecode(d *RecordDecoder, entry []byte, b Batch) ([]rdGot, error) {
	var got []rdGot
	err := d.Records("test.log", entry, &b, func(r *Record) error {
		g := rdGot{Offset: r.Offset, Timestamp: r.Timestamp, Key: rdCopy(r.Key), Value: rdCopy(r.Value),
			Sequence: r.Sequence, Attributes: r.Attributes, Magic: r.Magic, CRC: r.CRC, CRCValid: r.CRCValid}
		_ = r.EachHeader(func(h Header) error {
			g.Headers = append(g.Headers, Header{Key: rdCopy(h.Key), Value: rdCopy(h.Value)})
			return nil
		})
		got = append(got, g)
		return nil
	})
	return got, err
}

// rdWantCorrupt checks that err is a *CorruptError of the given kind whose message
// contains substr.
func rdWantCorrupt(t *testing.T, err error, kind error, substr string) {
	t.Helper()
	var ce *fileio.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *CorruptError", err, err)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %q is not of kind %q", err, kind)
	}
	if ce.File != "test.log" {
		t.Fatalf("error names file %q", ce.File)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not mention %q", err, substr)
	}
}

func rdBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(8)) // compressible
	}
	return b
}

// ---- v2 decoding ----

func TestRecordsV2Fields(t *testing.T) {
	recs := []rdRec{
		{tsDelta: 0, offDelta: 0, key: []byte("k0"), value: []byte("v0")},
		{tsDelta: 7, offDelta: 1, key: nil, value: []byte{}, headers: []Header{{Key: []byte("h"), Value: nil}, {Key: []byte{}, Value: []byte("x")}}},
		{attrs: 5, tsDelta: -3, offDelta: 4, key: []byte{}, value: nil}, // compaction hole: delta 4
	}
	entry := rdBatch(rdSpec{baseOffset: 1000, lastOffsetDelta: 6, baseTs: 1_700_000_000_000, maxTs: 1_700_000_000_007,
		producerID: 9, producerEpoch: 1, baseSeq: 50, count: 3, payload: rdRecords(recs...)})
	b := rdParse(t, entry)
	var d RecordDecoder
	got, err := rdDecode(&d, entry, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []rdGot{
		{Offset: 1000, Timestamp: 1_700_000_000_000, Key: []byte("k0"), Value: []byte("v0"), Sequence: 50, Magic: 2},
		{Offset: 1001, Timestamp: 1_700_000_000_007, Key: nil, Value: []byte{}, Sequence: 51, Magic: 2,
			Headers: []Header{{Key: []byte("h"), Value: nil}, {Key: []byte{}, Value: []byte("x")}}},
		{Offset: 1004, Timestamp: 1_699_999_999_997, Key: []byte{}, Value: nil, Sequence: 54, Attributes: 5, Magic: 2},
	}
	rdCompare(t, got, want)

	// LogAppendTime: every record reports the batch max timestamp.
	entry = rdBatch(rdSpec{baseOffset: 1000, attrs: AttrLogAppendTime, lastOffsetDelta: 6, baseTs: 5, maxTs: 99, baseSeq: -1, count: 3, payload: rdRecords(recs...)})
	got, err = rdDecode(&d, entry, rdParse(t, entry))
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g.Timestamp != 99 || g.Sequence != -1 {
			t.Errorf("record %d: timestamp %d sequence %d, want 99 and -1", i, g.Timestamp, g.Sequence)
		}
	}
}

// rdCompare compares decoded records field by field, telling nil from empty.
func rdCompare(t *testing.T, got, want []rdGot) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	nilEq := func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
	for i := range got {
		g, w := got[i], want[i]
		ok := g.Offset == w.Offset && g.Timestamp == w.Timestamp && nilEq(g.Key, w.Key) && nilEq(g.Value, w.Value) &&
			g.Sequence == w.Sequence && g.Attributes == w.Attributes && g.Magic == w.Magic && g.CRC == w.CRC &&
			g.CRCValid == w.CRCValid && len(g.Headers) == len(w.Headers)
		for j := 0; ok && j < len(g.Headers); j++ {
			ok = nilEq(g.Headers[j].Key, w.Headers[j].Key) && nilEq(g.Headers[j].Value, w.Headers[j].Value)
		}
		if !ok {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestIncrementSequence(t *testing.T) {
	for _, c := range []struct{ seq, inc, want int32 }{
		{0, 0, 0},
		{5, 3, 8},
		{math.MaxInt32, 0, math.MaxInt32},
		{math.MaxInt32, 1, 0},
		{math.MaxInt32 - 1, 3, 1},
		{math.MaxInt32 - 10, 10, math.MaxInt32},
		{math.MaxInt32 - 10, 11, 0},
	} {
		if got := incrementSequence(c.seq, c.inc); got != c.want {
			t.Errorf("incrementSequence(%d, %d) = %d, want %d", c.seq, c.inc, got, c.want)
		}
	}
	// Through the decoder: base sequence near the top wraps to 0.
	entry := rdBatch(rdSpec{lastOffsetDelta: 2, baseSeq: math.MaxInt32 - 1, count: 3,
		payload: rdRecords(rdRec{offDelta: 0}, rdRec{offDelta: 1}, rdRec{offDelta: 2})})
	var d RecordDecoder
	got, err := rdDecode(&d, entry, rdParse(t, entry))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int32{math.MaxInt32 - 1, math.MaxInt32, 0} {
		if got[i].Sequence != want {
			t.Errorf("record %d sequence %d, want %d", i, got[i].Sequence, want)
		}
	}
}

// TestRecordsV2AgainstKmsg encodes random batches with franz-go's kmsg (an independent
// encoder and decoder) and checks that both decoders agree.
func TestRecordsV2AgainstKmsg(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randBytes := func() []byte {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	var d RecordDecoder
	for iter := 0; iter < 300; iter++ {
		n := r.IntN(20)
		var payload []byte
		krecs := make([]kmsg.Record, n)
		for i := range krecs {
			kr := kmsg.Record{Attributes: int8(r.IntN(3)), TimestampDelta64: r.Int64N(1<<40) - 1<<39, OffsetDelta: int32(i * (1 + r.IntN(3))), Key: randBytes(), Value: randBytes()}
			for h := r.IntN(4); h > 0; h-- {
				kr.Headers = append(kr.Headers, kmsg.Header{Key: string(randBytes()), Value: randBytes()})
			}
			body := kr.AppendTo(nil)[1:] // encoded with Length 0 (one byte): the body follows it
			kr.Length = int32(len(body))
			payload = kr.AppendTo(payload)
			krecs[i] = kr
		}
		kb := kmsg.RecordBatch{FirstOffset: r.Int64N(1 << 50), PartitionLeaderEpoch: 3, Magic: 2, Attributes: int16(r.IntN(2)) * AttrLogAppendTime,
			LastOffsetDelta: int32(3 * n), FirstTimestamp: r.Int64N(1 << 41), MaxTimestamp: r.Int64N(1 << 41), ProducerID: -1, ProducerEpoch: -1,
			FirstSequence: int32(r.IntN(3)) - 1, NumRecords: int32(n), Records: payload}
		kb.Length = int32(V2HeaderSize - LogOverhead + len(payload))
		entry := kb.AppendTo(nil)
		binary.BigEndian.PutUint32(entry[17:], ComputeCRC(2, entry))

		b := rdParse(t, entry)
		got, err := rdDecode(&d, entry, b)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		// kmsg's own decoding of the same bytes.
		var back kmsg.RecordBatch
		if err := back.ReadFrom(entry); err != nil {
			t.Fatal(err)
		}
		rest := back.Records
		if len(got) != int(back.NumRecords) {
			t.Fatalf("iteration %d: %d records, kmsg says %d", iter, len(got), back.NumRecords)
		}
		for i := range got {
			l, m := binary.Varint(rest)
			var kr kmsg.Record
			if err := kr.ReadFrom(rest[:m+int(l)]); err != nil {
				t.Fatal(err)
			}
			rest = rest[m+int(l):]
			ts := back.FirstTimestamp + kr.TimestampDelta64
			if back.Attributes&AttrLogAppendTime != 0 {
				ts = back.MaxTimestamp
			}
			g := got[i]
			if g.Offset != back.FirstOffset+int64(kr.OffsetDelta) || g.Timestamp != ts || g.Attributes != kr.Attributes ||
				!bytes.Equal(g.Key, kr.Key) || (g.Key == nil) != (kr.Key == nil) ||
				!bytes.Equal(g.Value, kr.Value) || (g.Value == nil) != (kr.Value == nil) || len(g.Headers) != len(kr.Headers) {
				t.Fatalf("iteration %d record %d: got %+v, kmsg %+v", iter, i, g, kr)
			}
			for j, h := range kr.Headers {
				if string(g.Headers[j].Key) != h.Key || !bytes.Equal(g.Headers[j].Value, h.Value) || (g.Headers[j].Value == nil) != (h.Value == nil) {
					t.Fatalf("iteration %d record %d header %d: got %+v, kmsg %+v", iter, i, j, g.Headers[j], h)
				}
			}
			wantSeq := int32(-1)
			if back.FirstSequence >= 0 {
				wantSeq = back.FirstSequence + kr.OffsetDelta
			}
			if g.Sequence != wantSeq {
				t.Fatalf("iteration %d record %d: sequence %d, want %d", iter, i, g.Sequence, wantSeq)
			}
		}
	}
}

func TestRecordsV2Errors(t *testing.T) {
	good := rdRecordBody(rdRec{key: []byte("k"), value: []byte("v")})
	withLen := func(length int64, body []byte) []byte {
		return append(binary.AppendVarint(nil, length), body...)
	}
	raw := func(b ...byte) []byte { return b }
	cases := []struct {
		name    string
		count   int32
		payload []byte
		substr  string
	}{
		{"negative count", -1, rdRecords(rdRec{}), "invalid record count -1"},
		{"count beyond payload", 2, rdRecords(rdRec{}), "premature EOF"},
		{"huge count", math.MaxInt32, rdRecords(rdRec{}), "premature EOF"},
		{"empty payload", 1, nil, "premature EOF"},
		{"truncated length varint", 1, raw(0x80), "premature EOF"},
		{"records remaining", 1, rdRecords(rdRec{}, rdRec{offDelta: 1}), "records still remaining"},
		{"one stray byte", 1, append(rdRecords(rdRec{}), 0), "records still remaining"},
		{"negative length", 1, withLen(-2, good), "invalid record size"},
		{"length past payload", 1, withLen(int64(len(good)+1), good), "invalid record size"},
		{"length shorter than fields", 1, withLen(int64(len(good)-1), good[:len(good)-1]), "invalid record structure"},
		{"length longer than fields", 1, withLen(int64(len(good)+1), append(append([]byte{}, good...), 0)), "expected to read"},
		{"zero length", 1, raw(0), "empty record"},
		{"5-byte varint overflow in length", 1, raw(0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "longer than 5 bytes"},
		{"offset delta varint overflow", 1, withLen(7, raw(0, 0, 0x80, 0x80, 0x80, 0x80, 0x80)), "offset delta"},
		{"timestamp varlong overflow", 1, withLen(12, raw(0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0)), "timestamp delta"},
		{"key past record", 1, withLen(5, raw(0, 0, 0, 20, 0)), "key"},
		{"value past record", 1, withLen(6, raw(0, 0, 0, 0, 8, 4)), "value"},
		{"negative header count", 1, withLen(6, raw(0, 0, 0, 1, 1, 1)), "invalid number of record headers -1"},
		{"header count past record", 1, withLen(6, raw(0, 0, 0, 1, 1, 8)), "larger than the remaining size"},
		{"huge header count", 1, withLen(10, raw(0, 0, 0, 1, 1, 0xfe, 0xff, 0xff, 0xff, 0x0f)), "larger than the remaining size"},
		{"negative header key size", 1, withLen(8, raw(0, 0, 0, 1, 1, 2, 1, 1)), "invalid negative header key size -1"},
		{"header value past record", 1, withLen(8, raw(0, 0, 0, 1, 1, 2, 0, 6)), "header 0 value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entry := rdBatch(rdSpec{count: c.count, baseSeq: -1, payload: c.payload})
			b := rdParse(t, entry)
			var d RecordDecoder
			calls := 0
			err := d.Records("test.log", entry, &b, func(*Record) error { calls++; return nil })
			rdWantCorrupt(t, err, fileio.ErrCorruptRecords, c.substr)
			if ce := err.(*fileio.CorruptError); ce.Position != b.Position {
				t.Errorf("position %d, want %d", ce.Position, b.Position)
			}
			if c.name == "records remaining" && calls != 0 {
				t.Errorf("the last record was delivered although bytes remained (%d calls)", calls)
			}
		})
	}
}

func TestRecordsV2CountZero(t *testing.T) {
	// Count 0: no records, and the payload is not read (the broker returns an empty
	// iterator), even garbage under an unknown codec.
	for _, attrs := range []int16{0, 1, 7} {
		entry := rdBatch(rdSpec{attrs: attrs, count: 0, payload: []byte{0xde, 0xad}})
		b := rdParse(t, entry)
		var d RecordDecoder
		if err := d.Records("test.log", entry, &b, func(*Record) error { return errors.New("called") }); err != nil {
			t.Errorf("attrs %d: %v", attrs, err)
		}
	}
}

func TestRecordsUnknownCodec(t *testing.T) {
	for _, codec := range []int16{5, 6, 7} {
		entry := rdBatch(rdSpec{attrs: codec, count: 1, payload: rdRecords(rdRec{})})
		b := rdParse(t, entry)
		var d RecordDecoder
		err := d.Records("test.log", entry, &b, func(*Record) error { return nil })
		rdWantCorrupt(t, err, fileio.ErrCorruptRecords, fmt.Sprintf("unknown compression type id %d", codec))
	}
}

func TestRecordsCallbackErrorStops(t *testing.T) {
	stop := errors.New("stop here")
	entry := rdBatch(rdSpec{lastOffsetDelta: 2, count: 3, payload: rdRecords(rdRec{}, rdRec{offDelta: 1}, rdRec{offDelta: 2})})
	b := rdParse(t, entry)
	var d RecordDecoder
	var seen []int64
	err := d.Records("test.log", entry, &b, func(r *Record) error {
		seen = append(seen, r.Offset)
		if r.Offset == 1 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("got %v, want the callback's error unchanged", err)
	}
	if len(seen) != 2 {
		t.Fatalf("callback ran %d times, want 2", len(seen))
	}
}

func TestRecordsShortEntry(t *testing.T) {
	entry := rdBatch(rdSpec{count: 1, payload: rdRecords(rdRec{})})
	b := rdParse(t, entry)
	var d RecordDecoder
	err := d.Records("test.log", entry[:len(entry)-1], &b, func(*Record) error { return nil })
	rdWantCorrupt(t, err, fileio.ErrTorn, "batch size")
}

// TestMarkerRecord decodes the 17-byte end-transaction marker record of section 2.9
// inside a 78-byte control batch.
func TestMarkerRecord(t *testing.T) {
	record := []byte{0x20, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00}
	entry := rdBatch(rdSpec{baseOffset: 41, attrs: AttrControl | AttrTransactional, producerID: 7, producerEpoch: 2, baseSeq: -1, count: 1, payload: record})
	if len(entry) != 78 {
		t.Fatalf("marker batch is %d bytes, want 78", len(entry))
	}
	b := rdParse(t, entry)
	var d RecordDecoder
	got, err := rdDecode(&d, entry, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Offset != 41 {
		t.Fatalf("got %+v", got)
	}
	v, typ, err := ParseControlKey(got[0].Key)
	if err != nil || v != 0 || typ != ControlCommit {
		t.Fatalf("key: version %d type %v err %v", v, typ, err)
	}
	v, epoch, err := ParseEndTxnMarker(got[0].Value)
	if err != nil || v != 0 || epoch != 5 {
		t.Fatalf("value: version %d epoch %d err %v", v, epoch, err)
	}
}

// ---- allocations ----

func TestRecordsAllocations(t *testing.T) {
	payload := rdRecords(
		rdRec{key: []byte("k"), value: rdBytes(500, 1), headers: []Header{{Key: []byte("a"), Value: []byte("b")}}},
		rdRec{offDelta: 1, value: rdBytes(800, 2), headers: []Header{{Key: []byte("a")}, {Key: []byte("c"), Value: []byte("d")}}},
		rdRec{offDelta: 2, value: rdBytes(300, 3)},
	)
	sum := 0
	fn := func(r *Record) error { sum += len(r.Value) + r.HeaderCount; return nil }
	for _, codec := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		entry := rdBatch(rdSpec{attrs: int16(codec), lastOffsetDelta: 2, count: 3, payload: rdCompress(t, codec, payload)})
		b := rdParse(t, entry)
		var d RecordDecoder
		if err := d.Records("test.log", entry, &b, fn); err != nil { // warm-up
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(100, func() {
			if err := d.Records("test.log", entry, &b, fn); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%s batch: %.1f allocations per Records call", codec, allocs)
		if allocs != 0 && !(fuzzcheck.RaceEnabled && codec != CompressionNone) {
			t.Errorf("%s batch: %.1f allocations per Records call after warm-up, want 0", codec, allocs)
		}
	}
	// Legacy: an uncompressed message and a gzip wrapper.
	for _, entry := range [][]byte{
		rdLegacy(1, 0, 5, 77, []byte("k"), []byte("v")),
		rdWrapper(t, 1, CompressionGzip, 0, 12, 99, rdLegacy(1, 0, 0, 5, nil, rdBytes(400, 4)), rdLegacy(1, 0, 1, 6, nil, rdBytes(400, 5))),
	} {
		b := rdParse(t, entry)
		var d RecordDecoder
		if err := d.Records("test.log", entry, &b, fn); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(100, func() {
			if err := d.Records("test.log", entry, &b, fn); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("legacy %s entry: %.1f allocations per Records call", b.Compression(), allocs)
		if allocs != 0 {
			t.Errorf("legacy %s entry: %.1f allocations per Records call after warm-up, want 0", b.Compression(), allocs)
		}
	}
}

// ---- real broker data ----

// rdFixtureRoot is the shared directory of real broker data, beside the module.
func rdFixtureRoot(t *testing.T) string {
	t.Helper()
	return fixtures.Root(t)
}

// rdBatchFile reports whether a file name holds record batches (segments and KRaft
// snapshots).
func rdBatchFile(name string) bool {
	return strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".checkpoint") || strings.HasSuffix(name, ".checkpoint.deleted")
}

// TestRealFixtures decodes every record of every batch of the real broker files.
func TestRealFixtures(t *testing.T) {
	root := rdFixtureRoot(t)
	var d RecordDecoder
	seen := map[string]int{}          // "magic N codec" -> batches
	controls := map[ControlType]int{} // control record types
	hamlet := map[string][]string{}   // partition -> "offset value" lines
	files, records := 0, 0
	err := filepath.WalkDir(root, func(path string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() || !rdBatchFile(de.Name()) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for pos := 0; pos < len(data); {
			if len(data)-pos < HeaderSizeUpToMagic {
				t.Fatalf("%s: %d stray bytes at %d", rel, len(data)-pos, pos)
			}
			b, err := ParseBatch(data[pos:min(len(data), pos+HeaderReadSize)], int64(pos), rel)
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if b.End() > int64(len(data)) {
				t.Fatalf("%s: batch at %d runs past the end", rel, pos)
			}
			entry := data[pos:b.End()]
			if ComputeCRC(b.Magic, entry) != b.CRC {
				t.Fatalf("%s: batch at %d has a bad CRC", rel, pos)
			}
			seen[fmt.Sprintf("magic %d %s", b.Magic, b.Compression())]++
			n := 0
			first, last := int64(-1), int64(-1)
			err = d.Records(rel, entry, &b, func(r *Record) error {
				if n == 0 {
					first = r.Offset
				} else if r.Offset <= last {
					return fmt.Errorf("offset %d after %d", r.Offset, last)
				}
				last = r.Offset
				n++
				if r.Magic != b.Magic {
					return fmt.Errorf("record magic %d in a magic %d batch", r.Magic, b.Magic)
				}
				if b.Magic < 2 && !r.CRCValid {
					return fmt.Errorf("record %d: CRC not valid", r.Offset)
				}
				if b.IsControl() {
					_, typ, err := ParseControlKey(r.Key)
					if err != nil {
						return err
					}
					controls[typ]++
					if typ == ControlAbort || typ == ControlCommit {
						if _, _, err := ParseEndTxnMarker(r.Value); err != nil {
							return err
						}
					}
				}
				if strings.HasPrefix(rel, "kafkalite-magic0-none-gzip-snappy") {
					part := filepath.Base(filepath.Dir(rel))
					hamlet[part] = append(hamlet[part], fmt.Sprintf("%d %q", r.Offset, r.Value))
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%s: batch at %d: %v", rel, pos, err)
			}
			records += n
			if b.Magic >= 2 && int32(n) != b.RecordCount {
				t.Fatalf("%s: batch at %d: %d records, header says %d", rel, pos, n, b.RecordCount)
			}
			if n == 0 && b.Magic < 2 {
				t.Fatalf("%s: legacy entry at %d without records", rel, pos)
			}
			if n > 0 && (last > b.LastOffset || (b.Magic >= 2 && first < b.BaseOffset)) {
				t.Fatalf("%s: batch at %d: records %d..%d outside %d..%d", rel, pos, first, last, b.BaseOffset, b.LastOffset)
			}
			fo, err := d.FirstOffset(rel, entry, &b)
			if err != nil {
				t.Fatalf("%s: batch at %d: FirstOffset: %v", rel, pos, err)
			}
			if (b.Magic >= 2 && fo != b.BaseOffset) || (b.Magic < 2 && fo != first) {
				t.Fatalf("%s: batch at %d: FirstOffset %d, first record %d, base %d", rel, pos, fo, first, b.BaseOffset)
			}
			if b.Magic < 2 && last != b.LastOffset {
				t.Fatalf("%s: legacy entry at %d: last record %d, entry offset %d", rel, pos, last, b.LastOffset)
			}
			pos = int(b.End())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for k, n := range seen {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(kinds)
	t.Logf("%d files, %d records; batches by magic and codec: %s; control records: %v", files, records, strings.Join(kinds, ", "), controls)
	for _, k := range []string{"magic 0 none", "magic 0 gzip", "magic 0 snappy", "magic 2 none", "magic 2 snappy", "magic 2 lz4"} {
		if seen[k] == 0 {
			t.Errorf("no %s batch decoded; the fixtures have them", k)
		}
	}
	if controls[ControlCommit] == 0 || controls[ControlLeaderChange] == 0 || controls[ControlSnapshotHeader] == 0 || controls[ControlSnapshotFooter] == 0 {
		t.Errorf("control record types seen: %v; the fixtures hold commit, leader_change, snapshot_header and snapshot_footer", controls)
	}

	// The three kafkalite partitions hold the same 5382 messages, stored uncompressed,
	// gzip and snappy.
	none := hamlet["hamlet-none-0"]
	if len(none) != 5382 {
		t.Fatalf("hamlet-none-0: %d records, want 5382", len(none))
	}
	for _, p := range []string{"hamlet-gzip-0", "hamlet-snappy-0"} {
		if len(hamlet[p]) != len(none) {
			t.Fatalf("%s: %d records, want %d", p, len(hamlet[p]), len(none))
		}
		for i := range none {
			if hamlet[p][i] != none[i] {
				t.Fatalf("%s record %d: %s, uncompressed partition has %s", p, i, hamlet[p][i], none[i])
			}
		}
	}
	if !strings.HasPrefix(none[0], "0 ") || !strings.HasPrefix(none[5381], "5381 ") {
		t.Errorf("hamlet offsets run %q .. %q, want 0 .. 5381", none[0][:10], none[5381][:10])
	}
}

// ---- fuzzing ----

// FuzzRecords feeds arbitrary entries to the decoder: it must not panic, and every
// error must be a *CorruptError.
func FuzzRecords(f *testing.F) {
	recs := rdRecords(rdRec{key: []byte("k"), value: []byte("value"), headers: []Header{{Key: []byte("h"), Value: []byte("v")}}}, rdRec{offDelta: 1, value: nil})
	for _, codec := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		f.Add(rdBatch(rdSpec{attrs: int16(codec), lastOffsetDelta: 1, count: 2, payload: rdCompress(f, codec, recs)}))
	}
	f.Add(rdLegacy(0, 0, 3, -1, []byte("k"), []byte("v")))
	f.Add(rdWrapper(f, 1, CompressionSnappy, 0, 9, 5, rdLegacy(1, 0, 0, 3, nil, []byte("a")), rdLegacy(1, 0, 1, 4, nil, []byte("b"))))
	f.Add(rdWrapper(f, 0, CompressionLZ4, 0, 1, -1, rdLegacy(0, 0, 0, -1, nil, []byte("a")), rdLegacy(0, 0, 1, -1, nil, []byte("b"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < HeaderSizeUpToMagic {
			return
		}
		b, err := ParseBatch(data[:min(len(data), HeaderReadSize)], 0, "fuzz.log")
		if err != nil || b.Size > int64(len(data)) {
			return
		}
		entry := data[:b.Size]
		d := RecordDecoder{MaxDecompressedBytes: 1 << 20}
		n := 0
		err = d.Records("fuzz.log", entry, &b, func(r *Record) error {
			n++
			// Each header takes at least 2 bytes of the payload, which
			// inflates to at most the cap (headers are not kept: a count
			// beyond the entry's own bytes costs nothing).
			if b.Magic >= 2 && int64(r.HeaderCount) > max(int64(len(entry)), d.MaxDecompressedBytes)/2 {
				t.Fatalf("%d headers in a %d-byte entry under a %d-byte cap", r.HeaderCount, len(entry), d.MaxDecompressedBytes)
			}
			return nil
		})
		var ce *fileio.CorruptError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("error %v (%T) is not a *CorruptError", err, err)
		}
		if err == nil && b.Magic >= 2 && int32(n) != b.RecordCount {
			t.Fatalf("%d records delivered, header says %d", n, b.RecordCount)
		}
		if _, err := d.FirstOffset("fuzz.log", entry, &b); err != nil && !errors.As(err, &ce) {
			t.Fatalf("FirstOffset error %v (%T) is not a *CorruptError", err, err)
		}
		rdSameAsRecordsAt(t, entry, b)
	})
}

// rdSameAsRecordsAt holds RecordsAt (the batch read piece by piece, into a
// buffer full of stale bytes) to Records on the whole entry: the same
// records and the same error, whether decoding runs to the end or stops at
// any record.
func rdSameAsRecordsAt(t *testing.T, entry []byte, b Batch) {
	t.Helper()
	type rec struct {
		off, ts    int64
		key, value string
		headers    int
	}
	errStop := errors.New("stop")
	decode := func(at bool, stopAt int) ([]rec, string) {
		var got []rec
		fn := func(r *Record) error {
			got = append(got, rec{r.Offset, r.Timestamp, string(r.Key), string(r.Value), r.HeaderCount})
			if len(got) == stopAt {
				return errStop
			}
			return nil
		}
		d := RecordDecoder{MaxDecompressedBytes: 1 << 20}
		var err error
		if at {
			stale := bytes.Repeat([]byte{0xa5}, len(entry)+7)
			_, err = d.RecordsAt("x.log", bytes.NewReader(entry), &b, stale[:3], fn)
		} else {
			err = d.Records("x.log", entry, &b, fn)
		}
		if err == nil {
			return got, ""
		}
		return got, err.Error()
	}
	want, werr := decode(false, -1)
	for stopAt := -1; stopAt <= len(want); stopAt++ {
		if stopAt == 0 {
			continue
		}
		w, we := want, werr
		if stopAt > 0 {
			w, we = decode(false, stopAt)
		}
		got, gerr := decode(true, stopAt)
		if gerr != we || !slices.Equal(got, w) {
			t.Fatalf("stop at %d: RecordsAt gave %d records, error %q; Records %d records, error %q", stopAt, len(got), gerr, len(w), we)
		}
	}
}

// TestRecordsAtMatchesRecords: batches of large records (so that RecordsAt
// reads them in several pieces), intact and with a byte changed anywhere in
// the records, in every codec.
func TestRecordsAtMatchesRecords(t *testing.T) {
	var recs []rdRec
	for i := range 12 {
		recs = append(recs, rdRec{tsDelta: int64(i * 7), offDelta: int32(i), key: rdBytes(i*50, uint64(i)), value: rdBytes(300+i*400, uint64(100+i)),
			headers: []Header{{Key: []byte("h"), Value: rdBytes(i*30, uint64(200+i))}}})
	}
	payload := rdRecords(recs...)
	for _, codec := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		entry := rdBatch(rdSpec{attrs: int16(codec), lastOffsetDelta: 11, count: 12, baseTs: 1000, maxTs: 1077, payload: rdCompress(t, codec, payload)})
		rdSameAsRecordsAt(t, entry, rdParse(t, entry))
		if codec != CompressionNone {
			continue
		}
		for pos := V2HeaderSize; pos < len(entry); pos += 37 {
			bad := append([]byte{}, entry...)
			bad[pos] ^= 0x5c
			rdSameAsRecordsAt(t, bad, rdParse(t, bad))
		}
		// Record counts that disagree with the payload.
		for _, count := range []int32{1, 11, 13, 1000} {
			bad := append([]byte{}, entry...)
			binary.BigEndian.PutUint32(bad[57:], uint32(count))
			rdSameAsRecordsAt(t, bad, rdParse(t, bad))
		}
	}
}

// BenchmarkRecords decodes a 100-record batch per codec.
func BenchmarkRecords(b *testing.B) {
	var recs []rdRec
	for i := 0; i < 100; i++ {
		recs = append(recs, rdRec{offDelta: int32(i), tsDelta: int64(i), key: []byte(fmt.Sprint("key-", i)), value: rdBytes(200, uint64(i)),
			headers: []Header{{Key: []byte("trace"), Value: []byte("abc")}}})
	}
	payload := rdRecords(recs...)
	for _, codec := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		b.Run(codec.String(), func(b *testing.B) {
			entry := rdBatch(rdSpec{attrs: int16(codec), lastOffsetDelta: 99, count: 100, payload: rdCompress(b, codec, payload)})
			batch := rdParse(b, entry)
			var d RecordDecoder
			n := 0
			fn := func(*Record) error { n++; return nil }
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Records("bench.log", entry, &batch, fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
