package inspect

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/kseg/kseg/inspect/internal/xxh32"
	"github.com/pierrec/lz4/v4"
)

// Decompression of a batch payload (v2: bytes [61, end) of the batch; v0/v1: the
// wrapper message's value), as the broker's CompressionType.wrapForInput streams read
// it. The whole payload is inflated into the decoder's reusable buffer, never past
// the decoder's limit: every codec checks the size it is about to produce against
// the limit before writing it, or reads at most limit+1 bytes, so a hostile payload
// costs at most limit+1 bytes of memory.

// DefaultMaxDecompressedBytes is the cap used when RecordDecoder.MaxDecompressedBytes
// is zero (or negative).
const DefaultMaxDecompressedBytes = 64 << 20

// errDecompressLimit marks a payload that inflates past the limit; the caller turns it
// into ErrTooLarge.
var errDecompressLimit = errors.New("decompressed size over the limit")

// limitClaim is errDecompressLimit for a payload whose own header declares
// its decompressed size (a raw Snappy block's preamble, a Zstandard frame's
// content size): what it claimed, so the message can say so (a 25-byte
// payload claiming 4 GiB is forged, not large).
type limitClaim struct{ claimed uint64 }

func (e *limitClaim) Error() string { return fmt.Sprintf("declares %d bytes decompressed", e.claimed) }
func (e *limitClaim) Unwrap() error { return errDecompressLimit }

// decompressor holds the reusable state of the codecs. The zero value is ready.
type decompressor struct {
	out     []byte        // decompressed bytes of the last payload
	scratch []byte        // lz4: classifies a block that did not fit under the limit
	br      bytes.Reader  // gzip: the deflate data of the current member
	flate   io.ReadCloser // gzip: raw deflate reader, reset per member
	zstd    *zstd.Decoder // created on first use for zstdLimit
	zstdLim int
}

// decompress inflates src with codec into d.out and returns it (a view valid until
// the next call). magic is the magic of the batch or wrapper message holding the
// payload; it matters for LZ4 only. limit is the most bytes the payload may inflate
// to; more yields errDecompressLimit.
func (d *decompressor) decompress(codec Compression, src []byte, magic int8, limit int) ([]byte, error) {
	var out []byte
	var err error
	switch codec {
	case CompressionGzip:
		out, err = d.gunzip(src, limit)
	case CompressionSnappy:
		out, err = d.unsnappy(src, limit)
	case CompressionLZ4:
		out, err = d.unlz4(src, magic == 0, limit)
	case CompressionZstd:
		out, err = d.unzstd(src, limit)
	default:
		return nil, fmt.Errorf("unknown compression type id %d", codec)
	}
	if cap(out) > cap(d.out) {
		d.out = out[:0]
	}
	if err != nil {
		return nil, err
	}
	if len(out) > limit { // every codec checks already; this is the invariant
		return nil, errDecompressLimit
	}
	return out, nil
}

// growCap returns buf (same length) with capacity for at least need bytes, growing
// geometrically but never past max; callers guarantee need <= max.
func growCap(buf []byte, need, max int) []byte {
	if cap(buf) >= need {
		return buf
	}
	c := 2 * cap(buf)
	if c < 4096 {
		c = 4096
	}
	if c < need {
		c = need
	}
	if c > max {
		c = max
	}
	nb := make([]byte, len(buf), c)
	copy(nb, buf)
	return nb
}

// readCapped appends everything r produces to out, failing with errDecompressLimit
// once out would hold more than limit bytes. It never grows out past limit+1 bytes.
func readCapped(r io.Reader, out []byte, limit int) ([]byte, error) {
	for {
		if len(out) == cap(out) {
			out = growCap(out, len(out)+1, limit+1)
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if len(out) > limit {
			return out, errDecompressLimit
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// ---- gzip (codec 1) ----

// gzip member header flags (RFC 1952 2.3.1; java.util.zip.GZIPInputStream).
const (
	gzipFHCRC    = 2
	gzipFEXTRA   = 4
	gzipFNAME    = 8
	gzipFCOMMENT = 16

	// After a member's trailer, GZIPInputStream.readTrailer only looks for another
	// member when more than 26 bytes counted from the trailer start remain in its
	// buffer (or its source still has bytes): with the whole payload buffered, up to
	// 18 bytes after the trailer are ignored without being parsed.
	gzipIgnoredTail = 26 - 8
)

var errGzipEOF = errors.New("unexpected end of gzip header")

// gzipHeaderLen parses the member header at the start of b and returns its length
// (broker: GZIPInputStream.readHeader). It checks the magic, the method (8 =
// deflate) and, when flagged, the header CRC; reserved flag bits are ignored, as
// the JDK does.
func gzipHeaderLen(b []byte) (int, error) {
	if len(b) < 10 {
		return 0, errGzipEOF
	}
	if b[0] != 0x1f || b[1] != 0x8b {
		return 0, errors.New("not in GZIP format")
	}
	if b[2] != 8 {
		return 0, fmt.Errorf("unsupported compression method %d", b[2])
	}
	flg := b[3]
	n := 10 // magic, method, flags, mtime, xfl, os
	if flg&gzipFEXTRA != 0 {
		if len(b)-n < 2 {
			return 0, errGzipEOF
		}
		m := int(binary.LittleEndian.Uint16(b[n:]))
		n += 2
		if len(b)-n < m {
			return 0, errGzipEOF
		}
		n += m
	}
	for _, f := range [...]byte{gzipFNAME, gzipFCOMMENT} {
		if flg&f != 0 {
			i := bytes.IndexByte(b[n:], 0)
			if i < 0 {
				return 0, errGzipEOF
			}
			n += i + 1
		}
	}
	if flg&gzipFHCRC != 0 {
		if len(b)-n < 2 {
			return 0, errGzipEOF
		}
		if binary.LittleEndian.Uint16(b[n:]) != uint16(crc32.ChecksumIEEE(b[:n])) {
			return 0, errors.New("corrupt GZIP header")
		}
		n += 2
	}
	return n, nil
}

// gunzip inflates a gzip stream as GZIPInputStream reads it (section 4.1):
// concatenated members are read in turn; after a member, remaining bytes that do not
// start a valid member header end the stream quietly, while a bad first header, bad
// deflate data, a truncated member or a wrong trailer (CRC-32 and size mod 2^32) are
// errors.
func (d *decompressor) gunzip(src []byte, limit int) ([]byte, error) {
	out := d.out[:0]
	if cap(out) == 0 {
		out = growCap(out, min(limit+1, 4*len(src)), limit+1)
	}
	pos := 0
	for member := 0; ; member++ {
		hl, err := gzipHeaderLen(src[pos:])
		if err != nil {
			if member == 0 {
				return out, err
			}
			break // GZIPInputStream.readTrailer: a malformed next header ends the stream
		}
		pos += hl
		// The deflate reader is handed a bytes.Reader (an io.ByteReader), so it reads
		// exactly the deflate data and leaves the reader just past it.
		d.br.Reset(src[pos:])
		if d.flate == nil {
			d.flate = flate.NewReader(&d.br)
		} else if err := d.flate.(flate.Resetter).Reset(&d.br, nil); err != nil {
			return out, err
		}
		start := len(out)
		out, err = readCapped(d.flate, out, limit)
		if err != nil {
			if err == io.ErrUnexpectedEOF {
				err = errors.New("unexpected end of ZLIB input stream")
			}
			return out, err
		}
		pos = len(src) - d.br.Len()
		if len(src)-pos < 8 {
			return out, errors.New("corrupt GZIP trailer: truncated")
		}
		crc := binary.LittleEndian.Uint32(src[pos:])
		size := binary.LittleEndian.Uint32(src[pos+4:])
		if crc != crc32.ChecksumIEEE(out[start:]) || size != uint32(len(out)-start) {
			return out, errors.New("corrupt GZIP trailer")
		}
		pos += 8
		if len(src)-pos <= gzipIgnoredTail {
			break
		}
	}
	return out, nil
}

// ---- snappy (codec 2) ----

// xerialMagic starts a snappy-java SnappyOutputStream stream; it is followed by an
// i32 version and an i32 compatible version, then chunks (i32 length + raw block).
var xerialMagic = [8]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16
	xerialMagicHead = 0x82534E41 // the first 4 magic bytes read as a chunk length: a concatenated stream
)

// snappyBlock decodes one raw Snappy block, appending it to out; the decoded length
// from the block's preamble is checked against the limit before anything is written.
// The strict decoder rejects what the reference (C++) decoder used by snappy-java
// rejects, including the S2 extensions.
func snappyBlock(out, block []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return out, err
	}
	if n > limit-len(out) {
		return out, &limitClaim{uint64(len(out)) + uint64(n)}
	}
	out = growCap(out, len(out)+n, limit+1)
	dec, err := snappy.DecodeStrict(out[len(out):len(out)+n], block)
	if err != nil {
		return out, err
	}
	if len(dec) != n {
		return out, fmt.Errorf("snappy block decoded to %d bytes, its preamble says %d", len(dec), n)
	}
	return out[:len(out)+n], nil
}

// unsnappy inflates a payload as snappy-java's SnappyInputStream reads it (section
// 4.2): fewer than 16 bytes, or no xerial magic, means the whole payload is one raw
// Snappy block (librdkafka writes those); otherwise chunks follow the 16-byte header.
// A chunk length equal to the first four magic bytes starts a concatenated stream (its
// header must be complete; a header without the full magic ends the stream quietly, a
// version below 1 is an error); a negative chunk length or a truncated chunk is an
// error; fewer than 4 bytes at a chunk boundary end the stream.
func (d *decompressor) unsnappy(src []byte, limit int) ([]byte, error) {
	out := d.out[:0]
	if len(src) == 0 {
		return out, errors.New("cannot decompress empty snappy stream")
	}
	if len(src) < xerialHeaderLen || !bytes.Equal(src[:8], xerialMagic[:]) {
		return snappyBlock(out, src, limit)
	}
	pos := xerialHeaderLen
	for len(src)-pos >= 4 {
		size := int32(binary.BigEndian.Uint32(src[pos:]))
		if uint32(size) == xerialMagicHead {
			if len(src)-pos < xerialHeaderLen {
				return out, errors.New("insufficient header size in a concatenated snappy block")
			}
			hdr := src[pos : pos+xerialHeaderLen]
			if !bytes.Equal(hdr[:8], xerialMagic[:]) {
				break
			}
			if v := int32(binary.BigEndian.Uint32(hdr[8:])); v < 1 {
				return out, fmt.Errorf("snappy stream compressed with incompatible codec version %d", v)
			}
			pos += xerialHeaderLen
			continue
		}
		pos += 4
		if size < 0 {
			return out, fmt.Errorf("snappy chunk size %d is negative", size)
		}
		if int(size) > len(src)-pos {
			return out, fmt.Errorf("failed to read snappy chunk: %d bytes declared, %d left", size, len(src)-pos)
		}
		var err error
		if out, err = snappyBlock(out, src[pos:pos+int(size)], limit); err != nil {
			return out, err
		}
		pos += int(size)
	}
	return out, nil
}

// ---- lz4 (codec 3) ----

// Kafka's LZ4 frame (section 4.3; broker: Lz4BlockInputStream, formerly
// KafkaLZ4BlockInputStream). All fields little-endian.
const (
	lz4Magic          = 0x184D2204
	lz4FlagContentSum = 0x04
	lz4FlagSize       = 0x08
	lz4FlagBlockSum   = 0x10
	lz4FlagIndep      = 0x20
	lz4Uncompressed   = 0x80000000 // block size word: stored, not compressed
)

// unlz4 inflates an LZ4 frame as the broker reads it. The frame descriptor is
// validated like Lz4BlockInputStream.readHeader (FLG reserved bits 0, independent
// blocks, version 1; BD reserved bits 0 and a block size id of 4-7); the header
// checksum byte is verified unless ignoreHC (magic 0 messages, whose writers hashed
// the magic bytes too, KAFKA-3160). Blocks must not exceed the maximum block size;
// flagged block checksums (over the stored bytes) are verified; a flagged content
// checksum after the end mark is read but not verified, and bytes after the frame are
// ignored. Compressed blocks are decoded with pierrec/lz4.
func (d *decompressor) unlz4(src []byte, ignoreHC bool, limit int) ([]byte, error) {
	out := d.out[:0]
	if len(src) < 6 {
		return out, errors.New("lz4 stream ended prematurely")
	}
	if binary.LittleEndian.Uint32(src) != lz4Magic {
		return out, errors.New("lz4 stream unsupported (invalid magic bytes)")
	}
	flg, bd := src[4], src[5]
	switch {
	case flg&0x03 != 0:
		return out, errors.New("lz4 frame: reserved FLG bits must be 0")
	case flg&lz4FlagIndep == 0:
		return out, errors.New("lz4 frame: dependent block stream is unsupported")
	case flg>>6 != 1:
		return out, fmt.Errorf("lz4 frame: version %d is unsupported", flg>>6)
	case bd&0x0f != 0:
		return out, errors.New("lz4 frame: reserved BD bits must be 0")
	case (bd>>4)&7 < 4:
		return out, errors.New("lz4 frame: block size id must be between 4 and 7")
	case bd&0x80 != 0:
		return out, errors.New("lz4 frame: reserved BD bit 7 must be 0")
	}
	maxBlock := 1 << (2*int((bd>>4)&7) + 8)
	pos := 6
	if flg&lz4FlagSize != 0 {
		if len(src)-pos < 8 {
			return out, errors.New("lz4 stream ended prematurely")
		}
		pos += 8 // content size: not used
	}
	if pos >= len(src) {
		return out, errors.New("lz4 stream ended prematurely (no header checksum)")
	}
	if !ignoreHC && src[pos] != byte(xxh32.Sum(src[4:pos], 0)>>8) {
		return out, errors.New("lz4 stream frame descriptor corrupted")
	}
	pos++
	for {
		if len(src)-pos < 4 {
			return out, errors.New("lz4 stream ended prematurely")
		}
		word := binary.LittleEndian.Uint32(src[pos:])
		pos += 4
		size := int(word &^ lz4Uncompressed)
		if size == 0 { // end mark
			if flg&lz4FlagContentSum != 0 {
				if len(src)-pos < 4 {
					return out, errors.New("lz4 stream ended prematurely (content checksum)")
				}
			}
			return out, nil
		}
		if size > maxBlock {
			return out, fmt.Errorf("lz4 block size %d exceeded max: %d", size, maxBlock)
		}
		if len(src)-pos < size {
			return out, errors.New("lz4 stream ended prematurely")
		}
		block := src[pos : pos+size]
		if word&lz4Uncompressed != 0 {
			if size > limit-len(out) {
				return out, errDecompressLimit
			}
			out = append(growCap(out, len(out)+size, limit+1), block...)
		} else {
			var err error
			if out, err = d.lz4Block(out, block, maxBlock, limit); err != nil {
				return out, err
			}
		}
		pos += size
		if flg&lz4FlagBlockSum != 0 {
			if len(src)-pos < 4 {
				return out, errors.New("lz4 stream ended prematurely (block checksum)")
			}
			if binary.LittleEndian.Uint32(src[pos:]) != xxh32.Sum(block, 0) {
				return out, errors.New("lz4 block checksum mismatch")
			}
			pos += 4
		}
	}
}

// lz4Block decodes one compressed block (at most maxBlock bytes, like the broker's
// LZ4SafeDecompressor call) and appends it to out without passing the limit.
func (d *decompressor) lz4Block(out, block []byte, maxBlock, limit int) ([]byte, error) {
	room := min(maxBlock, limit+1-len(out))
	out = growCap(out, len(out)+room, limit+1)
	n, err := lz4.UncompressBlock(block, out[len(out):len(out)+room])
	if err == nil {
		if n > limit-len(out) {
			return out, errDecompressLimit
		}
		return out[:len(out)+n], nil
	}
	if room < maxBlock {
		// The window was cut by the limit: decode again with the full block size to
		// tell "too large" from "corrupt".
		if cap(d.scratch) < maxBlock {
			d.scratch = make([]byte, maxBlock)
		}
		if _, err2 := lz4.UncompressBlock(block, d.scratch[:maxBlock]); err2 == nil {
			return out, errDecompressLimit
		}
	}
	return out, fmt.Errorf("lz4 block: %w", err)
}

// ---- zstd (codec 4) ----

// unzstd inflates concatenated Zstandard frames (section 4.4; skippable frames are
// skipped, anything else after a frame is an error, as zstd-jni reports it). The
// decoder is single-threaded and capped at limit; a frame whose declared content size
// or window is over the limit fails before it is decoded.
func (d *decompressor) unzstd(src []byte, limit int) ([]byte, error) {
	if d.zstd == nil || d.zstdLim != limit {
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(limit)),
		)
		if err != nil {
			return d.out[:0], err
		}
		d.zstd, d.zstdLim = dec, limit
	}
	out := d.out[:0]
	if cap(out) == 0 {
		out = growCap(out, min(limit+1, 4*len(src)), limit+1)
	}
	out, err := d.zstd.DecodeAll(src, out)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		var h zstd.Header
		if h.Decode(src) == nil && h.HasFCS && h.FrameContentSize > uint64(limit) {
			return out, &limitClaim{h.FrameContentSize}
		}
		return out, fmt.Errorf("%w (%v)", errDecompressLimit, err)
	}
	return out, err
}

// limitOf turns a configured cap into the limit the codecs use.
func limitOf(max int64) int {
	if max <= 0 {
		return DefaultMaxDecompressedBytes
	}
	if max > math.MaxInt32 && math.MaxInt == math.MaxInt32 {
		return math.MaxInt32 - 1
	}
	if max >= math.MaxInt {
		return math.MaxInt - 1
	}
	return int(max)
}
