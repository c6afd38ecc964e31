package fileio

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
//     slots, they are copied with one read and the remaining probes read
//     the copy: the probes and their order are unchanged, but the last
//     levels' cache misses, each dependent on the one before, become one
//     sequential copy. A lookup so touches a few pages of a large index,
//     as the broker's does, never the whole file.
//   - A slot read out of order (the slot a search probes above those
//     levels, the entry it found) reads that slot only, into a buffer
//     kept in the struct: a slice of a local array handed to ReadAt (an
//     interface method) would escape and cost an allocation per probe.
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
// slots are read at once.
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

// ReadSlots returns slot n: with the chunk when it holds it; else with
// slots lo..hi read into the chunk at once when they are fewer than
// searchChunkSlots (a search's last levels, or the last slots of the
// file), or with the next seqChunkSlots slots (at most to hi) when the
// reads go in order (n follows the slots read last); else alone. A chunk read that fails or comes short of n (the
// end of the file, a fault) falls back to reading slot n alone, so that
// damage is reported at the slot where it is.
func (s *IndexSlots) ReadSlots(n, lo, hi, width int) ([]byte, int, error) {
	if !s.holds(n, width) {
		switch {
		case lo < hi && hi-lo < searchChunkSlots:
			s.fill(lo, hi-lo+1, width)
		case n == s.next && n > 0:
			s.fill(n, min(seqChunkSlots, hi-n+1), width)
		}
	}
	if s.holds(n, width) {
		s.next = s.chunkTo
		return s.chunk, s.chunkFrom, nil
	}
	p := s.buf[:width]
	if k, err := s.r.ReadAt(p, int64(n)*int64(width)); k < len(p) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, 0, err
	}
	s.next = n + 1
	return p, n, nil
}

// holds says whether the chunk holds slot n of width bytes.
func (s *IndexSlots) holds(n, width int) bool {
	return width == s.chunkWidth && n >= s.chunkFrom && n < s.chunkTo
}

// fill reads slots [lo, lo+n) into the chunk. A short read (the end of the
// file) keeps the whole slots it got; a failed one leaves the chunk empty.
func (s *IndexSlots) fill(lo, n, width int) {
	if c := seqChunkSlots * indexfmt.TimeEntrySize; cap(s.chunk) < c && n*width <= c {
		s.chunk = make([]byte, 0, c)
	} else if cap(s.chunk) < n*width {
		s.chunk = make([]byte, 0, n*width)
	}
	c := s.chunk[:n*width]
	got, _ := s.r.ReadAt(c, int64(lo)*int64(width))
	n = got / width
	s.chunk, s.chunkFrom, s.chunkTo, s.chunkWidth = c[:n*width], lo, lo+n, width
}
