package inspect

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/kseg/kseg/inspect/internal/xxh32"
	"github.com/pierrec/lz4/v4"
)

// ---- encoders: the libraries' own writers ----

func rdGzip(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := stdgzip.NewWriter(&buf)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func rdLZ4(t testing.TB, data []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func rdZstd(t testing.TB, data []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// rdCompress compresses with the codec's library writer (snappy: xerial framing, as
// the Java producer writes it).
func rdCompress(t testing.TB, codec Compression, data []byte) []byte {
	t.Helper()
	switch codec {
	case CompressionNone:
		return data
	case CompressionGzip:
		return rdGzip(t, data)
	case CompressionSnappy:
		return xerial.Encode(nil, data)
	case CompressionLZ4:
		return rdLZ4(t, data)
	case CompressionZstd:
		return rdZstd(t, data)
	}
	t.Fatalf("no encoder for %s", codec)
	return nil
}

// rdKafkaLZ4 writes an LZ4 frame the way Kafka's Lz4BlockOutputStream does: FLG 0x60
// (version 1, independent blocks, no checksums), BD 0x40 (64 KiB blocks), the header
// checksum, 64 KiB blocks (stored when compression does not help), the end mark. With
// brokenHC the header checksum covers the magic too, as Kafka before 0.10 (and for
// magic 0 still) computes it.
func rdKafkaLZ4(t testing.TB, data []byte, brokenHC bool) []byte {
	t.Helper()
	out := []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40}
	hashed := out[4:6]
	if brokenHC {
		hashed = out[0:6]
	}
	out = append(out, byte(xxh32.Sum(hashed, 0)>>8))
	var c lz4.Compressor
	buf := make([]byte, lz4.CompressBlockBound(64<<10))
	for len(data) > 0 {
		chunk := data[:min(len(data), 64<<10)]
		data = data[len(chunk):]
		n, err := c.CompressBlock(chunk, buf)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || n >= len(chunk) {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(chunk))|lz4Uncompressed)
			out = append(out, chunk...)
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(n))
			out = append(out, buf[:n]...)
		}
	}
	return binary.LittleEndian.AppendUint32(out, 0)
}

// rdInflate runs the decompressor directly.
func rdInflate(codec Compression, src []byte, magic int8, limit int) ([]byte, error) {
	var d decompressor
	return d.decompress(codec, src, magic, limit)
}

func rdMustInflate(t *testing.T, codec Compression, src []byte, magic int8, want []byte) {
	t.Helper()
	got, err := rdInflate(codec, src, magic, 1<<30)
	if err != nil {
		t.Fatalf("%s: %v", codec, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got %d bytes, want %d (equal prefix %d)", codec, len(got), len(want), rdCommonPrefix(got, want))
	}
}

func rdMustFail(t *testing.T, codec Compression, src []byte, magic int8, substr string) {
	t.Helper()
	_, err := rdInflate(codec, src, magic, 1<<30)
	if err == nil {
		t.Fatalf("%s: decoded, want an error mentioning %q", codec, substr)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("%s: error %q does not mention %q", codec, err, substr)
	}
}

func rdCommonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func rdCat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var rdSizes = []int{0, 1, 100, 65535, 65536, 65537, 300_000}

// ---- round trips ----

func TestCodecRoundTrips(t *testing.T) {
	for _, n := range rdSizes {
		data := rdBytes(n, uint64(n))
		for _, codec := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
			rdMustInflate(t, codec, rdCompress(t, codec, data), 2, data)
		}
		rdMustInflate(t, CompressionSnappy, snappy.Encode(nil, data), 2, data) // raw block (librdkafka)
		for _, magic := range []int8{0, 1, 2} {
			rdMustInflate(t, CompressionLZ4, rdKafkaLZ4(t, data, false), magic, data)
		}
		rdMustInflate(t, CompressionLZ4, rdLZ4(t, data, lz4.BlockChecksumOption(true), lz4.BlockSizeOption(lz4.Block64Kb)), 2, data)
		rdMustInflate(t, CompressionLZ4, rdLZ4(t, data, lz4.SizeOption(uint64(n)), lz4.BlockSizeOption(lz4.Block256Kb), lz4.ChecksumOption(false)), 2, data)
	}
	// Random (incompressible) data: stored LZ4 blocks, literal-only snappy.
	noise := make([]byte, 200_000)
	for i := range noise {
		noise[i] = byte(i*7919 + i>>3*31 ^ i>>11)
	}
	for _, codec := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		rdMustInflate(t, codec, rdCompress(t, codec, noise), 2, noise)
	}
	rdMustInflate(t, CompressionLZ4, rdKafkaLZ4(t, noise, false), 2, noise)
}

// TestDecompressorReuse decodes large then small payloads with one decompressor: no
// data of an earlier payload may leak into a later one.
func TestDecompressorReuse(t *testing.T) {
	var d decompressor
	for _, codec := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		for _, n := range []int{300_000, 10, 70_000, 0, 5} {
			data := rdBytes(n, uint64(n)+uint64(codec))
			got, err := d.decompress(codec, rdCompress(t, codec, data), 2, 1<<30)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s %d bytes: err %v, equal %v", codec, n, err, bytes.Equal(got, data))
			}
		}
	}
}

// TestDecompressLimit: every codec accepts a payload of exactly the limit and fails
// one byte below it, without growing its buffer past limit+1 (snappy and zstd learn
// the size before decoding and allocate nothing).
func TestDecompressLimit(t *testing.T) {
	const n = 150_000
	data := rdBytes(n, 7)
	encodings := map[string]struct {
		codec Compression
		src   []byte
	}{
		"gzip":          {CompressionGzip, rdGzip(t, data)},
		"snappy xerial": {CompressionSnappy, xerial.Encode(nil, data)},
		"snappy raw":    {CompressionSnappy, snappy.Encode(nil, data)},
		"lz4 kafka":     {CompressionLZ4, rdKafkaLZ4(t, data, false)},
		"lz4 4M blocks": {CompressionLZ4, rdLZ4(t, data)},
		"zstd":          {CompressionZstd, rdZstd(t, data)},
	}
	for name, e := range encodings {
		for _, limit := range []int{n, n + 1, 3 * n} {
			var d decompressor
			got, err := d.decompress(e.codec, e.src, 2, limit)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s, limit %d: err %v", name, limit, err)
			}
		}
		for _, limit := range []int{n - 1, n / 2, 1000} {
			var d decompressor
			_, err := d.decompress(e.codec, e.src, 2, limit)
			if !errors.Is(err, errDecompressLimit) {
				t.Errorf("%s, limit %d: err %v, want the limit error", name, limit, err)
			}
			if cap(d.out) > limit+1 {
				t.Errorf("%s, limit %d: buffer grew to %d", name, limit, cap(d.out))
			}
		}
	}
	// A raw snappy block whose preamble claims 4 GiB: refused before any
	// allocation but the error value naming the claim.
	huge := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}
	var d decompressor
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := d.unsnappy(huge, 1<<20); !errors.Is(err, errDecompressLimit) {
			t.Fatalf("err %v, want the limit error", err)
		}
	})
	var claim *limitClaim
	if _, err := d.unsnappy(huge, 1<<20); !errors.As(err, &claim) || claim.claimed != 1<<32-1 {
		t.Errorf("hostile snappy preamble: %v, want the claim of %d bytes", err, uint64(1<<32-1))
	}
	if allocs > 1 || cap(d.out) != 0 {
		t.Errorf("hostile snappy preamble: %.0f allocations, buffer %d bytes", allocs, cap(d.out))
	}
	// A zstd frame that declares its content size is refused before decoding.
	big := rdZstd(t, make([]byte, 1<<20))
	if _, err := rdInflate(CompressionZstd, big, 2, 1<<16); !errors.Is(err, errDecompressLimit) {
		t.Errorf("zstd frame over the limit: %v", err)
	}
}

// TestRecordsTooLarge: through Records the limit is ErrTooLarge naming the batch.
func TestRecordsTooLarge(t *testing.T) {
	payload := rdRecords(rdRec{value: rdBytes(5000, 9)})
	for _, codec := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		entry := rdBatch(rdSpec{attrs: int16(codec), count: 1, payload: rdCompress(t, codec, payload)})
		b := rdParse(t, entry)
		b.Position = 4242
		d := RecordDecoder{MaxDecompressedBytes: int64(len(payload) - 1)}
		err := d.Records("test.log", entry, &b, func(*Record) error { return nil })
		rdWantCorrupt(t, err, ErrTooLarge, codec.String())
		if err.(*CorruptError).Position != 4242 {
			t.Errorf("%s: position %d", codec, err.(*CorruptError).Position)
		}
		d.MaxDecompressedBytes = int64(len(payload))
		if err := d.Records("test.log", entry, &b, func(*Record) error { return nil }); err != nil {
			t.Errorf("%s at exactly the limit: %v", codec, err)
		}
	}
	var d RecordDecoder
	if d.limit() != DefaultMaxDecompressedBytes {
		t.Errorf("default limit %d", d.limit())
	}
}

// TestRecordsCompressedCorrupt: a damaged stream is ErrCorruptRecords for every codec.
func TestRecordsCompressedCorrupt(t *testing.T) {
	payload := rdRecords(rdRec{value: rdBytes(5000, 9)}, rdRec{offDelta: 1, value: rdBytes(3000, 10)})
	for _, codec := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		comp := rdCompress(t, codec, payload)
		for _, damaged := range [][]byte{comp[:len(comp)/2], comp[:len(comp)-1], append([]byte{0x55}, comp...)} {
			entry := rdBatch(rdSpec{attrs: int16(codec), lastOffsetDelta: 1, count: 2, payload: damaged})
			b := rdParse(t, entry)
			var d RecordDecoder
			calls := 0
			err := d.Records("test.log", entry, &b, func(*Record) error { calls++; return nil })
			rdWantCorrupt(t, err, ErrCorruptRecords, codec.String())
			if calls != 0 {
				t.Errorf("%s: %d records delivered from a damaged stream", codec, calls)
			}
		}
	}
}

// ---- gzip ----

func TestGzipMembers(t *testing.T) {
	a, b := rdBytes(70_000, 1), rdBytes(30, 2)
	ga, gb := rdGzip(t, a), rdGzip(t, b)
	rdMustInflate(t, CompressionGzip, rdCat(ga, gb), 1, rdCat(a, b))
	rdMustInflate(t, CompressionGzip, rdCat(ga, rdGzip(t, nil), gb), 1, rdCat(a, b))

	// Bytes after a member that are not a member header end the stream quietly.
	garbage := bytes.Repeat([]byte{0xAB}, 40)
	rdMustInflate(t, CompressionGzip, rdCat(ga, garbage), 1, a)
	rdMustInflate(t, CompressionGzip, rdCat(ga, []byte{0x1f}), 1, a)
	rdMustInflate(t, CompressionGzip, rdCat(ga, []byte{0x1f, 0x8b, 0x07}, garbage), 1, a) // method 7
	// Up to 18 bytes after a trailer are not even parsed: a member header there with
	// truncated deflate data is ignored...
	rdMustInflate(t, CompressionGzip, rdCat(ga, gb[:18]), 1, a)
	// ...while with 19 bytes or more the header is read and the cut deflate data fails.
	rdMustFail(t, CompressionGzip, rdCat(ga, gb[:19]), 1, "unexpected end")

	// Header fields: name, comment, extra; and a header CRC.
	var buf bytes.Buffer
	w := stdgzip.NewWriter(&buf)
	w.Name, w.Comment, w.Extra = "name.txt", "a comment", []byte{1, 2, 3, 4}
	w.Write(b)
	w.Close()
	rdMustInflate(t, CompressionGzip, buf.Bytes(), 1, b)
	withHCRC := func(src []byte, good bool) []byte {
		hl, err := gzipHeaderLen(src)
		if err != nil {
			t.Fatal(err)
		}
		out := append([]byte{}, src[:hl]...)
		out[3] |= gzipFHCRC
		crc := uint16(crc32.ChecksumIEEE(out))
		if !good {
			crc++
		}
		out = binary.LittleEndian.AppendUint16(out, crc)
		return append(out, src[hl:]...)
	}
	rdMustInflate(t, CompressionGzip, withHCRC(buf.Bytes(), true), 1, b)
	rdMustFail(t, CompressionGzip, withHCRC(buf.Bytes(), false), 1, "corrupt GZIP header")
	// Reserved flag bits are ignored, as the JDK does.
	reserved := append([]byte{}, gb...)
	reserved[3] |= 0xE0
	rdMustInflate(t, CompressionGzip, reserved, 1, b)
}

func TestGzipErrors(t *testing.T) {
	a := rdBytes(5000, 3)
	ga := rdGzip(t, a)
	rdMustFail(t, CompressionGzip, nil, 1, "end of gzip header")
	rdMustFail(t, CompressionGzip, ga[:5], 1, "end of gzip header")
	rdMustFail(t, CompressionGzip, append([]byte{0x1f, 0x8c}, ga[2:]...), 1, "not in GZIP format")
	rdMustFail(t, CompressionGzip, append([]byte{0x1f, 0x8b, 9}, ga[3:]...), 1, "unsupported compression method")
	rdMustFail(t, CompressionGzip, ga[:len(ga)-12], 1, "unexpected end")
	rdMustFail(t, CompressionGzip, ga[:len(ga)-3], 1, "trailer")
	badCRC := append([]byte{}, ga...)
	badCRC[len(badCRC)-8] ^= 1
	rdMustFail(t, CompressionGzip, badCRC, 1, "corrupt GZIP trailer")
	badSize := append([]byte{}, ga...)
	badSize[len(badSize)-1] ^= 1
	rdMustFail(t, CompressionGzip, badSize, 1, "corrupt GZIP trailer")
	badDeflate := append([]byte{}, ga...)
	badDeflate[10] = 0xff // block type 3 (reserved)
	rdMustFail(t, CompressionGzip, badDeflate, 1, "")
}

// ---- snappy ----

func TestSnappyFraming(t *testing.T) {
	a, b := rdBytes(100_000, 4), rdBytes(77, 5)
	xa, xb := xerial.Encode(nil, a), xerial.Encode(nil, b)
	// Concatenated xerial streams (a chunk length equal to the magic head).
	rdMustInflate(t, CompressionSnappy, rdCat(xa, xb), 2, rdCat(a, b))
	// Fewer than 4 bytes at a chunk boundary end the stream.
	rdMustInflate(t, CompressionSnappy, rdCat(xa, []byte{0, 0, 1}), 2, a)
	// A header after the magic head that is not the full magic ends the stream.
	notMagic := append([]byte{}, xb...)
	notMagic[5] = 'X'
	rdMustInflate(t, CompressionSnappy, rdCat(xa, notMagic), 2, a)
	// Only the header: no data.
	rdMustInflate(t, CompressionSnappy, xa[:16], 2, nil)
	// Shorter than 16 bytes or without the magic: one raw block.
	rdMustInflate(t, CompressionSnappy, snappy.Encode(nil, []byte("hi")), 2, []byte("hi"))

	rdMustFail(t, CompressionSnappy, nil, 2, "empty")
	rdMustFail(t, CompressionSnappy, rdCat(xa, xb[:10]), 2, "insufficient header size")
	oldVersion := append([]byte{}, xb...)
	binary.BigEndian.PutUint32(oldVersion[8:], 0)
	rdMustFail(t, CompressionSnappy, rdCat(xa, oldVersion), 2, "incompatible codec version 0")
	neg := append(append([]byte{}, xa[:16]...), 0xff, 0xff, 0xff, 0xf0)
	rdMustFail(t, CompressionSnappy, neg, 2, "negative")
	rdMustFail(t, CompressionSnappy, xa[:len(xa)-1], 2, "failed to read snappy chunk")
	zeroChunk := append(append([]byte{}, xa[:16]...), 0, 0, 0, 0)
	rdMustFail(t, CompressionSnappy, zeroChunk, 2, "")
	// A copy with offset 0 (the S2 "repeat" extension) is not Snappy.
	rdMustFail(t, CompressionSnappy, []byte{0x08, 0x0c, 'a', 'b', 'c', 'd', 0x01, 0x00}, 2, "")
	// A raw block whose output is shorter than its preamble says.
	short := snappy.Encode(nil, []byte("hello"))
	short[0] = 6
	rdMustFail(t, CompressionSnappy, short, 2, "")
}

// ---- lz4 ----

// TestLZ4DescriptorChecksumAsPierrec: the descriptor checksum kseg computes
// is the byte pierrec's writer puts there.
func TestLZ4DescriptorChecksumAsPierrec(t *testing.T) {
	// pierrec's writer computes the header checksum over FLG, BD (and the content
	// size): our byte must match its byte for every descriptor it writes.
	for _, opts := range [][]lz4.Option{
		nil,
		{lz4.BlockChecksumOption(true)},
		{lz4.SizeOption(12345), lz4.ChecksumOption(false)},
		{lz4.BlockSizeOption(lz4.Block64Kb)},
	} {
		frame := rdLZ4(t, rdBytes(12345, 8), opts...)
		end := 6
		if frame[4]&lz4FlagSize != 0 {
			end += 8
		}
		if want, got := frame[end], byte(xxh32.Sum(frame[4:end], 0)>>8); got != want {
			t.Errorf("descriptor %x: header checksum %#02x, pierrec wrote %#02x", frame[4:end], got, want)
		}
	}
}

// TestLZ4HeaderChecksum is KAFKA-3160: magic 0 frames carry a checksum over the magic
// bytes too and must be read with the checksum ignored; magic 1 and 2 verify it.
func TestLZ4HeaderChecksum(t *testing.T) {
	data := rdBytes(100_000, 6)
	broken := rdKafkaLZ4(t, data, true)
	if broken[6] == rdKafkaLZ4(t, data, false)[6] {
		t.Fatal("test frame: broken and correct header checksums coincide")
	}
	rdMustInflate(t, CompressionLZ4, broken, 0, data)
	rdMustFail(t, CompressionLZ4, broken, 1, "frame descriptor corrupted")
	rdMustFail(t, CompressionLZ4, broken, 2, "frame descriptor corrupted")

	// The same through whole entries: a magic 0 wrapper and a magic 1 wrapper.
	inner := rdCat(rdLegacy(0, 0, 0, -1, nil, []byte("one")), rdLegacy(0, 0, 1, -1, nil, []byte("two")))
	for _, magic := range []int8{0, 1} {
		entry := rdLegacy(magic, int8(CompressionLZ4), 1, 0, nil, rdKafkaLZ4(t, inner, true))
		b := rdParse(t, entry)
		var d RecordDecoder
		got, err := rdDecode(&d, entry, b)
		if magic == 0 {
			if err != nil || len(got) != 2 || string(got[1].Value) != "two" {
				t.Errorf("magic 0 wrapper with the old header checksum: %v, %d records", err, len(got))
			}
		} else {
			rdWantCorrupt(t, err, ErrCorruptRecords, "frame descriptor corrupted")
		}
	}
	// And a v2 batch.
	entry := rdBatch(rdSpec{attrs: int16(CompressionLZ4), count: 1, payload: rdKafkaLZ4(t, rdRecords(rdRec{value: data[:10]}), true)})
	b := rdParse(t, entry)
	var d RecordDecoder
	_, err := rdDecode(&d, entry, b)
	rdWantCorrupt(t, err, ErrCorruptRecords, "frame descriptor corrupted")
}

func TestLZ4Frame(t *testing.T) {
	data := rdBytes(150_000, 11)
	good := rdKafkaLZ4(t, data, false)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	withDesc := func(flg, bd byte) []byte {
		return mod(func(b []byte) []byte {
			b[4], b[5] = flg, bd
			b[6] = byte(xxh32.Sum(b[4:6], 0) >> 8)
			return b
		})
	}
	// Trailing bytes after the end mark are ignored.
	rdMustInflate(t, CompressionLZ4, rdCat(good, []byte("trailing junk")), 2, data)
	// A flagged content checksum is read but not verified.
	withContentSum := rdCat(withDesc(0x64, 0x40), []byte{1, 2, 3, 4})
	rdMustInflate(t, CompressionLZ4, withContentSum, 2, data)
	rdMustFail(t, CompressionLZ4, withContentSum[:len(withContentSum)-2], 2, "content checksum")
	// Larger block size ids are accepted.
	rdMustInflate(t, CompressionLZ4, withDesc(0x60, 0x70), 2, data)

	rdMustFail(t, CompressionLZ4, good[:5], 2, "prematurely")
	rdMustFail(t, CompressionLZ4, good[:6], 2, "no header checksum")
	rdMustFail(t, CompressionLZ4, mod(func(b []byte) []byte { b[0] = 5; return b }), 2, "invalid magic")
	rdMustFail(t, CompressionLZ4, withDesc(0x61, 0x40), 2, "reserved FLG")
	rdMustFail(t, CompressionLZ4, withDesc(0x40, 0x40), 2, "dependent block")
	rdMustFail(t, CompressionLZ4, withDesc(0xA0, 0x40), 2, "version 2")
	rdMustFail(t, CompressionLZ4, withDesc(0x60, 0x41), 2, "reserved BD")
	rdMustFail(t, CompressionLZ4, withDesc(0x60, 0x30), 2, "block size id")
	rdMustFail(t, CompressionLZ4, withDesc(0x60, 0xC0), 2, "reserved BD bit 7")
	rdMustFail(t, CompressionLZ4, withDesc(0x68, 0x40), 2, "") // content size flagged but missing: the data is misread
	rdMustFail(t, CompressionLZ4, good[:len(good)-4], 2, "prematurely")
	rdMustFail(t, CompressionLZ4, good[:len(good)-100], 2, "prematurely")
	rdMustFail(t, CompressionLZ4, mod(func(b []byte) []byte { b[7+2] = 0x01; return b }), 2, "exceeded max") // first block size word 0x1xxxx > 64 KiB
	rdMustFail(t, CompressionLZ4, mod(func(b []byte) []byte { b[11+5] ^= 0xff; return b }), 2, "lz4 block")

	// Block checksums (over the stored bytes) are verified when flagged.
	summed := rdLZ4(t, data, lz4.BlockChecksumOption(true), lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false))
	rdMustInflate(t, CompressionLZ4, summed, 2, data)
	bad := append([]byte{}, summed...)
	first := int(binary.LittleEndian.Uint32(bad[7:]) &^ lz4Uncompressed)
	bad[7+4+first] ^= 1
	rdMustFail(t, CompressionLZ4, bad, 2, "block checksum mismatch")
}

// TestLZ4AgainstPierrec: on frames pierrec writes, our frame reader and pierrec's
// own reader return the same bytes.
func TestLZ4AgainstPierrec(t *testing.T) {
	for i, n := range []int{0, 3, 4096, 70_000, 1 << 20} {
		data := rdBytes(n, uint64(i)+100)
		for _, opts := range [][]lz4.Option{nil, {lz4.BlockSizeOption(lz4.Block64Kb)}, {lz4.BlockChecksumOption(true), lz4.BlockSizeOption(lz4.Block256Kb)}} {
			frame := rdLZ4(t, data, opts...)
			want, err := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
			if err != nil {
				t.Fatal(err)
			}
			rdMustInflate(t, CompressionLZ4, frame, 2, want)
		}
	}
}

// ---- zstd ----

func TestZstd(t *testing.T) {
	a, b := rdBytes(200_000, 12), rdBytes(10, 13)
	za, zb := rdZstd(t, a), rdZstd(t, b)
	rdMustInflate(t, CompressionZstd, rdCat(za, zb), 2, rdCat(a, b))
	// A skippable frame between data frames.
	skippable := []byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'}
	rdMustInflate(t, CompressionZstd, rdCat(za, skippable, zb), 2, rdCat(a, b))
	// A streaming frame without a content size.
	var buf bytes.Buffer
	enc, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	enc.Write(a)
	enc.Close()
	rdMustInflate(t, CompressionZstd, buf.Bytes(), 2, a)
	if _, err := rdInflate(CompressionZstd, buf.Bytes(), 2, len(a)-1); !errors.Is(err, errDecompressLimit) {
		t.Errorf("streamed frame over the limit: %v", err)
	}

	rdMustFail(t, CompressionZstd, rdCat(za, []byte("garbage!")), 2, "")
	rdMustFail(t, CompressionZstd, za[:len(za)-5], 2, "")
	rdMustFail(t, CompressionZstd, []byte("not zstd at all"), 2, "")
}
