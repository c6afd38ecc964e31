package inspect

import (
	"errors"
	"io"
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
	r    io.ReaderAt
	name string
	end  int64
	pos  int64
	hdr  [HeaderReadSize]byte
	b    Batch
	err  error
	done bool
}

// NewScanner scans r (a .log of length size, named name in errors) from
// byte position start.
func NewScanner(r io.ReaderAt, name string, size, start int64) *Scanner {
	return &Scanner{r: r, name: name, end: size, pos: start}
}

// Reset restarts the scanner at position start, keeping its buffer.
func (s *Scanner) Reset(start int64) {
	s.pos, s.err, s.done = start, nil, false
}

// Next decodes the next entry's header. It returns false at the end of the
// valid entries; Err then says why.
func (s *Scanner) Next() bool {
	if s.done {
		return false
	}
	left := s.end - s.pos
	if left < HeaderSizeUpToMagic+1 {
		s.done = true
		if left > 0 {
			s.err = corruptf(s.name, s.pos, ErrTorn, "%d bytes after the last batch, too few for a batch header", left)
		}
		return false
	}
	n := int64(HeaderReadSize)
	if left < n {
		n = left
	}
	p := s.hdr[:n]
	if k, err := s.r.ReadAt(p, s.pos); int64(k) < n {
		s.done = true
		s.err = readErr(s.name, s.pos, err)
		return false
	}
	b, err := ParseBatch(p, s.pos, s.name)
	if err != nil {
		s.done, s.err = true, err
		return false
	}
	if b.Size > left {
		s.done = true
		s.err = corruptf(s.name, s.pos, ErrTorn, "batch of %d bytes runs past the end of the file (%d bytes left)", b.Size, left)
		return false
	}
	s.b = b
	s.pos += b.Size
	return true
}

// Batch is the header decoded by the last successful Next.
func (s *Scanner) Batch() *Batch { return &s.b }

// Position is where the next entry would start: after a scan ended, the end
// of the valid prefix (the broker's recovery cut point when Err is not nil).
func (s *Scanner) Position() int64 {
	if s.done && s.err != nil {
		var ce *CorruptError
		if errors.As(s.err, &ce) && ce.Position >= 0 {
			return ce.Position
		}
	}
	return s.pos
}

// Err is nil when the scan ended exactly at the end of the file, else a
// *CorruptError (ErrTorn, ErrCorruptHeader, ErrFault) or a read error.
func (s *Scanner) Err() error { return s.err }

func readErr(name string, pos int64, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &CorruptError{File: name, Position: pos, Offset: -1, Err: err}
}
