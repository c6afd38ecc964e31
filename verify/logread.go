package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/kseg/kseg/inspect"
)

// window reads a .log through one reusable buffer: sequential passes hit
// the buffer, and nothing is allocated per batch.
type window struct {
	r    io.ReaderAt
	name string
	size int64
	buf  []byte // buf[:n] holds the file bytes [at, at+n)
	at   int64
	n    int64

	crcBytes int64 // bytes checksummed so far (tests bound resync's work with it)
}

func newWindow(r io.ReaderAt, name string, size int64, buf []byte) *window {
	return &window{r: r, name: name, size: size, buf: buf}
}

// bytes returns the file bytes [pos, pos+n). n must be at most len(buf)
// and pos+n at most the file size (the callers check both).
func (w *window) bytes(pos, n int64) ([]byte, error) {
	if pos >= w.at && pos+n <= w.at+w.n {
		off := pos - w.at
		return w.buf[off : off+n], nil
	}
	want := min(int64(len(w.buf)), w.size-pos)
	if want < n {
		return nil, fmt.Errorf("%s: internal error: read of %d bytes at %d with %d left", w.name, n, pos, want)
	}
	k, err := w.r.ReadAt(w.buf[:want], pos)
	if int64(k) < want {
		w.n = 0
		return nil, readError(w.name, pos, err)
	}
	w.at, w.n = pos, want
	return w.buf[:n], nil
}

// crc computes the checksum of the entry [pos, pos+size) as the header's
// CRC field should hold it (CRC-32C from byte 21 for v2, CRC-32 from byte
// 16 for v0/v1), streaming through the window when the entry is larger.
func (w *window) crc(magic int8, pos, size int64) (uint32, error) {
	w.crcBytes += size
	var c uint32
	for at, end := pos+inspect.CRCStart(magic), pos+size; at < end; {
		n := min(int64(len(w.buf)), end-at)
		p, err := w.bytes(at, n)
		if err != nil {
			return 0, err
		}
		c = inspect.UpdateCRC(magic, c, p)
		at += n
	}
	return c, nil
}

// allZero reports whether the file bytes [pos, size) are all zero.
func (w *window) allZero(pos int64) (bool, error) {
	for at := pos; at < w.size; {
		n := min(int64(len(w.buf)), w.size-at)
		p, err := w.bytes(at, n)
		if err != nil {
			return false, err
		}
		for _, c := range p {
			if c != 0 {
				return false, nil
			}
		}
		at += n
	}
	return true, nil
}

func readError(name string, pos int64, err error) error {
	var ce *inspect.CorruptError
	if errors.As(err, &ce) {
		return ce
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s: reading at byte position %d: %w", name, pos, err)
}

// Minimal sizes used to bound what a header may claim.
const (
	minV2Batch    = inspect.V2HeaderSize // DefaultRecordBatch.RECORD_BATCH_OVERHEAD
	minV2Record   = 7                    // length, attributes, timestamp delta, offset delta, key length, value length, header count: 1 byte each at least
	maxLegacyCode = 3                    // codecs 0-3 in magic 0/1 (zstd is rejected with magic < 2)
	maxV2Codec    = 4
)

// headerProblem says what is impossible in a header that ParseBatch
// accepted, or "" when nothing is. The broker's file path checks only the
// size and the CRC (DefaultRecordBatch.ensureValid); these are the limits
// every batch a broker wrote satisfies, checked so that a damaged header
// whose CRC still matches (the v2 CRC does not cover the magic) is caught.
func headerProblem(b *inspect.Batch) string {
	if b.Magic > 2 || b.Magic < 0 {
		return fmt.Sprintf("magic %d is not 0, 1 or 2", b.Magic)
	}
	codec := b.Attributes & inspect.AttrCompressionMask
	if b.Magic < 2 {
		if codec > maxLegacyCode {
			return fmt.Sprintf("compression codec %d is not valid in a magic %d message", codec, b.Magic)
		}
		return ""
	}
	switch {
	case codec > maxV2Codec:
		return fmt.Sprintf("unknown compression codec %d", codec)
	case b.RecordCount < 0:
		return fmt.Sprintf("negative record count %d", b.RecordCount)
	case int64(b.RecordCount) > int64(b.LastOffsetDelta)+1:
		return fmt.Sprintf("record count %d does not fit in offsets %d..%d (last offset delta %d)", b.RecordCount, b.BaseOffset, b.LastOffset, b.LastOffsetDelta)
	case codec == 0 && int64(b.RecordCount)*minV2Record > b.Size-minV2Batch:
		return fmt.Sprintf("record count %d cannot fit in %d bytes of uncompressed records", b.RecordCount, b.Size-minV2Batch)
	}
	return ""
}

// quickReject is the cheap part of the candidate test Resync applies at
// every byte: p holds at least 17 bytes from pos.
func quickReject(p []byte, pos, size int64) bool {
	magic := p[16]
	if magic > 2 {
		return true
	}
	length := int64(int32(binary.BigEndian.Uint32(p[8:])))
	if length < inspect.MinEntryLength || pos+inspect.LogOverhead+length > size {
		return true
	}
	if p[0]&0x80 != 0 {
		return true // a negative offset
	}
	return magic == 2 && length+inspect.LogOverhead < minV2Batch
}

// validWithin reports whether a valid batch starts at pos: the entry fits
// in the file, its header is consistent (ParseBatch, headerProblem) and its
// CRC matches; the batch is returned when it is valid. budget bounds the
// CRC bytes spent: a candidate whose CRC would cost more than *budget is not
// checked (and not valid), and the bytes checked are taken from it. nil
// means no budget.
func validWithin(w *window, pos int64, budget *int64) (inspect.Batch, bool, error) {
	left := w.size - pos
	if left < inspect.HeaderSizeUpToMagic+1 {
		return inspect.Batch{}, false, nil
	}
	hdr, err := w.bytes(pos, min(int64(inspect.HeaderReadSize), left))
	if err != nil {
		return inspect.Batch{}, false, err
	}
	if quickReject(hdr, pos, w.size) {
		return inspect.Batch{}, false, nil
	}
	b, err := inspect.ParseBatch(hdr, pos, w.name)
	if err != nil || b.Size > left || headerProblem(&b) != "" {
		return inspect.Batch{}, false, nil
	}
	if b.Magic < 2 {
		if ok, err := legacyFits(w, &b); err != nil || !ok {
			return inspect.Batch{}, false, err
		}
	}
	if budget != nil {
		if b.Size > *budget {
			return inspect.Batch{}, false, nil
		}
		*budget -= b.Size
	}
	c, err := w.crc(b.Magic, b.Position, b.Size)
	if err != nil {
		return inspect.Batch{}, false, err
	}
	return b, c == b.CRC, nil
}

// legacyFits reports whether a v0/v1 message's key and value lengths add
// up to its size exactly (LegacyRecord: crc, magic, attributes, [timestamp],
// key length, key, value length, value; a negative length is null).
func legacyFits(w *window, b *inspect.Batch) (bool, error) {
	at := b.Position + 18
	if b.Magic == 1 {
		at += 8
	}
	end := b.End()
	for i := 0; i < 2; i++ {
		if at+4 > end {
			return false, nil
		}
		p, err := w.bytes(at, 4)
		if err != nil {
			return false, err
		}
		n := int64(int32(binary.BigEndian.Uint32(p)))
		at += 4 + max(n, 0)
	}
	return at == end, nil
}

// Resync's CRC budget: what it may spend on checking candidates, so that
// garbage full of plausible headers (a repeated small integer is one at
// every fourth byte) costs time linear in its size.
const (
	resyncBudgetBase    = 256 << 20 // the largest entry handed out whole (inspect.MaxEntryBytes)
	resyncBudgetPerByte = 16        // per byte scanned
)

// resyncWindow is the read size Resync uses.
const resyncWindow = 64 << 10

// Resync finds the first position >= from at which a valid batch starts in
// the .log r of length size: its length field is at least 14 and the entry
// fits in the file, its magic is 0, 1 or 2, its header is consistent and
// its CRC matches (CRC-32C for v2, CRC-32 for v0/v1). It is how verify
// carries on past damage: the bytes between a corrupt batch and the
// returned position are the damaged range.
//
// ok is false when no valid batch starts at or after from (pos is then
// size). err reports read errors only. Every candidate is rejected in O(1)
// unless its length, magic, offset and (for v0/v1) key and value lengths
// are plausible, and the CRC bytes spent on candidates are bounded by a
// budget that grows with the bytes scanned, so a scan over garbage costs
// time linear in its size. In pathological garbage the budget may pass
// over a valid batch; the damaged range then ends at a later one.
func Resync(r io.ReaderAt, size, from int64) (pos int64, ok bool, err error) {
	w := newWindow(r, "", size, make([]byte, resyncWindow))
	return resync(w, make([]byte, resyncWindow), from)
}

// resync is Resync over a window (for CRC checks of candidates) and a
// separate scan buffer, both reusable.
func resync(w *window, scan []byte, from int64) (int64, bool, error) {
	const need = inspect.HeaderSizeUpToMagic
	budget := int64(resyncBudgetBase)
	for at := max(from, 0); at+need <= w.size; {
		n := min(int64(len(scan)), w.size-at)
		k, err := w.r.ReadAt(scan[:n], at)
		if int64(k) < n {
			return 0, false, readError(w.name, at, err)
		}
		p := scan[:n]
		last := n - need // candidates whose 17 header bytes are in p
		budget += resyncBudgetPerByte * (last + 1)
		for i := int64(0); i <= last; i++ {
			if quickReject(p[i:], at+i, w.size) {
				continue
			}
			if _, ok, err := validWithin(w, at+i, &budget); err != nil {
				return 0, false, err
			} else if ok {
				return at + i, true, nil
			}
		}
		if at+n >= w.size {
			break
		}
		at += last + 1
	}
	return w.size, false, nil
}
