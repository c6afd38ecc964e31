package indexfmt

import (
	"fmt"
	"io"
)

// SlotReader is where an index's bytes come from: an index file is an
// array of fixed-size slots, and the codecs here ask for slots and never
// for how they are fetched. The bytes constructors (NewOffsetIndex,
// NewTimeIndex, NewTxnIndex) read slots straight out of a slice; a file is
// read through a SlotReader the file-access layer implements (kseg's
// fileio.IndexSlots: chunked in-order reads, a prefetch of the last levels
// of a binary search), given to NewOffsetIndexFrom, NewTimeIndexFrom or
// NewTxnIndexFrom. The pair follows debug/elf's NewFile(io.ReaderAt) and
// Open(name).
type SlotReader interface {
	// Size is the length of the file in bytes, fixed for the reader's life.
	Size() int64
	// ReadSlots returns whole slots of width bytes, the first of them
	// slot first, that hold slot n. lo <= n <= hi say which slots the
	// caller reads next: a binary search's remaining range, or the rest
	// of the file for reads in order. How many slots come back around n is
	// the reader's choice (an index in memory hands over all of lo..hi,
	// a file's reader what its read policy fetched); the bytes stay valid
	// until the next call. The codecs ask only for slots that lie wholly
	// inside Size; an error is returned as it is (the codec names the
	// slot).
	ReadSlots(n, lo, hi, width int) (p []byte, first int, err error)
}

// SlotsInMemory is the SlotReader of an index held in memory (what the
// bytes constructors read through), for callers that need a SlotReader
// whichever way they hold the index.
func SlotsInMemory(b []byte) SlotReader { return byteSlots(b) }

// byteSlots is the SlotReader of an index held in memory: one call hands
// over every slot of lo..hi.
type byteSlots []byte

func (b byteSlots) Size() int64 { return int64(len(b)) }

func (b byteSlots) ReadSlots(n, lo, hi, width int) ([]byte, int, error) {
	end := min(hi+1, len(b)/width)
	if lo < 0 || n < lo || n >= end {
		return nil, 0, io.ErrUnexpectedEOF
	}
	return b[lo*width : end*width], lo, nil
}

// slots reads an index's slots of one width through a SlotReader.
type slots struct {
	r     SlotReader
	width int
}

// at returns slot n out of p, whose first slot is first, or nil when p
// does not hold it.
func (s slots) at(p []byte, first, n int) []byte {
	off := (n - first) * s.width
	if n < first || off+s.width > len(p) {
		return nil
	}
	return p[off : off+s.width]
}

// read returns slot n, telling the reader that the next reads fall in
// lo..hi.
func (s slots) read(n, lo, hi int) ([]byte, error) {
	p, first, err := s.r.ReadSlots(n, lo, hi, s.width)
	if err == nil {
		if q := s.at(p, first, n); q != nil {
			return q, nil
		}
	}
	return nil, s.readErr(n, err)
}

// slot reads slot n whole, for an entry read in order or on its own, of a
// file whose last slot is last.
func (s slots) slot(n, last int) ([]byte, error) { return s.read(n, n, last) }

// readErr names the slot a read failed at; a reader that handed over
// bytes without slot n gave a short read, io.ErrUnexpectedEOF.
func (s slots) readErr(n int, err error) error {
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("slot %d at byte %d: %w", n, int64(n)*int64(s.width), err)
}
