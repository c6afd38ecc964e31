package inspect

import (
	"errors"
	"io"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// DefaultWindow is the read size of a LogIterator: 256 KiB preads read
// as fast as 1 MiB ones here, and the window, with the page-cache pages it
// was copied from, still fits the core's L2 cache when the checksums read
// it back; verify measured faster with it (docs/performance.md).
const DefaultWindow = 256 << 10

// MaxEntryBytes is the largest entry LogIterator.Entry hands out whole;
// larger entries (far above any broker's message.max.bytes) can still have
// their CRC checked by streaming (LogIterator.CheckCRC), so a hostile
// length field never causes an allocation larger than this.
var MaxEntryBytes int64 = 256 << 20

// scanner is the LogIterator's engine: it walks the entries of a .log from
// a start position with the broker's stop rules (cursor), parsing headers
// in place; nothing is allocated per batch. It reads the header bytes one
// of two ways:
//
//   - through the window w (whole entries, sequentially): the reading path
//     of verify, rebuild, dump-log and the summaries;
//   - headers only: one pread of HeaderReadSize bytes (fewer at the end of
//     the file) at each entry's position into hdr, exactly the bytes the
//     broker's FileLogInputStream.nextBatch reads for
//     FileRecords.searchForOffsetWithSize and searchForTimestamp: the
//     lookups' path, which touches nothing between two headers. After an
//     entry of at most smallEntryBytes, the headers that follow it are
//     read headerGroupBytes at a time into group instead: small batches'
//     headers share pages anyway, and reading them one by one cost a
//     system call per batch (a scan over a whole segment of ~0.3 KiB
//     batches, which a damaged index can ask for, made one per 320 bytes).
type scanner struct {
	w       readWindow
	headers bool
	hdr     [record.HeaderReadSize]byte
	group   []byte // headers only: the file bytes [groupAt, groupAt+len(group))
	groupAt int64
	cursor
}

// headerGroupBytes is the read size of headers-only reading after a small
// entry; smallEntryBytes is the largest entry that makes the next read
// one (so a group holds at least four headers).
const (
	headerGroupBytes = 4 << 10
	smallEntryBytes  = headerGroupBytes / 4
)

// reset points s at another file, from start, keeping its buffers.
func (s *scanner) reset(r io.ReaderAt, name string, size, start int64) {
	s.w.reset(r, name, size)
	s.name, s.end = name, size
	s.group = s.group[:0]
	s.Reset(start)
}

// Next decodes the next entry's header; false at the end (see Err).
func (s *scanner) Next() bool {
	n, ok := s.headerLen()
	if !ok {
		return false
	}
	hdr, err := s.header(s.pos, n)
	if err != nil {
		return s.fail(err)
	}
	return s.accept(hdr)
}

// header returns the n header bytes at pos (n <= HeaderReadSize, inside
// the file): in headers-only mode from the group when it holds them, read
// into a new group when the entry before pos was small, else a pread into
// hdr; otherwise a view into the window.
func (s *scanner) header(pos, n int64) ([]byte, error) {
	if !s.headers {
		return s.w.bytes(pos, n)
	}
	if off := pos - s.groupAt; off >= 0 && off+n <= int64(len(s.group)) {
		return s.group[off : off+n], nil
	}
	if prev := &s.b; prev.Size > 0 && prev.Size <= smallEntryBytes && prev.Position+prev.Size == pos {
		if s.group == nil {
			s.group = make([]byte, 0, headerGroupBytes)
		}
		g := s.group[:min(headerGroupBytes, s.end-pos)]
		k, err := s.w.r.ReadAt(g, pos)
		s.group, s.groupAt = g[:k], pos
		if int64(k) < n {
			return nil, fileio.ReadError(s.name, pos, err)
		}
		return g[:n], nil
	}
	p := s.hdr[:n]
	k, err := s.w.r.ReadAt(p, pos)
	if int64(k) < n {
		return nil, fileio.ReadError(s.name, pos, err)
	}
	return p, nil
}

// Entry returns the whole current entry (len == Batch().Size), a view into
// the window valid until the next call to Next. Entries larger than
// MaxEntryBytes are refused with ErrTooLarge.
func (s *scanner) Entry() ([]byte, error) {
	if s.b.Size > MaxEntryBytes {
		return nil, fileio.Corruptf(s.name, s.b.Position, fileio.ErrTooLarge, "batch of %d bytes is larger than %d", s.b.Size, MaxEntryBytes)
	}
	return s.w.bytes(s.b.Position, s.b.Size)
}

// CheckCRC computes the current entry's checksum, streaming it through the
// window when the entry is larger than the window, and reports whether it
// matches the stored CRC.
func (s *scanner) CheckCRC() (computed uint32, ok bool, err error) {
	b := &s.b
	if b.Size <= int64(cap(s.w.buf)) {
		e, err := s.w.bytes(b.Position, b.Size)
		if err != nil {
			return 0, false, err
		}
		// The window now holds the entry: with a read-ahead, the chunk
		// whose entries it noted.
		c, ok := s.aheadSum()
		if !ok {
			c = record.ComputeCRC(b.Magic, e)
		}
		return c, c == b.CRC, nil
	}
	if c, ok := s.aheadSum(); ok {
		return c, c == b.CRC, nil
	}
	c, err := s.w.crc(b.Magic, b.Position+record.CRCStart(b.Magic), b.End())
	return c, err == nil && c == b.CRC, err
}

// aheadSum is the current entry's checksum when the read-ahead computed it.
func (s *scanner) aheadSum() (uint32, bool) {
	if a := s.w.ahead; a != nil {
		return a.sum(s.b.Position, s.b.Size, s.b.Magic, s.b.CRC)
	}
	return 0, false
}

// cursor is the position and outcome of a scan, and the broker's stop
// rules that move it (FileLogInputStream.nextBatch), the one place they
// are written:
//
//  1. fewer than 18 bytes left: stop (a broker stops silently; Err reports
//     the leftover bytes as ErrTorn when there are any);
//  2. a length field below 14: stop with ErrCorruptHeader (the broker throws
//     CorruptRecordException);
//  3. the entry runs past the end of the file: stop with ErrTorn (the broker
//     stops silently at a partial trailing entry);
//  4. otherwise decode the header and advance by 12 + length.
//
// Every step moves forward by at least 26 bytes, so a scan always ends.
type cursor struct {
	name string
	end  int64
	pos  int64
	b    record.Batch
	err  error
	done bool
}

// headerLen is rule 1: how many header bytes to read at pos, or false when
// the scan is over (fewer than 18 bytes left: ErrTorn if any are left).
func (c *cursor) headerLen() (int64, bool) {
	if c.done {
		return 0, false
	}
	left := c.end - c.pos
	if left < record.HeaderSizeUpToMagic+1 {
		c.done = true
		if left > 0 {
			c.err = fileio.Corruptf(c.name, c.pos, fileio.ErrTorn, "%d bytes after the last batch, too few for a batch header", left)
		}
		return 0, false
	}
	return min(int64(record.HeaderReadSize), left), true
}

// accept is rules 2-4 on the header bytes read at pos: decode, check the
// entry fits in the file, advance past it.
func (c *cursor) accept(hdr []byte) bool {
	if err := record.ParseBatchTo(&c.b, hdr, c.pos, c.name); err != nil {
		return c.fail(err)
	}
	if left := c.end - c.pos; c.b.Size > left {
		return c.fail(fileio.Corruptf(c.name, c.pos, fileio.ErrTorn, "batch of %d bytes runs past the end of the file (%d bytes left)", c.b.Size, left))
	}
	c.pos += c.b.Size
	return true
}

// fail ends the scan with err; it returns false for Next to return.
func (c *cursor) fail(err error) bool {
	c.done, c.err = true, err
	return false
}

// Reset restarts the scan at position start, keeping the scanner's buffer
// (a salvaging walk resumes past damage this way).
func (c *cursor) Reset(start int64) {
	c.pos, c.err, c.done = start, nil, false
}

// Batch is the header decoded by the last successful Next (after a Next
// that returned false it holds what could be decoded of the damaged one).
func (c *cursor) Batch() *record.Batch { return &c.b }

// Position is where the next entry would start: after a scan ended, the end
// of the valid prefix (the broker's recovery cut point when Err is not nil).
func (c *cursor) Position() int64 {
	if c.done && c.err != nil {
		var ce *fileio.CorruptError
		if errors.As(c.err, &ce) && ce.Position >= 0 {
			return ce.Position
		}
	}
	return c.pos
}

// Err is nil when the scan ended exactly at the end of the file, else a
// *CorruptError (ErrTorn, ErrCorruptHeader, ErrFault) or a read error.
func (c *cursor) Err() error { return c.err }
