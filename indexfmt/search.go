package indexfmt

import "encoding/binary"

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

// key reads the search key of slot n on its own.
func (s slots) key(n int, k key) (int64, error) {
	p, err := s.read(n, n, n)
	if err != nil {
		return 0, err
	}
	return k.decode(p), nil
}

// decode reads the key out of the slot that starts p.
func (k key) decode(p []byte) int64 {
	p = p[k.off:]
	if k.width == 4 {
		return k.base + int64(int32(binary.BigEndian.Uint32(p)))
	}
	return int64(binary.BigEndian.Uint64(p))
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
// bsearch probes the upper middle and returns at once on equality. Each
// read tells the reader the range the search has narrowed to, and the
// probes read the slots it handed over until they leave them: an index in
// memory hands over the whole range at once, a file's reader (kseg's
// fileio.IndexSlots) the last levels' slots in one read. The probes and
// their order are the broker's whatever the reader does. trace, when not
// nil, receives every probe.
func (s slots) search(entries int, k key, target int64, mode Mode, trace func(Probe)) (int, error) {
	if entries <= 0 {
		return -1, nil
	}
	warmEntries := warmBytes / s.width
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

func (s slots) bsearch(lo, hi, entries int, k key, target int64, mode Mode, phase Phase, trace func(Probe)) (int, error) {
	var (
		held     []byte // slots from heldFrom on, as the reader handed them over
		heldFrom int
	)
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		p := s.at(held, heldFrom, mid)
		if p == nil {
			var err error
			if held, heldFrom, err = s.r.ReadSlots(mid, lo, hi, s.width); err != nil {
				return -1, s.readErr(mid, err)
			}
			if p = s.at(held, heldFrom, mid); p == nil {
				return -1, s.readErr(mid, nil)
			}
		}
		v := k.decode(p)
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
