package inspect

import (
	"io"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// DefaultWindow is the read size of an EntryScanner: 256 KiB preads read
// as fast as 1 MiB ones here, and the window, with the page-cache pages it
// was copied from, still fits the core's L2 cache when the checksums read
// it back; verify measured faster with it (docs/performance.md).
const DefaultWindow = 256 << 10

// MaxEntryBytes is the largest entry EntryScanner.Entry hands out whole;
// larger entries (far above any broker's message.max.bytes) can still have
// their CRC checked by streaming (EntryScanner.CheckCRC), so a hostile
// length field never causes an allocation larger than this.
var MaxEntryBytes int64 = 256 << 20

// EntryScanner walks whole entries of a .log sequentially through one
// reusable window buffer: the reading path of verify, rebuild and dump-log.
// It follows the same stop rules as Scanner (FileLogInputStream.nextBatch)
// and parses headers in place; nothing is allocated per batch.
//
//	s := NewEntryScanner(f, f.Name, f.Size(), 0, DefaultWindow)
//	for s.Next() { b := s.Batch(); entry, err := s.Entry() ... }
//	err := s.Err()
type EntryScanner struct {
	w readWindow
	cursor
}

// NewEntryScanner scans r (size bytes, named name in errors) from start with
// a window of window bytes (DefaultWindow when <= 0).
func NewEntryScanner(r io.ReaderAt, name string, size, start int64, window int) *EntryScanner {
	if window <= 0 {
		window = DefaultWindow
	}
	return newEntryScannerIn(r, name, size, start, make([]byte, 0, window))
}

// newEntryScannerIn is NewEntryScanner reading through buf (its capacity
// is the window; len ignored): callers that scan many small files reuse
// one buffer instead of allocating a window per file.
func newEntryScannerIn(r io.ReaderAt, name string, size, start int64, buf []byte) *EntryScanner {
	return &EntryScanner{w: readWindow{r: r, name: name, end: size, buf: buf[:0]}, cursor: cursor{name: name, end: size, pos: start}}
}

// reset points s at another file, from start, keeping its window.
func (s *EntryScanner) reset(r io.ReaderAt, name string, size, start int64) {
	s.w.reset(r, name, size)
	s.name, s.end = name, size
	s.Reset(start)
}

// Next decodes the next entry's header; false at the end (see Err).
func (s *EntryScanner) Next() bool {
	n, ok := s.headerLen()
	if !ok {
		return false
	}
	hdr, err := s.w.bytes(s.pos, n)
	if err != nil {
		return s.fail(err)
	}
	return s.accept(hdr)
}

// Entry returns the whole current entry (len == Batch().Size), a view into
// the window valid until the next call to Next. Entries larger than
// MaxEntryBytes are refused with ErrTooLarge.
func (s *EntryScanner) Entry() ([]byte, error) {
	if s.b.Size > MaxEntryBytes {
		return nil, fileio.Corruptf(s.name, s.b.Position, fileio.ErrTooLarge, "batch of %d bytes is larger than %d", s.b.Size, MaxEntryBytes)
	}
	return s.w.bytes(s.b.Position, s.b.Size)
}

// CheckCRC computes the current entry's checksum, streaming it through the
// window when the entry is larger than the window, and reports whether it
// matches the stored CRC.
func (s *EntryScanner) CheckCRC() (computed uint32, ok bool, err error) {
	b := &s.b
	if b.Size <= int64(cap(s.w.buf)) {
		e, err := s.w.bytes(b.Position, b.Size)
		if err != nil {
			return 0, false, err
		}
		c := record.ComputeCRC(b.Magic, e)
		return c, c == b.CRC, nil
	}
	c, err := s.w.crc(b.Magic, b.Position+record.CRCStart(b.Magic), b.End())
	return c, err == nil && c == b.CRC, err
}
