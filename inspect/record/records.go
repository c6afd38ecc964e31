package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kseg/kseg/inspect/fileio"
)

// Header is one record header; Key and Value are views (Value nil when null).
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one decoded record. All byte slices are views into the entry or into the
// decoder's decompression buffer, valid only until the callback returns.
type Record struct {
	Offset int64
	// Timestamp is the effective timestamp: the batch MaxTimestamp for LogAppendTime,
	// else base+delta (v2) or the message's own (v1), -1 for v0.
	Timestamp  int64
	Key, Value []byte // nil when null (negative length)
	// HeaderCount is the number of headers (0 for v0/v1); EachHeader
	// walks them. They are validated while decoding but never held as a
	// list: a record of ten million empty headers is 2 bytes per header
	// on disk and costs nothing more in memory.
	HeaderCount int
	headers     []byte // the encoded headers, after the count
	// Sequence is baseSequence+offsetDelta with wrap-around (v2), -1 when the batch
	// has no sequence and for v0/v1.
	Sequence   int32
	Attributes int8
	Magic      int8

	// Legacy inner messages (and uncompressed legacy entries) only; zero for v2.
	// CRCValid reports whether CRC matches the CRC-32 of the message, as
	// LegacyRecord.isValid computes it; a mismatch is not an error.
	CRC      uint32
	CRCValid bool
}

// RecordDecoder decodes the records of one batch at a time, reusing its buffers, so
// that steady-state decoding does not allocate. The buffers grow to the largest
// payload decoded so far (never past MaxDecompressedBytes+1, plus one LZ4 block) and
// are kept. The zero value is ready to use; it is not safe for concurrent use, and
// fn must not call back into the same decoder.
type RecordDecoder struct {
	// MaxDecompressedBytes caps the size a compressed payload may inflate to
	// (default 64 MiB when zero); over it -> ErrTooLarge.
	MaxDecompressedBytes int64

	dec decompressor
	rec Record
}

// Records calls fn for every record of the entry, in order. entry is the complete
// entry (len(entry) == b.Size, starting at the 8-byte offset field), b its parsed
// header. It returns the first error from decoding (a *CorruptError naming file,
// b.Position, kind ErrCorruptRecords or ErrTooLarge) or from fn (returned unchanged,
// so callers can stop early with a sentinel).
//
// Magic >= 2 follows DefaultRecordBatch.iterator, magic < 2 (as a signed byte)
// AbstractLegacyRecordBatch.iterator, as the broker's file iterator chooses them. A
// compressed payload is inflated completely before the first record is delivered
// (the broker streams it), so a damaged stream yields an error and no records.
func (d *RecordDecoder) Records(file string, entry []byte, b *Batch, fn func(*Record) error) error {
	if int64(len(entry)) < b.Size {
		return fileio.Corruptf(file, b.Position, fileio.ErrTorn, "entry has %d bytes, the batch size is %d", len(entry), b.Size)
	}
	if b.Size >= 0 {
		entry = entry[:b.Size]
	}
	if b.Magic >= 2 {
		return d.recordsV2(file, entry, b, nil, fn)
	}
	return d.legacyRecords(file, entry, b, fn)
}

// RecordsAt is Records for the batch b of the file r, read as decoding
// needs it: an uncompressed v2 batch is read in growing pieces, so a
// caller that stops early (a timestamp lookup stops at the first record
// that answers) copies the batch only up to that record; any other batch
// is read whole first. The records and errors are those Records gives for
// the whole entry. buf is the read buffer, grown as needed and returned
// for reuse; read errors are reported by fileio.ReadError's rules.
func (d *RecordDecoder) RecordsAt(file string, r io.ReaderAt, b *Batch, buf []byte, fn func(*Record) error) ([]byte, error) {
	if cap(buf) < int(b.Size) {
		buf = make([]byte, 0, b.Size)
	}
	buf = buf[:b.Size]
	e := &partialEntry{r: r, file: file, pos: b.Position, buf: buf}
	lazy := b.Magic >= 2 && b.Compression() == CompressionNone && b.RecordCount > 0
	if !lazy {
		if err := e.need(len(buf)); err != nil {
			return buf, err
		}
		return buf, d.Records(file, buf, b, fn)
	}
	if err := e.need(min(len(buf), V2HeaderSize+partialFirstRead)); err != nil {
		return buf, err
	}
	return buf, d.recordsV2(file, buf, b, e, fn)
}

// partialFirstRead is how much of an uncompressed v2 batch's records
// RecordsAt reads first; each further read at least doubles what was read.
const partialFirstRead = 2048

// partialEntry is an entry read from the file up to have bytes.
type partialEntry struct {
	r    io.ReaderAt
	file string
	pos  int64
	buf  []byte // the whole entry's room
	have int
}

// need makes sure the first n bytes of the entry (at most all of it) are
// read, reading at least twice what was read so far.
func (e *partialEntry) need(n int) error {
	if n <= e.have {
		return nil
	}
	to := min(max(n, 2*e.have), len(e.buf))
	if k, err := e.r.ReadAt(e.buf[e.have:to], e.pos+int64(e.have)); k < to-e.have {
		return fileio.ReadError(e.file, e.pos+int64(e.have), err)
	}
	e.have = to
	return nil
}

// FirstOffset returns the offset of the batch's first record (broker:
// RecordBatch.baseOffset): v2, the header's base offset; an uncompressed legacy
// message, its own offset; a legacy wrapper, the absolute offset of its first inner
// message, which takes decompressing the wrapper
// (AbstractLegacyRecordBatch.baseOffset = iterator().next().offset()).
func (d *RecordDecoder) FirstOffset(file string, entry []byte, b *Batch) (int64, error) {
	if b.Magic >= 2 {
		return b.BaseOffset, nil
	}
	if int64(len(entry)) < b.Size {
		return -1, fileio.Corruptf(file, b.Position, fileio.ErrTorn, "entry has %d bytes, the batch size is %d", len(entry), b.Size)
	}
	if b.Size >= 0 {
		entry = entry[:b.Size]
	}
	return d.legacyFirstOffset(file, entry, b)
}

// limit is the decompression cap in effect.
func (d *RecordDecoder) limit() int { return limitOf(d.MaxDecompressedBytes) }

// inflate decompresses a payload, turning failures into CorruptErrors.
func (d *RecordDecoder) inflate(file string, b *Batch, codec Compression, src []byte, magic int8) ([]byte, error) {
	if codec > CompressionZstd {
		return nil, fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "unknown compression type id %d", int8(codec))
	}
	out, err := d.dec.decompress(codec, src, magic, d.limit())
	if err == nil {
		return out, nil
	}
	var claim *limitClaim
	switch {
	case errors.As(err, &claim):
		return nil, fileio.Corruptf(file, b.Position, fileio.ErrTooLarge, "%s payload of %d bytes declares %d bytes decompressed, over the cap of %d bytes", codec, len(src), claim.claimed, d.limit())
	case errors.Is(err, errDecompressLimit):
		return nil, fileio.Corruptf(file, b.Position, fileio.ErrTooLarge, "%s payload of %d bytes inflates past the cap of %d bytes", codec, len(src), d.limit())
	}
	return nil, fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "%s payload of %d bytes does not decompress: %v", codec, len(src), err)
}

// recordsV2 iterates a magic 2 batch like DefaultRecordBatch.RecordIterator: exactly
// recordsCount records (negative is invalid, 0 means none and the payload is not
// read); each record is DefaultRecord.readFrom; the payload must end exactly after the
// last record ("records still remaining", checked before that record is returned) and
// must not end before it ("premature EOF").
//
// With partial set, entry is read only as far as partial.have and the loop
// reads on as each record needs (the payload is uncompressed then).
func (d *RecordDecoder) recordsV2(file string, entry []byte, b *Batch, partial *partialEntry, fn func(*Record) error) error {
	if len(entry) < V2HeaderSize {
		return fileio.Corruptf(file, b.Position, fileio.ErrCorruptHeader, "record batch size %d is smaller than the minimum allowed overhead %d", len(entry), V2HeaderSize)
	}
	count := b.RecordCount
	if count < 0 {
		return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "found invalid record count %d in magic v%d batch", count, b.Magic)
	}
	if count == 0 {
		return nil
	}
	payload := entry[V2HeaderSize:]
	codec := b.Compression()
	if codec != CompressionNone {
		out, err := d.inflate(file, b, codec, payload, b.Magic)
		if err != nil {
			return err
		}
		payload = out
	}
	logAppendTime := b.Attributes&AttrLogAppendTime != 0
	pos := 0
	for i := int32(0); i < count; i++ {
		if partial != nil {
			if err := partial.need(V2HeaderSize + pos + maxVarintLen); err != nil {
				return err
			}
		}
		length, n := ReadVarint(payload[pos:])
		switch {
		case n == 0:
			return d.v2Error(file, b, i, pos, "incorrect declared batch size, premature EOF reached")
		case n < 0:
			return d.v2Error(file, b, i, pos, "found invalid record structure: record length varint is longer than 5 bytes")
		}
		if length < 0 || int(length) > len(payload)-pos-n {
			return d.v2Error(file, b, i, pos, fmt.Sprintf("invalid record size: expected %d bytes in record payload, but %d bytes remain", length, len(payload)-pos-n))
		}
		if partial != nil {
			if err := partial.need(V2HeaderSize + pos + n + int(length)); err != nil {
				return err
			}
		}
		if err := d.decodeV2Record(payload[pos+n:pos+n+int(length)], b, logAppendTime); err != nil {
			return d.v2Error(file, b, i, pos, err.Error())
		}
		pos += n + int(length)
		if i == count-1 && pos != len(payload) {
			return d.v2Error(file, b, i, pos, fmt.Sprintf("incorrect declared batch size, records still remaining in file (%d bytes after the last record)", len(payload)-pos))
		}
		if err := fn(&d.rec); err != nil {
			return err
		}
	}
	return nil
}

// v2Error names the record and its byte position inside the (decompressed) payload.
func (d *RecordDecoder) v2Error(file string, b *Batch, i int32, pos int, msg string) error {
	where := "payload"
	if b.Compression() != CompressionNone {
		where = "decompressed payload"
	}
	return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "record %d of %d at byte %d of the %s: %s", i, b.RecordCount, pos, where, msg)
}

var errRecordStructure = errors.New("found invalid record structure")

// varintBytes reads a varint length and that many bytes of body from p; a negative
// length is a null (nil) field.
func varintBytes(body []byte, p int) (v []byte, next int, err error) {
	l, n := ReadVarint(body[p:])
	if n <= 0 {
		return nil, p, errRecordStructure
	}
	p += n
	if l < 0 {
		return nil, p, nil
	}
	if int(l) > len(body)-p {
		return nil, p, fmt.Errorf("%w: field length %d, %d bytes left in the record", errRecordStructure, l, len(body)-p)
	}
	return body[p : p+int(l) : p+int(l)], p + int(l), nil
}

// decodeV2Record decodes one record body (everything after its length varint) into
// d.rec (broker: DefaultRecord.readFrom). Every field must lie inside the body and
// the fields must use the body exactly; the header count must be non-negative and
// no larger than the bytes left. Headers are walked, not kept (EachHeader).
func (d *RecordDecoder) decodeV2Record(body []byte, b *Batch, logAppendTime bool) error {
	r := &d.rec
	if len(body) == 0 {
		return fmt.Errorf("%w: empty record", errRecordStructure)
	}
	r.Attributes = int8(body[0])
	p := 1
	tsDelta, n := ReadVarlong(body[p:])
	if n <= 0 {
		return fmt.Errorf("%w: timestamp delta", errRecordStructure)
	}
	p += n
	offsetDelta, n := ReadVarint(body[p:])
	if n <= 0 {
		return fmt.Errorf("%w: offset delta", errRecordStructure)
	}
	p += n
	var err error
	if r.Key, p, err = varintBytes(body, p); err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if r.Value, p, err = varintBytes(body, p); err != nil {
		return fmt.Errorf("value: %w", err)
	}
	count, n := ReadVarint(body[p:])
	if n <= 0 {
		return fmt.Errorf("%w: header count", errRecordStructure)
	}
	p += n
	if count < 0 {
		return fmt.Errorf("found invalid number of record headers %d", count)
	}
	if int(count) > len(body)-p {
		return fmt.Errorf("found invalid number of record headers: %d is larger than the remaining size of the record (%d)", count, len(body)-p)
	}
	start := p
	for h := 0; h < int(count); h++ {
		if _, p, err = nextHeader(body, p, h); err != nil {
			return err
		}
	}
	if p != len(body) {
		return fmt.Errorf("invalid record size: expected to read %d bytes in record payload, but instead read %d", len(body), p)
	}
	r.HeaderCount, r.headers = int(count), body[start:p]
	r.Offset = b.BaseOffset + int64(offsetDelta)
	if logAppendTime {
		r.Timestamp = b.MaxTimestamp
	} else {
		r.Timestamp = b.BaseTimestamp + tsDelta
	}
	r.Sequence = -1
	if b.BaseSequence >= 0 {
		r.Sequence = incrementSequence(b.BaseSequence, offsetDelta)
	}
	r.Magic = b.Magic
	r.CRC, r.CRCValid = 0, false
	return nil
}

// nextHeader decodes header h at p of a record body (DefaultRecord.readHeaders):
// a non-negative key length and key, then a value (nil when null).
func nextHeader(body []byte, p, h int) (Header, int, error) {
	var hd Header
	kl, n := ReadVarint(body[p:])
	if n <= 0 {
		return hd, p, fmt.Errorf("%w: header %d key size", errRecordStructure, h)
	}
	if kl < 0 {
		return hd, p, fmt.Errorf("invalid negative header key size %d", kl)
	}
	var err error
	if hd.Key, p, err = varintBytes(body, p); err != nil {
		return hd, p, fmt.Errorf("header %d key: %w", h, err)
	}
	if hd.Value, p, err = varintBytes(body, p); err != nil {
		return hd, p, fmt.Errorf("header %d value: %w", h, err)
	}
	return hd, p, nil
}

// EachHeader calls fn for each header in order, decoding them one at a
// time from the record's bytes (views, valid while the record is); it
// returns fn's first error.
func (r *Record) EachHeader(fn func(Header) error) error {
	p := 0
	for h := 0; h < r.HeaderCount; h++ {
		hd, next, err := nextHeader(r.headers, p, h)
		if err != nil {
			return err // validated when decoded: not reached
		}
		if err := fn(hd); err != nil {
			return err
		}
		p = next
	}
	return nil
}

// HeadersEqual reports whether r and o hold the same headers in the same
// order (a null value is not an empty one).
func (r *Record) HeadersEqual(o *Record) bool {
	if r.HeaderCount != o.HeaderCount {
		return false
	}
	p, q := 0, 0
	for h := 0; h < r.HeaderCount; h++ {
		a, np, err := nextHeader(r.headers, p, h)
		if err != nil {
			return false
		}
		b, nq, err := nextHeader(o.headers, q, h)
		if err != nil {
			return false
		}
		if !bytes.Equal(a.Key, b.Key) || (a.Value == nil) != (b.Value == nil) || !bytes.Equal(a.Value, b.Value) {
			return false
		}
		p, q = np, nq
	}
	return true
}

// incrementSequence adds with the producer-sequence wrap-around past MaxInt32 to 0
// (broker: DefaultRecordBatch.incrementSequence), in Java's int arithmetic.
func incrementSequence(sequence, increment int32) int32 {
	if sequence > math.MaxInt32-increment {
		return increment - (math.MaxInt32 - sequence) - 1
	}
	return sequence + increment
}
