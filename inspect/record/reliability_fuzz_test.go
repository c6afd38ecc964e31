package record

import (
	"bytes"
	"math"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/internal/fuzzcheck"
)

// Fuzz targets for the record decoder and the decompressors, with
// invariants beyond "no panic": valid input round-trips, answers agree
// with brute force, errors are *CorruptErrors that say where, and no
// allocation is sized by an unchecked length read from the input. Seed
// corpora are committed under testdata/fuzz/<target>/ (see
// docs/reliability.md for how they are made); `make fuzz` runs each target.

// fzRecord is a decoded record, copied out of the decoder.
type fzRecord = rdGot

// FuzzRecordsRoundTrip decodes data as one entry (any magic, any codec).
// Whenever the records decode, they are encoded again (v2: an
// uncompressed batch with the same header; v0/v1: one plain message per
// record) and must decode to the same records. Decoding allocates at most
// a few times the decompression cap plus the input, whatever the lengths
// and counts inside say; errors are positioned *CorruptErrors.
func FuzzRecordsRoundTrip(f *testing.F) {
	recs := []rdRec{
		{key: []byte("k"), value: []byte("value"), headers: []Header{{Key: []byte("h"), Value: []byte("v")}, {Key: []byte("n")}}},
		{offDelta: 1, tsDelta: -5, attrs: 3},
		{offDelta: 4, tsDelta: 1 << 40, key: []byte{}, value: bytes.Repeat([]byte("x"), 300)},
	}
	for _, codec := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		f.Add(rdBatch(rdSpec{baseOffset: 100, attrs: int16(codec), lastOffsetDelta: 4, baseTs: 1700000000000, maxTs: 1700000000009,
			producerID: 7, baseSeq: math.MaxInt32 - 1, count: 3, payload: rdCompress(f, codec, rdRecords(recs...))}))
	}
	f.Add(rdBatch(rdSpec{attrs: AttrLogAppendTime | AttrTransactional, maxTs: 55, count: 1, payload: rdRecords(recs[0])}))
	f.Add(rdLegacy(1, 0, 3, 1700000000000, []byte("k"), []byte("v")))
	f.Add(rdWrapper(f, 1, CompressionGzip, 0, 5, 1700000000000, rdLegacy(1, 0, 0, 1, nil, []byte("a")), rdLegacy(1, 0, 1, 2, []byte("b"), nil)))
	f.Add(rdWrapper(f, 0, CompressionSnappy, 0, 1, -1, rdLegacy(0, 0, 0, -1, nil, []byte("a")), rdLegacy(0, 0, 1, -1, nil, []byte("b"))))

	const limit = 1 << 20
	d := &RecordDecoder{MaxDecompressedBytes: limit}
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "test.log" // the name rdDecode gives the decoder
		if len(data) < HeaderSizeUpToMagic {
			return
		}
		b, err := ParseBatch(data[:min(len(data), HeaderReadSize)], 0, name)
		if err != nil || b.Size > int64(len(data)) {
			return
		}
		entry := data[:b.Size]
		var got []fzRecord
		alloc := fuzzcheck.Allocated(func() { got, err = rdDecode(d, entry, b) })
		if bound := 6*uint64(limit) + 8*uint64(len(entry)) + fuzzcheck.Slack(); alloc > bound {
			t.Fatalf("decoding a %d-byte entry allocated %d bytes (bound %d)", len(entry), alloc, bound)
		}
		if err != nil {
			fuzzcheck.WantCorrupt(t, "Records", err, name, int64(len(entry)), fileio.ErrCorruptRecords, fileio.ErrCorruptHeader, fileio.ErrTooLarge, fileio.ErrTorn)
			return
		}
		if b.Magic >= 2 {
			var rs []rdRec
			for _, r := range got {
				rs = append(rs, rdRec{attrs: r.Attributes, tsDelta: r.Timestamp - b.BaseTimestamp, offDelta: int32(r.Offset - b.BaseOffset),
					key: r.Key, value: r.Value, headers: r.Headers})
			}
			again := rdBatch(rdSpec{baseOffset: b.BaseOffset, leaderEpoch: b.PartitionLeaderEpoch, magic: b.Magic, attrs: b.Attributes &^ AttrCompressionMask,
				lastOffsetDelta: b.LastOffsetDelta, baseTs: b.BaseTimestamp, maxTs: b.MaxTimestamp, producerID: b.ProducerID,
				producerEpoch: b.ProducerEpoch, baseSeq: b.BaseSequence, count: int32(len(rs)), payload: rdRecords(rs...)})
			b2, err := ParseBatch(again[:HeaderReadSize], 0, name)
			if err != nil {
				t.Fatalf("re-encoded batch: %v", err)
			}
			got2, err := rdDecode(d, again, b2)
			if err != nil {
				t.Fatalf("re-encoded records do not decode: %v", err)
			}
			fzSameRecords(t, got, got2, true)
			return
		}
		for i, r := range got {
			if r.Magic != 0 && r.Magic != 1 {
				continue
			}
			one := rdLegacy(r.Magic, 0, r.Offset, r.Timestamp, r.Key, r.Value)
			b2, err := ParseBatch(one[:min(len(one), HeaderReadSize)], 0, name)
			if err != nil {
				t.Fatalf("record %d re-encoded: %v", i, err)
			}
			got2, err := rdDecode(d, one, b2)
			if err != nil || len(got2) != 1 {
				t.Fatalf("record %d re-encoded: %d records, %v", i, len(got2), err)
			}
			fzSameRecords(t, got[i:i+1], got2, false)
		}
	})
}

func fzSameRecords(t *testing.T, a, b []fzRecord, v2 bool) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d records, %d after the round trip", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		same := x.Offset == y.Offset && x.Timestamp == y.Timestamp && x.Magic == y.Magic &&
			bytes.Equal(x.Key, y.Key) && (x.Key == nil) == (y.Key == nil) &&
			bytes.Equal(x.Value, y.Value) && (x.Value == nil) == (y.Value == nil)
		if v2 {
			same = same && x.Attributes == y.Attributes && x.Sequence == y.Sequence && len(x.Headers) == len(y.Headers)
			for h := 0; same && h < len(x.Headers); h++ {
				same = bytes.Equal(x.Headers[h].Key, y.Headers[h].Key) && bytes.Equal(x.Headers[h].Value, y.Headers[h].Value) &&
					(x.Headers[h].Value == nil) == (y.Headers[h].Value == nil)
			}
		}
		if !same {
			t.Fatalf("record %d changed in the round trip:\n%+v\n%+v", i, x, y)
		}
	}
}

// FuzzDecompress: arbitrary bytes given to each codec (as the payload of a
// batch of any magic) inflate to at most the cap or fail, allocating a
// bounded amount; and the bytes compressed by each codec's writer (Kafka's
// own LZ4 frame, with the header checksum of magic 0 or of magic 1+)
// inflate back to themselves.
func FuzzDecompress(f *testing.F) {
	for c := range uint8(4) {
		f.Add(c, int8(2), []byte("hello, hello, hello, kafka"))
	}
	f.Add(uint8(2), int8(0), []byte("\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x05\x03\x08abc"))
	f.Add(uint8(2), int8(1), []byte{0x80, 0x80, 0x80, 0x80, 0x10})
	f.Add(uint8(0), int8(1), []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})

	const limit = 64 << 10
	var d decompressor
	// Warm the codecs up, so that one-time setup is not counted below.
	for _, c := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		if _, err := d.decompress(c, rdCompress(f, c, []byte("warm up")), 2, limit); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, codec uint8, magic int8, data []byte) {
		c := Compression(1 + codec%4)
		var out []byte
		var err error
		alloc := fuzzcheck.Allocated(func() { out, err = d.decompress(c, data, magic, limit) })
		if err == nil && len(out) > limit {
			t.Fatalf("%s: %d bytes out, the cap is %d", c, len(out), limit)
		}
		if bound := 8*uint64(limit) + 4*uint64(len(data)) + fuzzcheck.Slack(); alloc > bound {
			t.Fatalf("%s: inflating %d bytes allocated %d (bound %d)", c, len(data), alloc, bound)
		}
		if len(data) > limit {
			return
		}
		var packed []byte
		if c == CompressionLZ4 {
			packed = rdKafkaLZ4(t, data, magic == 0)
		} else {
			packed = rdCompress(t, c, data)
		}
		out, err = d.decompress(c, packed, magic, limit)
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("%s (magic %d): %d bytes compressed to %d inflate to %d bytes, %v", c, magic, len(data), len(packed), len(out), err)
		}
	})
}
