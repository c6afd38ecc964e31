package scan

import (
	"errors"
	"io"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// DefaultWindow is the read size of a whole-entry scan: 256 KiB preads
// read as fast as 1 MiB ones, and the window still fits a core's L2 cache
// when the checksums read it back (docs/performance.md).
const DefaultWindow = 256 << 10

// MaxEntryBytes is the largest entry Entry hands out whole; larger entries
// (far above any broker's message.max.bytes) can still have their CRC
// checked by streaming (CheckCRC), so a hostile length field never causes
// an allocation larger than this.
const MaxEntryBytes int64 = 256 << 20

// Scanner walks the entries of a .log from a start position with the
// broker's stop rules (cursor), parsing headers in place; nothing is
// allocated per batch. It is the engine of inspect.LogIterator. It reads
// the header bytes one of two ways:
//
//   - through its window (whole entries, sequentially);
//   - headers only: one pread of HeaderReadSize bytes (fewer at the end of
//     the file) at each entry's position, the bytes the broker's
//     FileLogInputStream.nextBatch reads for
//     FileRecords.searchForOffsetWithSize and searchForTimestamp; after an
//     entry of at most SmallEntryBytes, the headers that follow it are read
//     HeaderGroupBytes at a time instead (small batches' headers share
//     pages).
type Scanner struct {
	w       readWindow
	headers bool
	hdr     [record.HeaderReadSize]byte
	group   []byte // headers only: the file bytes [groupAt, groupAt+len(group))
	groupAt int64
	cursor
}

// HeaderGroupBytes is the read size of headers-only reading after a small
// entry; SmallEntryBytes is the largest entry that makes the next read
// one (so a group holds at least four headers).
const (
	HeaderGroupBytes = 4 << 10
	SmallEntryBytes  = HeaderGroupBytes / 4
)

// SetHeaders switches headers-only reading on or off.
func (s *Scanner) SetHeaders(on bool) { s.headers = on }

// Headers reports whether s reads headers only.
func (s *Scanner) Headers() bool { return s.headers }

// SetBuffer makes buf (its capacity the read size) the window's buffer.
func (s *Scanner) SetBuffer(buf []byte) { s.w.buf = buf[:0] }

// EnsureWindow allocates the window, once, of size bytes (DefaultWindow
// when size <= 0), unless it has a buffer already.
func (s *Scanner) EnsureWindow(size int) {
	if cap(s.w.buf) == 0 {
		if size <= 0 {
			size = DefaultWindow
		}
		s.w.buf = make([]byte, 0, size)
	}
}

// MinAheadWindow is the smallest window a read-ahead is used with: a chunk
// must hold a page's alignment and then at least a header.
const MinAheadWindow = 64 << 10

// UseReadAhead turns the read-ahead of the window on or off before the
// next Open: on, it is made (once) when at least minLeft bytes are left
// to read and the window is at least MinAheadWindow bytes; off, a running
// one is stopped and the window reads into its own buffer again.
func (s *Scanner) UseReadAhead(on bool, left, minLeft int64) {
	w := &s.w
	switch {
	case !on && w.ahead != nil:
		w.ahead.stop()
		w.ahead, w.buf = nil, w.own[:0]
	case on && w.ahead == nil && left >= minLeft && cap(w.buf) >= MinAheadWindow:
		w.own, w.ahead = w.buf, newReadAhead(cap(w.buf), minLeft)
	}
}

// StopReadAhead stops the read-ahead's goroutine, if there is one.
func (s *Scanner) StopReadAhead() {
	if a := s.w.ahead; a != nil {
		a.stop()
	}
}

// ReadAheadSums is how many checksums the read-ahead handed out to the
// scan since it was made (tests).
func (s *Scanner) ReadAheadSums() int64 {
	if a := s.w.ahead; a != nil {
		return a.sums
	}
	return 0
}

// Open points s at another file of size bytes (named name in errors),
// from start, keeping its buffers.
func (s *Scanner) Open(r io.ReaderAt, name string, size, start int64) {
	s.w.reset(r, name, size)
	s.name, s.end = name, size
	s.group = s.group[:0]
	s.Reset(start)
}

// End is the size of the file being scanned.
func (s *Scanner) End() int64 { return s.end }

// HeaderAt returns the header bytes of an entry at pos (up to
// HeaderReadSize, fewer at the end of the file), as Next reads them.
func (s *Scanner) HeaderAt(pos int64) ([]byte, error) {
	return s.header(pos, min(int64(record.HeaderReadSize), s.end-pos))
}

// ZeroFrom reports whether the file bytes from pos to its end are all zero.
func (s *Scanner) ZeroFrom(pos int64) (bool, error) {
	s.EnsureWindow(0)
	for at := pos; at < s.end; {
		n := min(int64(max(cap(s.w.buf), record.HeaderReadSize)), s.end-at)
		p, err := s.w.bytes(at, n)
		if err != nil {
			return false, err
		}
		if firstNonZero(p, 0) < len(p) {
			return false, nil
		}
		at += n
	}
	return true, nil
}

// Next decodes the next entry's header; false at the end (see Err).
func (s *Scanner) Next() bool {
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
func (s *Scanner) header(pos, n int64) ([]byte, error) {
	if !s.headers {
		return s.w.bytes(pos, n)
	}
	if off := pos - s.groupAt; off >= 0 && off+n <= int64(len(s.group)) {
		return s.group[off : off+n], nil
	}
	if prev := &s.b; prev.Size > 0 && prev.Size <= SmallEntryBytes && prev.Position+prev.Size == pos {
		if s.group == nil {
			s.group = make([]byte, 0, HeaderGroupBytes)
		}
		g := s.group[:min(HeaderGroupBytes, s.end-pos)]
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
func (s *Scanner) Entry() ([]byte, error) {
	if s.b.Size > MaxEntryBytes {
		return nil, fileio.Corruptf(s.name, s.b.Position, fileio.ErrTooLarge, "batch of %d bytes is larger than %d", s.b.Size, MaxEntryBytes)
	}
	return s.w.bytes(s.b.Position, s.b.Size)
}

// CheckCRC computes the current entry's checksum, streaming it through the
// window when the entry is larger than the window, and reports whether it
// matches the stored CRC.
func (s *Scanner) CheckCRC() (computed uint32, ok bool, err error) {
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
func (s *Scanner) aheadSum() (uint32, bool) {
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

// WindowSize is the window's read size (its buffer grows for an entry
// larger than it).
func (s *Scanner) WindowSize() int { return cap(s.w.buf) }
