package indexfmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// OffsetEntry is one offset-index slot: the batch whose last offset is
// Offset starts at byte Position of the .log (broker: OffsetPosition).
type OffsetEntry struct {
	Offset         int64 // absolute: base offset + relative offset
	RelativeOffset int32
	Position       int32
}

// OffsetIndex reads a .index file: 8-byte slots, no header, no checksum.
//
//	0 i32 relative offset    4 i32 position
//
// Like the broker (AbstractIndex constructor) it counts floor(size/8) slots
// without looking at their content; ValidEntries counts them the way
// DumpLogSegments does, stopping at zero padding.
//
// An OffsetIndex holds no state of its own besides its reader: over bytes
// it may be shared between goroutines; over a file it is for one goroutine
// at a time if its SlotReader is (fileio.IndexSlots is).
type OffsetIndex struct {
	BaseOffset int64
	size       int64
	s          slots
}

// NewOffsetIndex reads the index of the segment with the given base offset
// from b, an index held in memory (a rebuilt index, a test's bytes).
func NewOffsetIndex(b []byte, baseOffset int64) *OffsetIndex {
	return NewOffsetIndexFrom(byteSlots(b), baseOffset)
}

// NewOffsetIndexFrom reads the index of the segment with the given base
// offset through r (a file: see SlotReader). A negative size is taken as 0.
func NewOffsetIndexFrom(r SlotReader, baseOffset int64) *OffsetIndex {
	return &OffsetIndex{BaseOffset: baseOffset, size: max(r.Size(), 0), s: slots{r, OffsetEntrySize}}
}

// Size is the file length.
func (x *OffsetIndex) Size() int64 { return x.size }

// Slots is the broker's entry count: floor(size / 8), padding included.
func (x *OffsetIndex) Slots() int { return int(x.size / OffsetEntrySize) }

// TrailingBytes is size % 8: bytes after the last whole slot, which the
// broker ignores for lookups and its sanity check rejects.
func (x *OffsetIndex) TrailingBytes() int { return int(x.size % OffsetEntrySize) }

// Entry reads slot n (broker: OffsetIndex.entry, which rejects n >= entries).
func (x *OffsetIndex) Entry(n int) (OffsetEntry, error) {
	if n < 0 || n >= x.Slots() {
		return OffsetEntry{}, fmt.Errorf("offset index slot %d out of range [0, %d)", n, x.Slots())
	}
	b, err := x.s.slot(n, x.Slots()-1)
	if err != nil {
		return OffsetEntry{}, fmt.Errorf("offset index %w", err)
	}
	return decodeOffsetEntry(b, x.BaseOffset), nil
}

// LastEntry is the broker's OffsetIndex.lastEntry (whose offset is
// lastOffset): the last slot, padding included, or (base offset, position 0)
// when there is none.
func (x *OffsetIndex) LastEntry() (OffsetEntry, error) {
	if n := x.Slots(); n > 0 {
		return x.Entry(n - 1)
	}
	return OffsetEntry{Offset: x.BaseOffset}, nil
}

func decodeOffsetEntry(b []byte, base int64) OffsetEntry {
	rel := int32(binary.BigEndian.Uint32(b))
	return OffsetEntry{Offset: base + int64(rel), RelativeOffset: rel, Position: int32(binary.BigEndian.Uint32(b[4:]))}
}

// ValidEntries counts the slots a broker actually wrote: those before the
// first slot i > 0 whose relative offset is 0. Real entries strictly
// increase, so only slot 0 may hold relative offset 0; a later one starts
// the zero-filled, preallocated tail an unclean shutdown leaves.
// broker: DumpLogSegments.dumpIndex ("entry.offset == index.baseOffset && i > 0").
//
// Slot 0 is never taken for padding: a non-empty file of zeros has one valid
// entry, (base offset, position 0), which DumpLogSegments checks against the
// log and prints before it stops at slot 1. An empty file (or one shorter
// than a slot) has none; DumpLogSegments says "is empty".
func (x *OffsetIndex) ValidEntries() (int, error) {
	return validEntries(x.s, x.Slots(), 0)
}

// EntriesBeforePadding is the entry count of a broker that wrote the file
// and still holds it (AbstractIndex._entries, which never counts the
// zero-filled preallocated tail), which is also what recovery would leave:
// when the last slot is padding (a slot i > 0 whose relative offset is 0),
// the count is ValidEntries, dump-index's padding rule; otherwise every
// slot counts. Only the last slot is read unless the file is padded.
func (x *OffsetIndex) EntriesBeforePadding() (int, error) {
	return entriesBeforePadding(x.s, x.Slots(), 0, x.ValidEntries)
}

// entriesBeforePadding reads the last of slots and, when it is padding
// (its 4-byte relative offset at relOff is 0), counts the entries with
// valid.
func entriesBeforePadding(s slots, slots int, relOff int64, valid func() (int, error)) (int, error) {
	if slots <= 1 {
		return slots, nil
	}
	rel, err := s.key(slots-1, key{off: relOff, width: 4})
	if err != nil {
		return 0, err
	}
	if rel != 0 {
		return slots, nil
	}
	return valid()
}

// Lookup is the broker's OffsetIndex.lookup: the entry in the largest slot
// whose offset is <= target; when there is none (empty index, or target
// below the first entry) the answer is (base offset, position 0) and slot
// is -1. Every slot counts, padding included, as it does for a broker that
// loads the file without recovering it.
func (x *OffsetIndex) Lookup(target int64, trace func(Probe)) (e OffsetEntry, slot int, err error) {
	return x.LookupEntries(target, x.Slots(), trace)
}

// LookupEntries is Lookup over the first entries slots only, as a broker
// whose entry count is entries searches the file (EntriesBeforePadding).
func (x *OffsetIndex) LookupEntries(target int64, entries int, trace func(Probe)) (e OffsetEntry, slot int, err error) {
	slot, err = x.s.search(min(entries, x.Slots()), key{off: 0, width: 4, base: x.BaseOffset}, target, LargestLowerBound, trace)
	if err != nil || slot < 0 {
		return OffsetEntry{Offset: x.BaseOffset}, -1, err
	}
	e, err = x.Entry(slot)
	if err != nil {
		return OffsetEntry{Offset: x.BaseOffset}, -1, err
	}
	return e, slot, nil
}

// UpperBoundByPosition is the broker's OffsetIndex.fetchUpperBoundOffset
// search: the smallest slot whose position is >= position, or -1.
//
// Broker quirk, kept: the search never probes slot 0 for equality once it
// knows slot 0 is not above the target, so when slot 0's position equals
// the target the answer is slot 1 (or -1 with a single slot), not slot 0.
// The broker only asks for start position + fetch size, which lies past
// slot 0 in practice.
func (x *OffsetIndex) UpperBoundByPosition(position int64, trace func(Probe)) (int, error) {
	return x.s.search(x.Slots(), key{off: 4, width: 4}, position, SmallestUpperBound, trace)
}

// ErrCorruptIndex is returned by the sanity checks (broker: CorruptIndexException).
var ErrCorruptIndex = errors.New("corrupt index")

// SanityCheck is the broker's OffsetIndex.sanityCheck (run today only by
// DumpLogSegments --index-sanity-check): the last slot's offset must not be
// below the base offset, and the size must be a multiple of 8, checked in
// that order. Padding passes (its offset is the base offset); only a
// negative relative offset in the last slot fails the first test.
func (x *OffsetIndex) SanityCheck() error {
	if n := x.Slots(); n > 0 {
		last, err := x.Entry(n - 1)
		if err != nil {
			return err
		}
		if last.Offset < x.BaseOffset {
			return fmt.Errorf("%w: non-zero size but the last offset is %d which is less than the base offset %d", ErrCorruptIndex, last.Offset, x.BaseOffset)
		}
	}
	if x.TrailingBytes() != 0 {
		return fmt.Errorf("%w: found %d bytes which is neither positive nor a multiple of %d", ErrCorruptIndex, x.size, OffsetEntrySize)
	}
	return nil
}

// validEntries reads the first n slots in order, as many at a time as the
// reader has at hand, for the first slot i > 0 whose relative offset (4
// bytes at relOff) is 0.
func validEntries(s slots, n int, relOff int) (int, error) {
	for i := 0; i < n; {
		p, first, err := s.r.ReadSlots(i, i, n-1, s.width)
		if err != nil || s.at(p, first, i) == nil {
			return 0, s.readErr(i, err)
		}
		w := s.width
		p = p[(i-first)*w:]
		got := min(len(p)/w, n-i)
		// Each slot's relative offset, stepping through p by whole slots
		// (the loop the profile of a 10 MiB index is made of: no
		// multiplication or re-slicing per slot).
		j := 0
		if i == 0 {
			j = 1 // slot 0 is valid whatever its relative offset
		}
		for at := j*w + relOff; j < got; j, at = j+1, at+w {
			if binary.BigEndian.Uint32(p[at:at+4]) == 0 {
				return i + j, nil
			}
		}
		i += got
	}
	return n, nil
}

// RelativeOffset converts an absolute offset to the i32 an entry stores,
// failing as the broker's IndexOffsetOverflowException when offset - base
// (computed in 64-bit two's complement, as Java does) is not in
// [0, Integer.MAX_VALUE]. broker: AbstractIndex.relativeOffset/toRelative.
func RelativeOffset(base, offset int64) (int32, error) {
	d := offset - base
	if d < 0 || d > math.MaxInt32 {
		return 0, fmt.Errorf("%w: offset %d does not fit relative to base offset %d", ErrOffsetOverflow, offset, base)
	}
	return int32(d), nil
}

// ErrOffsetOverflow: an offset is not representable relative to the base.
var ErrOffsetOverflow = errors.New("index offset overflow")
