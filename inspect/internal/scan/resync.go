package scan

import (
	"bytes"
	"encoding/binary"
	"io"

	"github.com/kseg/kseg/inspect/record"
)

// Resynchronisation: past a corrupt batch, where does the next valid batch
// start? A broker never asks (its iterator stops at the first damage and
// recovery truncates there); kseg asks so that verify can go on checking
// the rest of a segment and dump-log --salvage can print the records a
// broker would throw away.

// Resync's work bound: the CRC bytes it may spend on checking candidates,
// so that garbage full of plausible headers (a repeated small integer is
// one at every fourth byte) costs time linear in its size. Each call of
// Resyncer.Next may checksum at most ResyncBudgetBase +
// ResyncBudgetPerByte × (bytes scanned) bytes.
const (
	ResyncBudgetBase    = 256 << 20 // the largest entry handed out whole (MaxEntryBytes' default)
	ResyncBudgetPerByte = 16        // per byte scanned
)

// ResyncWindow is the size of each of a Resyncer's two buffers.
const ResyncWindow = 64 << 10

// Resyncer finds valid batches past damage in one .log, through two
// buffers of ResyncWindow bytes it owns (one scanned for candidates, one
// for checking them), so repeated calls allocate nothing.
//
//	rs := NewResyncer(f, f.Name, f.Size())
//	next, ok, err := rs.Next(damagedAt + 1)
//
// A Resyncer is not safe for concurrent use.
type Resyncer struct {
	size  int64
	scan  readWindow // candidates are looked for here
	check readWindow // and checked here

	crcBytes int64
}

// NewResyncer returns a Resyncer over r, a .log of size bytes named name in
// errors.
func NewResyncer(r io.ReaderAt, name string, size int64) *Resyncer {
	rs := &Resyncer{scan: readWindow{buf: make([]byte, 0, ResyncWindow)}, check: readWindow{buf: make([]byte, 0, ResyncWindow)}}
	rs.Reset(r, name, size)
	return rs
}

// Reset points rs at another file, keeping its buffers.
func (rs *Resyncer) Reset(r io.ReaderAt, name string, size int64) {
	rs.size = size
	rs.scan.reset(r, name, size)
	rs.check.reset(r, name, size)
}

// CRCBytes is the number of bytes checksummed so far (the work the budget
// bounds).
func (rs *Resyncer) CRCBytes() int64 { return rs.crcBytes }

// Resync finds the first position >= from at which a valid batch starts in
// the .log r of length size. It is NewResyncer(r, "", size).Next(from); a
// caller resynchronising more than once should keep a Resyncer.
func Resync(r io.ReaderAt, size, from int64) (pos int64, ok bool, err error) {
	return NewResyncer(r, "", size).Next(from)
}

// Next finds the first position >= from at which a valid batch starts: its
// length field is at least 14 and the entry fits in the file, its magic is
// 0, 1 or 2, its header is consistent (ParseBatch, HeaderProblem; for
// v0/v1 the key and value lengths add up to the entry's size) and its CRC
// matches (CRC-32C for v2, CRC-32 for v0/v1). The bytes between a corrupt
// batch and the returned position are the damaged range.
//
// ok is false when no valid batch starts at or after from (pos is then the
// file size). err reports read errors only. Every candidate is rejected in
// O(1) unless its length, magic, offset and (for v0/v1) key and value
// lengths are plausible, and the CRC bytes spent on candidates are bounded
// by a budget that grows with the bytes scanned (ResyncBudgetBase,
// ResyncBudgetPerByte), so a scan over garbage costs time linear in its
// size. In pathological garbage the budget may pass over a valid batch;
// the damaged range then ends at a later one.
func (rs *Resyncer) Next(from int64) (pos int64, ok bool, err error) {
	const need = record.HeaderSizeUpToMagic
	budget := int64(ResyncBudgetBase)
	for at := max(from, 0); at+need <= rs.size; {
		n := min(int64(cap(rs.scan.buf)), rs.size-at)
		p, err := rs.scan.bytes(at, n)
		if err != nil {
			return 0, false, err
		}
		last := n - need // candidates whose 17 header bytes are in p
		budget += ResyncBudgetPerByte * (last + 1)
		for i := int64(0); i <= last; i++ {
			if p[i+8]|p[i+9]|p[i+10]|p[i+11] == 0 {
				// A zero length field: so is every candidate's up to the
				// next non-zero byte (a zero-filled tail or a sparse hole
				// is skipped at memory speed, not byte by byte).
				k := int64(firstNonZero(p, int(i+8)))
				i = max(i, k-11) - 1
				continue
			}
			if quickReject(p[i:], at+i, rs.size) {
				continue
			}
			if _, ok, err := rs.validAt(at+i, &budget); err != nil {
				return 0, false, err
			} else if ok {
				return at + i, true, nil
			}
		}
		if at+n >= rs.size {
			break
		}
		at += last + 1
	}
	return rs.size, false, nil
}

// zeroBlock is compared against to skip zero bytes a block at a time.
var zeroBlock [512]byte

// firstNonZero is the index of the first non-zero byte of p at or after
// from, or len(p).
func firstNonZero(p []byte, from int) int {
	i := from
	for i+len(zeroBlock) <= len(p) && bytes.Equal(p[i:i+len(zeroBlock)], zeroBlock[:]) {
		i += len(zeroBlock)
	}
	for i < len(p) && p[i] == 0 {
		i++
	}
	return i
}

// quickReject is the cheap part of the candidate test Next applies at
// every byte: p holds at least 17 bytes from pos.
func quickReject(p []byte, pos, size int64) bool {
	magic := p[16]
	if magic > 2 {
		return true
	}
	length := int64(int32(binary.BigEndian.Uint32(p[8:])))
	if length < record.MinEntryLength || pos+record.LogOverhead+length > size {
		return true
	}
	if p[0]&0x80 != 0 {
		return true // a negative offset
	}
	return magic == 2 && length+record.LogOverhead < record.V2HeaderSize
}

// header parses the header at pos when one that could be genuine starts
// there: it parses, fits in the file and is consistent (HeaderProblem). ok
// is false otherwise (also when fewer than 18 bytes are left).
func (rs *Resyncer) header(pos int64) (b record.Batch, ok bool, err error) {
	left := rs.size - pos
	if left < record.HeaderSizeUpToMagic+1 {
		return record.Batch{}, false, nil
	}
	hdr, err := rs.check.bytes(pos, min(int64(record.HeaderReadSize), left))
	if err != nil {
		return record.Batch{}, false, err
	}
	b, perr := record.ParseBatch(hdr, pos, rs.check.name)
	if perr != nil || b.Size > left || record.HeaderProblem(&b) != "" {
		return record.Batch{}, false, nil
	}
	return b, true, nil
}

// SkipBadCRC is the salvage decision for a batch b whose header parsed but
// whose stored CRC does not match: are only its contents damaged, or its
// length field too? When b ends the file, or a batch header that could be
// genuine starts where its length field says it ends, only the contents
// are: skipTo is -1 and the reader goes on after b. Otherwise the length is
// not credible; skipTo is where the next valid batch after b's position
// starts (Next), the end of the damaged range, or -1 when none follows (b
// is then kept: nothing better marks the damage's end). dump-log --salvage
// (Partition.WalkSalvage) and verify's log check both decide through it.
// A broker never asks: recovery stops at the batch either way.
func (rs *Resyncer) SkipBadCRC(b *record.Batch) (skipTo int64, err error) {
	end := b.End()
	if end >= rs.size {
		return -1, nil
	}
	if _, plausible, err := rs.header(end); err != nil || plausible {
		return -1, err
	}
	next, found, err := rs.Next(b.Position + 1)
	if err != nil || !found {
		return -1, err
	}
	return next, nil
}

// validAt reports whether a valid batch starts at pos, and returns it.
// budget bounds the CRC bytes spent: a candidate whose CRC would cost more
// than *budget is not checked (and not valid), and the bytes checked are
// taken from it; nil means no budget.
// The caller has applied quickReject.
func (rs *Resyncer) validAt(pos int64, budget *int64) (record.Batch, bool, error) {
	b, ok, err := rs.header(pos)
	if err != nil || !ok {
		return record.Batch{}, false, err
	}
	if b.Magic < 2 {
		if ok, err := rs.legacyFits(&b); err != nil || !ok {
			return record.Batch{}, false, err
		}
	}
	if budget != nil {
		if b.Size > *budget {
			return record.Batch{}, false, nil
		}
		*budget -= b.Size
	}
	c, err := rs.crc(&b)
	if err != nil {
		return record.Batch{}, false, err
	}
	return b, c == b.CRC, nil
}

// legacyFits reports whether a v0/v1 message's key and value lengths add
// up to its size exactly (LegacyRecord: crc, magic, attributes, [timestamp],
// key length, key, value length, value; a negative length is null).
func (rs *Resyncer) legacyFits(b *record.Batch) (bool, error) {
	at := b.Position + record.LegacyHeaderV0
	if b.Magic == 1 {
		at = b.Position + record.LegacyHeaderV1
	}
	end := b.End()
	for i := 0; i < 2; i++ {
		if at+4 > end {
			return false, nil
		}
		p, err := rs.check.bytes(at, 4)
		if err != nil {
			return false, err
		}
		n := int64(int32(binary.BigEndian.Uint32(p)))
		at += 4 + max(n, 0)
	}
	return at == end, nil
}

// crc computes the checksum of the entry b as its header's CRC field
// should hold it, streaming it through the window.
func (rs *Resyncer) crc(b *record.Batch) (uint32, error) {
	rs.crcBytes += b.Size
	return rs.check.crc(b.Magic, b.Position+record.CRCStart(b.Magic), b.End())
}
