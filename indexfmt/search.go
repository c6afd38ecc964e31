package indexfmt

import (
	"encoding/binary"
	"fmt"
	"io"
)

// warmBytes is the size of the "warm" tail of an index that the broker
// searches first: the last 8192 bytes, two 4 KiB pages that recent lookups
// (consumers at the head, followers) keep in the page cache.
// broker: AbstractIndex.warmEntries.
const warmBytes = 8192

// Mode chooses which bound the search returns.
type Mode int

const (
	// LargestLowerBound: the largest slot whose key is <= target, or -1.
	LargestLowerBound Mode = iota
	// SmallestUpperBound: the smallest slot whose key is >= target, or -1.
	SmallestUpperBound
)

// Phase names the part of the broker's search a probe belongs to.
type Phase string

const (
	PhaseWarmCheck  Phase = "warm-check"  // entry[firstHot] < target? decides warm vs cold
	PhaseFirstCheck Phase = "first-check" // entry[0] > target? target below the first entry
	PhaseWarm       Phase = "warm"        // binary search inside the warm section
	PhaseCold       Phase = "cold"        // binary search inside the cold section
)

// Probe is one comparison the broker's binary search makes: the slot read,
// its key, and the sign of compare(key, target).
type Probe struct {
	Phase Phase
	Slot  int
	Key   int64
	Cmp   int
}

// key says where a search key lives inside an entry: at byte off, 4 or 8
// bytes wide; 4-byte keys are relative offsets and get base added.
type key struct {
	off   int64
	width int
	base  int64
}

// slotReader reads fixed-size slots, or the search key inside them, through
// an io.ReaderAt.
//
// buf is scratch space kept in the struct rather than on the stack: a slice
// of a local array handed to an interface method (ReadAt) escapes, which
// would cost an allocation per probe. The price is that an index value must
// not be used by several goroutines at once.
//
// Slots read in order (listings, verify's merge with the log) come from
// chunk, which holds the file's slots from chunkFrom on, read with one
// ReadAt per seqChunkSlots slots instead of one per slot. A slot read out
// of order (the entry a search found) reads only that slot.
type slotReader struct {
	r         io.ReaderAt
	entrySize int64
	buf       [TimeEntrySize]byte // the largest of the two slot sizes

	chunk     []byte // whole slots [chunkFrom, chunkFrom+len(chunk)/entrySize)
	chunkFrom int
	next      int // the slot after the one slot() read last
}

// reset points s at another file, keeping the chunk's buffer but none of
// its contents.
func (s *slotReader) reset(r io.ReaderAt, entrySize int64) {
	s.r, s.entrySize, s.chunk, s.chunkFrom, s.next = r, entrySize, s.chunk[:0], 0, 0
}

// seqChunkSlots is how many slots a sequential read fetches at once
// (4 KiB of an offset index, 6 KiB of a time index).
const seqChunkSlots = 512

// key reads the search key of a slot.
func (s *slotReader) key(slot int, k key) (int64, error) {
	var p []byte
	if i := int64(slot - s.chunkFrom); slot >= s.chunkFrom && (i+1)*s.entrySize <= int64(len(s.chunk)) {
		p = s.chunk[i*s.entrySize+k.off : i*s.entrySize+k.off+int64(k.width)]
	} else {
		p = s.buf[:k.width]
		at := int64(slot)*s.entrySize + k.off
		if n, err := s.r.ReadAt(p, at); n < len(p) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("slot %d at byte %d: %w", slot, at, err)
		}
	}
	if k.width == 4 {
		return k.base + int64(int32(binary.BigEndian.Uint32(p))), nil
	}
	return int64(binary.BigEndian.Uint64(p)), nil
}

// slot reads a whole slot into the scratch buffer; the result is valid until
// the next read through s.
func (s *slotReader) slot(n int) ([]byte, error) {
	sequential := n == s.next && n > 0
	s.next = n + 1
	if k := int64(n - s.chunkFrom); n >= s.chunkFrom && (k+1)*s.entrySize <= int64(len(s.chunk)) {
		return s.chunk[k*s.entrySize : (k+1)*s.entrySize], nil
	}
	at := int64(n) * s.entrySize
	if sequential {
		if cap(s.chunk) == 0 {
			s.chunk = make([]byte, seqChunkSlots*s.entrySize)
		}
		// A short read (the end of the file) keeps the whole slots it got;
		// a failed one falls back to reading the one slot, so that damage
		// further on is reported where it is.
		c := s.chunk[:cap(s.chunk)]
		got, _ := s.r.ReadAt(c, at)
		if whole := int64(got) / s.entrySize * s.entrySize; whole > 0 {
			s.chunk, s.chunkFrom = c[:whole], n
			return s.chunk[:s.entrySize], nil
		}
		s.chunk = s.chunk[:0]
	}
	p := s.buf[:s.entrySize]
	if err := readFull(s.r, p, at); err != nil {
		return nil, fmt.Errorf("slot %d at byte %d: %w", n, at, err)
	}
	return p, nil
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// search is the broker's AbstractIndex.indexSlotRangeFor + binarySearch,
// literally, so that on a corrupt (non-monotonic) index it makes the same
// probes and gives the same answer as a broker:
//
//	if entries == 0: -1
//	firstHot = max(0, entries - 1 - warmEntries)
//	if entry[firstHot] < target: bsearch(firstHot, entries-1)   (warm)
//	if entry[0] > target: -1 (LargestLowerBound) or 0
//	bsearch(0, firstHot)                                        (cold)
//
// bsearch probes the upper middle and returns at once on equality.
// trace, when not nil, receives every probe.
func (s *slotReader) search(entries int, k key, target int64, mode Mode, trace func(Probe)) (int, error) {
	if entries <= 0 {
		return -1, nil
	}
	warmEntries := int(warmBytes / s.entrySize)
	firstHot := max(0, entries-1-warmEntries)

	v, err := s.key(firstHot, k)
	if err != nil {
		return -1, err
	}
	c := cmp64(v, target)
	if trace != nil {
		trace(Probe{PhaseWarmCheck, firstHot, v, c})
	}
	if c < 0 {
		return s.bsearch(firstHot, entries-1, entries, k, target, mode, PhaseWarm, trace)
	}
	v, err = s.key(0, k)
	if err != nil {
		return -1, err
	}
	c = cmp64(v, target)
	if trace != nil {
		trace(Probe{PhaseFirstCheck, 0, v, c})
	}
	if c > 0 {
		if mode == LargestLowerBound {
			return -1, nil
		}
		return 0, nil
	}
	return s.bsearch(0, firstHot, entries, k, target, mode, PhaseCold, trace)
}

func (s *slotReader) bsearch(lo, hi, entries int, k key, target int64, mode Mode, phase Phase, trace func(Probe)) (int, error) {
	for lo < hi {
		if hi-lo < searchChunkSlots {
			s.load(lo, hi)
		}
		mid := int(uint(lo+hi+1) >> 1)
		v, err := s.key(mid, k)
		if err != nil {
			return -1, err
		}
		c := cmp64(v, target)
		if trace != nil {
			trace(Probe{phase, mid, v, c})
		}
		switch {
		case c > 0:
			hi = mid - 1
		case c < 0:
			lo = mid
		default:
			return mid, nil
		}
	}
	if mode == LargestLowerBound {
		return lo, nil
	}
	if lo == entries-1 {
		return -1, nil
	}
	return lo + 1, nil
}

// searchChunkSlots: once a binary search has narrowed to fewer slots than
// this, load copies them all with one read and the remaining probes read
// the copy. The probes and their order are unchanged; what changes is that
// the last levels' cache misses, each one dependent on the one before,
// become one sequential copy.
const searchChunkSlots = 64

// load makes the chunk hold slots [lo, hi] unless it already does. A failed
// read leaves the chunk empty: the probes then read slot by slot and report
// the error where it is.
func (s *slotReader) load(lo, hi int) {
	if lo >= s.chunkFrom && int64(hi-s.chunkFrom+1)*s.entrySize <= int64(len(s.chunk)) {
		return
	}
	if cap(s.chunk) == 0 {
		s.chunk = make([]byte, seqChunkSlots*s.entrySize)
	}
	c := s.chunk[:int64(hi-lo+1)*s.entrySize]
	if n, _ := s.r.ReadAt(c, int64(lo)*s.entrySize); n < len(c) {
		s.chunk = s.chunk[:0]
		return
	}
	s.chunk, s.chunkFrom = c, lo
}
