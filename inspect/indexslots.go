package inspect

import (
	"io"

	"github.com/kseg/kseg/indexfmt"
)

// IndexSlots reads an index file's slots for indexfmt (it is the file
// side of indexfmt.SlotReader) through an io.ReaderAt: a File, mapped or
// read with pread. It holds the read policy the codecs leave out:
//
//   - Slots read in order (listings, verify's merge with the log, the
//     padding count) come from a chunk of the file's slots, read with one
//     ReadAt per seqChunkSlots slots instead of one per slot.
//   - Once a binary search has narrowed to fewer than searchChunkSlots
//     slots (Prefetch), they are copied with one read and the remaining
//     probes read the copy: the probes and their order are unchanged, but
//     the last levels' cache misses, each dependent on the one before,
//     become one sequential copy. A lookup so touches a few pages of a
//     large index, as the broker's does, never the whole file.
//   - A slot read out of order (the slot a search probes, the entry it
//     found) reads that slot only, into a buffer kept in the struct: a
//     slice of a local array handed to ReadAt (an interface method) would
//     escape and cost an allocation per probe.
//
// An IndexSlots is for one goroutine at a time; Reset points it at
// another file, keeping its buffers (a worker that checks segment after
// segment allocates them once).
type IndexSlots struct {
	r    io.ReaderAt
	size int64
	buf  [indexfmt.TxnEntrySize]byte // the largest slot

	chunk      []byte // whole slots [chunkFrom, chunkTo) of chunkWidth bytes
	chunkFrom  int
	chunkTo    int
	chunkWidth int
	next       int // the slot after the ones read last
}

// seqChunkSlots is how many slots an in-order read fetches at once
// (4 KiB of an offset index, 6 KiB of a time index).
const seqChunkSlots = 512

// searchChunkSlots is the range below which a binary search's remaining
// slots are read at once (Prefetch).
const searchChunkSlots = 64

// NewIndexSlots reads the slots of an index of size bytes through r.
func NewIndexSlots(r io.ReaderAt, size int64) *IndexSlots {
	return &IndexSlots{r: r, size: size}
}

// Reset points s at another file of size bytes, keeping the chunk's buffer
// but none of its contents, and returns s.
func (s *IndexSlots) Reset(r io.ReaderAt, size int64) *IndexSlots {
	s.r, s.size, s.chunk, s.chunkFrom, s.chunkTo, s.next = r, size, s.chunk[:0], 0, 0, 0
	return s
}

// Size is the file length given to NewIndexSlots or Reset.
func (s *IndexSlots) Size() int64 { return s.size }

// held returns the chunk's slots from lo up to hi, or nil when the chunk
// does not hold slot lo.
func (s *IndexSlots) held(lo, hi, width int) []byte {
	if width != s.chunkWidth || lo < s.chunkFrom || lo >= s.chunkTo {
		return nil
	}
	return s.chunk[(lo-s.chunkFrom)*width : (min(hi, s.chunkTo)-s.chunkFrom)*width]
}

// fill reads slots [lo, lo+n) into the chunk and reports whether it got
// slot lo whole. A short read (the end of the file) keeps the whole slots
// it got; a failed one leaves the chunk empty, so that the caller reads
// slot by slot and reports damage further on where it is.
func (s *IndexSlots) fill(lo, n, width int) bool {
	if c := seqChunkSlots * indexfmt.TimeEntrySize; cap(s.chunk) < c && n*width <= c {
		s.chunk = make([]byte, 0, c)
	} else if cap(s.chunk) < n*width {
		s.chunk = make([]byte, 0, n*width)
	}
	c := s.chunk[:n*width]
	got, _ := s.r.ReadAt(c, int64(lo)*int64(width))
	n = got / width
	s.chunk, s.chunkFrom, s.chunkTo, s.chunkWidth = c[:n*width], lo, lo+n, width
	return n > 0
}

// ReadSlots returns slots lo.. (hi excluded) of width bytes: from the
// chunk when it holds slot lo, else a new chunk when the reads go in
// order (slot lo follows the last read, or more than one slot is asked
// for), else slot lo alone.
func (s *IndexSlots) ReadSlots(lo, hi, width int) ([]byte, error) {
	if p := s.held(lo, hi, width); p != nil {
		s.next = min(hi, s.chunkTo)
		return p, nil
	}
	if (lo == s.next && lo > 0) || hi-lo > 1 {
		if s.fill(lo, seqChunkSlots, width) {
			s.next = min(hi, s.chunkTo)
			return s.held(lo, hi, width), nil
		}
	}
	p := s.buf[:width]
	if n, err := s.r.ReadAt(p, int64(lo)*int64(width)); n < len(p) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	s.next = lo + 1
	return p, nil
}

// Prefetch returns slots lo..hi once a binary search has narrowed to
// fewer than searchChunkSlots of them, from the chunk when it holds them,
// else read at once into it; nil before. A failed or short read leaves
// the chunk empty and returns nil: the probes then read slot by slot and
// report the error where it is.
func (s *IndexSlots) Prefetch(lo, hi, width int) []byte {
	if hi-lo >= searchChunkSlots || lo < 0 {
		return nil
	}
	if hi < s.chunkTo {
		if p := s.held(lo, hi+1, width); p != nil {
			return p
		}
	}
	if !s.fill(lo, hi-lo+1, width) || s.chunkTo <= hi {
		s.chunk, s.chunkTo = s.chunk[:0], s.chunkFrom
		return nil
	}
	return s.chunk
}
