package kafkagen

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/kseg/kseg/inspect/internal/xxh32"
	"github.com/pierrec/lz4/v4"
)

// Codec ids in the attributes (CompressionType.forId).
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLZ4    = 3
	codecZstd   = 4
)

type codec struct {
	id        int8
	name      string // Kafka's name of the codec
	rawSnappy bool
}

var codecByName = map[string]codec{
	"none":       {codecNone, "none", false},
	"gzip":       {codecGzip, "gzip", false},
	"snappy":     {codecSnappy, "snappy", false},
	"snappy-raw": {codecSnappy, "snappy", true},
	"lz4":        {codecLZ4, "lz4", false},
	"zstd":       {codecZstd, "zstd", false},
}

// compressor turns the records section (v2) or inner message set (v0/v1)
// into the stored payload. It keeps its encoders and buffers between
// batches so a long run does not allocate per batch.
type compressor struct {
	c    codec
	out  []byte
	gz   *gzip.Writer
	gbuf bytes.Buffer
	lz   lz4.Compressor
	lbuf []byte
	zs   *zstd.Encoder
}

func newCompressor(c codec) (*compressor, error) {
	z := &compressor{c: c}
	switch c.id {
	case codecGzip:
		w, err := gzip.NewWriterLevel(&z.gbuf, gzip.DefaultCompression)
		if err != nil {
			return nil, err
		}
		z.gz = w
	case codecZstd:
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			return nil, err
		}
		z.zs = e
	}
	return z, nil
}

// compress returns the stored form of src. The result is valid until the
// next call. magic matters only for LZ4's header checksum.
func (z *compressor) compress(src []byte, magic int8) ([]byte, error) {
	switch z.c.id {
	case codecGzip:
		// An RFC 1952 stream like java.util.zip.GZIPOutputStream's
		// (GzipCompression): header MTIME 0, XFL 0, OS 0, as in magic 0
		// data written by old brokers (JVMs differ in the OS byte;
		// readers ignore it).
		z.gbuf.Reset()
		z.gz.Reset(&z.gbuf)
		z.gz.Header.OS = 0
		if _, err := z.gz.Write(src); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if err := z.gz.Close(); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return z.gbuf.Bytes(), nil
	case codecSnappy:
		if z.c.rawSnappy {
			// One raw snappy block (librdkafka; snappy-java's
			// SnappyInputStream decodes input without the xerial magic
			// as a single block).
			z.out = snappy.Encode(z.out[:cap(z.out)], src)
			return z.out, nil
		}
		// xerial snappy-java stream framing (SnappyOutputStream): the
		// 8-byte magic 82 'SNAPPY' 00, version 1, compatible version 1,
		// then 32 KiB input chunks as i32 BE length + raw snappy block.
		z.out = xerial.Encode(z.out[:0], src)
		return z.out, nil
	case codecLZ4:
		z.out = z.appendLZ4Frame(z.out[:0], src, magic)
		return z.out, nil
	case codecZstd:
		z.out = z.zs.EncodeAll(src, z.out[:0])
		return z.out, nil
	}
	return nil, fmt.Errorf("codec %d has no compressor", z.c.id)
}

// LZ4 frame as Kafka writes it (Lz4BlockOutputStream, formerly
// KafkaLZ4BlockOutputStream): little-endian magic 0x184D2204, FLG 0x60
// (version 01, independent blocks, no block checksum, no content size, no
// content checksum), BD 0x40 (64 KiB blocks), header checksum byte, then
// blocks of at most 64 KiB of input, each an LE u32 size word (bit 31 set:
// stored uncompressed, used when compression does not make it smaller) and
// the bytes, then the end mark 0.
const (
	lz4Magic     = 0x184D2204
	lz4FLG       = 0x60
	lz4BD        = 0x40
	lz4BlockSize = 64 << 10
)

func (z *compressor) appendLZ4Frame(dst, src []byte, magic int8) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, lz4Magic)
	dst = append(dst, lz4FLG, lz4BD)
	dst = append(dst, lz4HeaderChecksum(dst[start:start+6], magic))
	if bound := lz4.CompressBlockBound(lz4BlockSize); len(z.lbuf) < bound {
		z.lbuf = make([]byte, bound)
	}
	for len(src) > 0 {
		block := src[:min(len(src), lz4BlockSize)]
		src = src[len(block):]
		n, err := z.lz.CompressBlock(block, z.lbuf)
		if err != nil || n == 0 || n >= len(block) {
			// Incompressible: stored as is (Lz4BlockOutputStream.writeBlock).
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(block))|1<<31)
			dst = append(dst, block...)
			continue
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		dst = append(dst, z.lbuf[:n]...)
	}
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// lz4HeaderChecksum is the frame descriptor's HC byte,
// (xxhash32(descriptor, seed 0) >> 8) & 0xFF. The correct descriptor is
// FLG and BD (frame bytes [4, 6)). For magic 0 Kafka still writes the
// checksum it wrote before 0.10.0, over frame bytes [0, 6) (magic
// included), and readers skip the check for magic 0 (KAFKA-3160, KIP-57;
// Lz4BlockOutputStream.writeHeader with useBrokenFlagDescriptorChecksum).
func lz4HeaderChecksum(frame6 []byte, magic int8) byte {
	if magic == 0 {
		return byte(xxh32.Sum(frame6[0:6], 0) >> 8)
	}
	return byte(xxh32.Sum(frame6[4:6], 0) >> 8)
}
