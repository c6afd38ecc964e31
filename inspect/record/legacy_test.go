package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rdLegacy encodes a v0/v1 log entry (offset, size, message) with a correct CRC-32.
// ts is written for magic != 0 only.
func rdLegacy(magic, attrs int8, offset, ts int64, key, value []byte) []byte {
	var msg []byte
	msg = binary.BigEndian.AppendUint32(msg, 0)
	msg = append(msg, byte(magic), byte(attrs))
	if magic != 0 {
		msg = binary.BigEndian.AppendUint64(msg, uint64(ts))
	}
	for _, f := range [][]byte{key, value} {
		if f == nil {
			msg = binary.BigEndian.AppendUint32(msg, 0xffffffff)
		} else {
			msg = binary.BigEndian.AppendUint32(msg, uint32(len(f)))
			msg = append(msg, f...)
		}
	}
	binary.BigEndian.PutUint32(msg, crc32.ChecksumIEEE(msg[4:]))
	entry := binary.BigEndian.AppendUint64(nil, uint64(offset))
	entry = binary.BigEndian.AppendUint32(entry, uint32(len(msg)))
	return append(entry, msg...)
}

// rdWrapper compresses inner entries into a wrapper message (key null).
func rdWrapper(t testing.TB, magic int8, codec Compression, extraAttrs int8, wrapperOffset, ts int64, inner ...[]byte) []byte {
	t.Helper()
	return rdLegacy(magic, int8(codec)|extraAttrs, wrapperOffset, ts, nil, rdCompress(t, codec, rdCat(inner...)))
}

func rdLegacyDecode(t *testing.T, entry []byte) ([]rdGot, error) {
	t.Helper()
	b := rdParse(t, entry)
	var d RecordDecoder
	return rdDecode(&d, entry, b)
}

func TestLegacyUncompressed(t *testing.T) {
	// v0: no timestamp.
	got, err := rdLegacyDecode(t, rdLegacy(0, 0, 42, 0, []byte("key"), []byte("value")))
	if err != nil {
		t.Fatal(err)
	}
	e := rdLegacy(0, 0, 42, 0, []byte("key"), []byte("value"))
	rdCompare(t, got, []rdGot{{Offset: 42, Timestamp: -1, Key: []byte("key"), Value: []byte("value"), Sequence: -1,
		CRC: binary.BigEndian.Uint32(e[12:]), CRCValid: true}})

	// v1: its own timestamp, also when the attributes say LogAppendTime (the broker
	// rewrote the field in place); null key, empty value.
	e = rdLegacy(1, AttrLogAppendTime, 7, 1_600_000_000_000, nil, []byte{})
	got, err = rdLegacyDecode(t, e)
	if err != nil {
		t.Fatal(err)
	}
	rdCompare(t, got, []rdGot{{Offset: 7, Timestamp: 1_600_000_000_000, Key: nil, Value: []byte{}, Sequence: -1,
		Attributes: AttrLogAppendTime, Magic: 1, CRC: binary.BigEndian.Uint32(e[12:]), CRCValid: true}})

	// A damaged message is reported through CRCValid, not as an error.
	e[20] ^= 0x40 // inside the timestamp
	got, err = rdLegacyDecode(t, e)
	if err != nil || len(got) != 1 || got[0].CRCValid {
		t.Fatalf("damaged message: err %v, got %+v", err, got)
	}

	// Bytes after the value are allowed (the broker never reads them).
	e = rdLegacy(0, 0, 1, 0, nil, []byte("v"))
	e = append(e, 0xEE, 0xEE)
	binary.BigEndian.PutUint32(e[8:], uint32(len(e)-LogOverhead))
	got, err = rdLegacyDecode(t, e)
	if err != nil || len(got) != 1 || string(got[0].Value) != "v" || got[0].CRCValid {
		t.Fatalf("message with trailing bytes: err %v, got %+v", err, got)
	}
}

// TestLegacyAgainstKmsg decodes messages encoded by franz-go's kmsg.
func TestLegacyAgainstKmsg(t *testing.T) {
	for i, c := range []struct {
		key, value []byte
		attrs      int8
		ts         int64
	}{
		{nil, nil, 0, 0},
		{[]byte("k"), []byte("some value"), 0, 123},
		{[]byte{}, bytes.Repeat([]byte("x"), 1000), AttrLogAppendTime, -1},
	} {
		v0 := kmsg.MessageV0{Offset: int64(i), Magic: 0, Attributes: c.attrs, Key: c.key, Value: c.value}
		v0.MessageSize = int32(len(v0.AppendTo(nil)) - LogOverhead)
		e0 := v0.AppendTo(nil)
		binary.BigEndian.PutUint32(e0[12:], crc32.ChecksumIEEE(e0[16:]))
		v1 := kmsg.MessageV1{Offset: int64(i), Magic: 1, Attributes: c.attrs, Timestamp: c.ts, Key: c.key, Value: c.value}
		v1.MessageSize = int32(len(v1.AppendTo(nil)) - LogOverhead)
		e1 := v1.AppendTo(nil)
		binary.BigEndian.PutUint32(e1[12:], crc32.ChecksumIEEE(e1[16:]))
		if !bytes.Equal(e0, rdLegacy(0, c.attrs, int64(i), 0, c.key, c.value)) || !bytes.Equal(e1, rdLegacy(1, c.attrs, int64(i), c.ts, c.key, c.value)) {
			t.Fatalf("case %d: kmsg and the test encoder disagree", i)
		}
		for magic, e := range [][]byte{e0, e1} {
			got, err := rdLegacyDecode(t, e)
			if err != nil {
				t.Fatal(err)
			}
			wantTs := int64(-1)
			if magic == 1 {
				wantTs = c.ts
			}
			rdCompare(t, got, []rdGot{{Offset: int64(i), Timestamp: wantTs, Key: c.key, Value: c.value, Sequence: -1,
				Attributes: c.attrs, Magic: int8(magic), CRC: binary.BigEndian.Uint32(e[12:]), CRCValid: true}})
		}
	}
}

func TestLegacyWrapperV0(t *testing.T) {
	// v0: inner offsets are absolute; the wrapper offset is the last one.
	inner := [][]byte{
		rdLegacy(0, 0, 253, 0, nil, []byte("first")),
		rdLegacy(0, 0, 254, 0, []byte("k"), []byte("second")),
		rdLegacy(0, 0, 255, 0, nil, nil),
	}
	for _, codec := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4} {
		e := rdWrapper(t, 0, codec, 0, 255, 0, inner...)
		got, err := rdLegacyDecode(t, e)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		var want []rdGot
		for i, in := range inner {
			var m legacyMessage
			if err := parseLegacyMessage(in[LogOverhead:], &m); err != nil {
				t.Fatal(err)
			}
			want = append(want, rdGot{Offset: int64(253 + i), Timestamp: -1, Key: m.key, Value: m.value, Sequence: -1, CRC: m.crc, CRCValid: true})
		}
		rdCompare(t, got, want)
		b := rdParse(t, e)
		var d RecordDecoder
		if fo, err := d.FirstOffset("test.log", e, &b); err != nil || fo != 253 {
			t.Errorf("%s: FirstOffset %d, %v; want 253", codec, fo, err)
		}
	}
}

func TestLegacyWrapperV1(t *testing.T) {
	inner := [][]byte{
		rdLegacy(1, 0, 0, 1000, nil, []byte("a")),
		rdLegacy(1, 0, 1, 1001, nil, []byte("b")),
		rdLegacy(0, 0, 2, 0, nil, []byte("c")), // a v0 message inside a v1 wrapper has no timestamp
	}
	offsets := func(got []rdGot) []int64 {
		var o []int64
		for _, g := range got {
			o = append(o, g.Offset)
		}
		return o
	}
	timestamps := func(got []rdGot) []int64 {
		var o []int64
		for _, g := range got {
			o = append(o, g.Timestamp)
		}
		return o
	}
	// Relative inner offsets 0..2, wrapper offset 102: absolute 100..102.
	got, err := rdLegacyDecode(t, rdWrapper(t, 1, CompressionGzip, 0, 102, 5000, inner...))
	if err != nil {
		t.Fatal(err)
	}
	if o := offsets(got); !equalInt64s(o, []int64{100, 101, 102}) {
		t.Errorf("offsets %v, want 100..102", o)
	}
	if ts := timestamps(got); !equalInt64s(ts, []int64{1000, 1001, -1}) {
		t.Errorf("CreateTime wrapper: timestamps %v, want the messages' own", ts)
	}
	// LogAppendTime wrapper: v1 inner messages report the wrapper's timestamp.
	got, err = rdLegacyDecode(t, rdWrapper(t, 1, CompressionSnappy, AttrLogAppendTime, 102, 5000, inner...))
	if err != nil {
		t.Fatal(err)
	}
	if ts := timestamps(got); !equalInt64s(ts, []int64{5000, 5000, -1}) {
		t.Errorf("LogAppendTime wrapper: timestamps %v, want the wrapper's", ts)
	}
	// A v0 wrapper never overrides timestamps.
	got, err = rdLegacyDecode(t, rdWrapper(t, 0, CompressionGzip, AttrLogAppendTime, 2, 0, inner...))
	if err != nil {
		t.Fatal(err)
	}
	if ts := timestamps(got); !equalInt64s(ts, []int64{1000, 1001, -1}) {
		t.Errorf("v0 wrapper: timestamps %v", ts)
	}
	if o := offsets(got); !equalInt64s(o, []int64{0, 1, 2}) {
		t.Errorf("v0 wrapper: offsets %v, want the absolute inner ones", o)
	}
	// Wrapper offset 0 (old librdkafka): inner offsets are taken as absolute.
	abs := [][]byte{rdLegacy(1, 0, 7, 1, nil, []byte("x")), rdLegacy(1, 0, 8, 2, nil, []byte("y"))}
	e := rdWrapper(t, 1, CompressionLZ4, 0, 0, 2, abs...)
	got, err = rdLegacyDecode(t, e)
	if err != nil {
		t.Fatal(err)
	}
	if o := offsets(got); !equalInt64s(o, []int64{7, 8}) {
		t.Errorf("wrapper offset 0: offsets %v, want 7, 8", o)
	}
	b := rdParse(t, e)
	var d RecordDecoder
	if fo, err := d.FirstOffset("test.log", e, &b); err != nil || fo != 7 {
		t.Errorf("wrapper offset 0: FirstOffset %d, %v", fo, err)
	}
	e = rdWrapper(t, 1, CompressionGzip, 0, 102, 5000, inner...)
	b = rdParse(t, e)
	if fo, err := d.FirstOffset("test.log", e, &b); err != nil || fo != 100 {
		t.Errorf("FirstOffset %d, %v; want 100", fo, err)
	}
	// A wrapper offset below the last inner offset (and not 0) is invalid.
	_, err = rdLegacyDecode(t, rdWrapper(t, 1, CompressionGzip, 0, 1, 0, inner...))
	rdWantCorrupt(t, err, fileio.ErrCorruptRecords, "invalid wrapper offset")
}

func equalInt64s(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLegacyInnerSet(t *testing.T) {
	one := rdLegacy(0, 0, 10, 0, nil, []byte("one"))
	two := rdLegacy(0, 0, 11, 0, nil, []byte("two"))
	decode := func(magic int8, set []byte) ([]rdGot, error) {
		return rdLegacyDecode(t, rdLegacy(magic, int8(CompressionGzip), 11, 0, nil, rdGzip(t, set)))
	}
	// A truncated last inner entry silently ends the set.
	for _, cut := range []int{1, 11, 12, 20, len(two) - 1} {
		got, err := decode(0, rdCat(one, two[:cut]))
		if err != nil || len(got) != 1 || got[0].Offset != 10 {
			t.Errorf("inner set cut at %d bytes of the second entry: %v, %d records", cut, err, len(got))
		}
	}
	// An inner size below 14 is an error before any record is delivered.
	small := append([]byte{}, two...)
	binary.BigEndian.PutUint32(small[8:], 13)
	calls := 0
	e := rdLegacy(0, int8(CompressionGzip), 11, 0, nil, rdGzip(t, rdCat(one, small)))
	b := rdParse(t, e)
	var d RecordDecoder
	err := d.Records("test.log", e, &b, func(*Record) error { calls++; return nil })
	rdWantCorrupt(t, err, fileio.ErrCorruptRecords, "less than the minimum record overhead")
	if calls != 0 {
		t.Errorf("%d records delivered before the bad inner size", calls)
	}
	// An empty inner set, or only a partial entry, is an error.
	for _, set := range [][]byte{nil, one[:20]} {
		_, err := decode(0, set)
		rdWantCorrupt(t, err, fileio.ErrCorruptRecords, "no inner records")
	}
	// A bad inner CRC is reported, not an error.
	bad := append([]byte{}, two...)
	bad[len(bad)-1] ^= 1
	got, err := decode(0, rdCat(one, bad))
	if err != nil || len(got) != 2 || !got[0].CRCValid || got[1].CRCValid {
		t.Errorf("inner CRC: %v %+v", err, got)
	}
	// An inner key length past the message is an error.
	overrun := append([]byte{}, two...)
	binary.BigEndian.PutUint32(overrun[LogOverhead+6:], 100)
	_, err = decode(0, rdCat(one, overrun))
	rdWantCorrupt(t, err, fileio.ErrCorruptRecords, "key length 100 overruns")
}

func TestLegacyWrapperErrors(t *testing.T) {
	inner := rdCat(rdLegacy(0, 0, 0, 0, nil, []byte("a")), rdLegacy(0, 0, 1, 0, nil, []byte("b")))
	// Inner messages must not be compressed: the records before it are delivered.
	nested := rdCat(rdLegacy(0, 0, 0, 0, nil, []byte("a")), rdLegacy(0, int8(CompressionGzip), 1, 0, nil, rdGzip(t, inner)))
	e := rdLegacy(0, int8(CompressionSnappy), 1, 0, nil, rdCompress(t, CompressionSnappy, nested))
	b := rdParse(t, e)
	var d RecordDecoder
	calls := 0
	err := d.Records("test.log", e, &b, func(*Record) error { calls++; return nil })
	rdWantCorrupt(t, err, fileio.ErrCorruptRecords, "inner messages must not be compressed")
	if calls != 1 {
		t.Errorf("%d records delivered before the compressed inner message, want 1", calls)
	}
	// ...and FirstOffset fails when the first inner message is compressed.
	e = rdLegacy(0, int8(CompressionSnappy), 1, 0, nil, rdCompress(t, CompressionSnappy, rdLegacy(0, int8(CompressionGzip), 1, 0, nil, rdGzip(t, inner))))
	b = rdParse(t, e)
	_, err = d.FirstOffset("test.log", e, &b)
	rdWantCorrupt(t, err, fileio.ErrCorruptRecords, "inner messages must not be compressed")
	// Unknown inner codec.
	e = rdLegacy(0, int8(CompressionGzip), 0, 0, nil, rdGzip(t, rdLegacy(0, 6, 0, 0, nil, []byte("x"))))
	_, err = rdLegacyDecode(t, e)
	rdWantCorrupt(t, err, fileio.ErrCorruptRecords, "unknown compression type id 6")

	cases := []struct {
		name   string
		entry  []byte
		substr string
	}{
		{"zstd wrapper v1", rdLegacy(1, int8(CompressionZstd), 1, 0, nil, rdZstd(t, inner)), "zstd"},
		{"zstd wrapper v0", rdLegacy(0, int8(CompressionZstd), 1, 0, nil, rdZstd(t, inner)), "zstd"},
		{"codec 5", rdLegacy(0, 5, 1, 0, nil, []byte("x")), "unknown compression type id 5"},
		{"null value", rdLegacy(1, int8(CompressionGzip), 1, 0, nil, nil), "null value"},
		{"wrapper magic -1", rdLegacy(-1, int8(CompressionGzip), 1, 0, nil, rdGzip(t, inner)), "invalid wrapper magic -1"},
		{"bad gzip", rdLegacy(0, int8(CompressionGzip), 1, 0, nil, []byte("not gzip")), "gzip"},
		{"value past message", func() []byte {
			e := rdLegacy(0, int8(CompressionGzip), 1, 0, nil, rdGzip(t, inner))
			binary.BigEndian.PutUint32(e[LogOverhead+10:], uint32(len(e)))
			return e
		}(), "value length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := rdParse(t, c.entry)
			var d RecordDecoder
			err := d.Records("test.log", c.entry, &b, func(*Record) error { return nil })
			rdWantCorrupt(t, err, fileio.ErrCorruptRecords, c.substr)
			_, err = d.FirstOffset("test.log", c.entry, &b)
			rdWantCorrupt(t, err, fileio.ErrCorruptRecords, c.substr)
		})
	}
}

func TestFirstOffsetSimple(t *testing.T) {
	var d RecordDecoder
	e := rdBatch(rdSpec{baseOffset: 500, lastOffsetDelta: 3, count: 1, payload: rdRecords(rdRec{offDelta: 2})})
	b := rdParse(t, e)
	if fo, err := d.FirstOffset("test.log", e, &b); err != nil || fo != 500 {
		t.Errorf("v2: %d, %v; want the base offset 500", fo, err)
	}
	e = rdLegacy(1, 0, 77, 5, nil, []byte("v"))
	b = rdParse(t, e)
	if fo, err := d.FirstOffset("test.log", e, &b); err != nil || fo != 77 {
		t.Errorf("uncompressed legacy: %d, %v; want 77", fo, err)
	}
	_, err := d.FirstOffset("test.log", e[:len(e)-1], &b)
	if !errors.Is(err, fileio.ErrTorn) {
		t.Errorf("short entry: %v", err)
	}
}
