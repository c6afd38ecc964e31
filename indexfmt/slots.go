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
// inspect.IndexSlots: chunked in-order reads, a prefetch of the last levels
// of a binary search), given to NewOffsetIndexFrom, NewTimeIndexFrom or
// NewTxnIndexFrom. The pair follows debug/elf's NewFile(io.ReaderAt) and
// Open(name).
type SlotReader interface {
	// Size is the length of the file in bytes, fixed for the reader's life.
	Size() int64
	// ReadSlots returns the bytes of slots lo, lo+1, ... (hi excluded) of
	// width bytes each: at least slot lo, and as many of the following
	// whole slots as the reader has at hand. The bytes stay valid until
	// the next call. The codecs ask only for slots that lie wholly inside
	// Size; an error is returned as it is (the codec names the slot).
	ReadSlots(lo, hi, width int) ([]byte, error)
	// Prefetch says that the next reads fall among slots lo..hi (both
	// included) of width bytes, the range a binary search has narrowed
	// to, and returns their bytes when the reader has them at hand (or
	// chooses to fetch them now), else nil. The bytes stay valid until
	// the next call.
	Prefetch(lo, hi, width int) []byte
}

// byteSlots is the SlotReader of an index held in memory.
type byteSlots []byte

func (b byteSlots) Size() int64 { return int64(len(b)) }

func (b byteSlots) ReadSlots(lo, hi, width int) ([]byte, error) {
	end := min(hi, len(b)/width) * width
	if lo < 0 || lo*width >= end {
		return nil, io.ErrUnexpectedEOF
	}
	return b[lo*width : end : end], nil
}

func (b byteSlots) Prefetch(lo, hi, width int) []byte {
	if lo < 0 || (hi+1)*width > len(b) {
		return nil
	}
	return b[lo*width : (hi+1)*width]
}

// slots reads an index's slots of one width through a SlotReader.
type slots struct {
	r     SlotReader
	width int
}

// slot reads slot n whole. (Small enough to be inlined into the search's
// probes; the error is built out of line.)
func (s slots) slot(n int) ([]byte, error) {
	p, err := s.r.ReadSlots(n, n+1, s.width)
	if err != nil || len(p) < s.width {
		return nil, s.readErr(n, err)
	}
	return p[:s.width], nil
}

// readErr names the slot a read failed at; a short read with no error is
// io.ErrUnexpectedEOF.
func (s slots) readErr(n int, err error) error {
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("slot %d at byte %d: %w", n, int64(n)*int64(s.width), err)
}
