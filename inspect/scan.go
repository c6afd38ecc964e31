package inspect

import (
	"errors"
	"io"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// Scanner walks the entries of a .log from a start position, reading only
// their headers (HeaderReadSize bytes each) into a buffer it owns, the way
// the broker's FileLogInputStream.nextBatch does for lookups:
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
//
//	s := NewScanner(f, f.Name, f.Size(), pos)
//	for s.Next() { b := s.Batch() ... }
//	if err := s.Err(); err != nil { ... }
type Scanner struct {
	r   io.ReaderAt
	hdr [record.HeaderReadSize]byte
	cursor
}

// NewScanner scans r (a .log of length size, named name in errors) from
// byte position start.
func NewScanner(r io.ReaderAt, name string, size, start int64) *Scanner {
	return &Scanner{r: r, cursor: cursor{name: name, end: size, pos: start}}
}

// Next decodes the next entry's header. It returns false at the end of the
// valid entries; Err then says why.
func (s *Scanner) Next() bool {
	n, ok := s.headerLen()
	if !ok {
		return false
	}
	p := s.hdr[:n]
	if k, err := s.r.ReadAt(p, s.pos); int64(k) < n {
		return s.fail(fileio.ReadError(s.name, s.pos, err))
	}
	return s.accept(p)
}

// cursor is the position and outcome both scanners keep, and the broker's
// stop rules that move it (FileLogInputStream.nextBatch); the scanners only
// differ in where the header bytes come from.
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
