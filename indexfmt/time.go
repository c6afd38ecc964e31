package indexfmt

import (
	"encoding/binary"
	"fmt"
)

// TimeEntry is one time-index slot: Timestamp is the largest timestamp of
// everything written before the entry, first reached by the batch whose
// (last) offset is Offset (broker: TimestampOffset).
type TimeEntry struct {
	Timestamp      int64
	Offset         int64 // absolute
	RelativeOffset int32
}

// TimeIndex reads a .timeindex file: 12-byte slots.
//
//	0 i64 timestamp (ms)    8 i32 relative offset
//
// Counting and padding rules are the offset index's (AbstractIndex); a zero
// slot reads as (timestamp 0, base offset). Like an OffsetIndex, a
// TimeIndex over a file is for one goroutine at a time.
type TimeIndex struct {
	BaseOffset int64
	size       int64
	s          slots
}

// NewTimeIndex reads the time index of the segment with the given base
// offset from b, an index held in memory.
func NewTimeIndex(b []byte, baseOffset int64) *TimeIndex {
	return NewTimeIndexFrom(byteSlots(b), baseOffset)
}

// NewTimeIndexFrom reads the time index of the segment with the given base
// offset through r (a file: see SlotReader).
func NewTimeIndexFrom(r SlotReader, baseOffset int64) *TimeIndex {
	return &TimeIndex{BaseOffset: baseOffset, size: max(r.Size(), 0), s: slots{r, TimeEntrySize}}
}

// Size is the file length.
func (x *TimeIndex) Size() int64 { return x.size }

// Slots is the broker's entry count: floor(size / 12).
func (x *TimeIndex) Slots() int { return int(x.size / TimeEntrySize) }

// TrailingBytes is size % 12.
func (x *TimeIndex) TrailingBytes() int { return int(x.size % TimeEntrySize) }

// Entry reads slot n (broker: TimeIndex.entry).
func (x *TimeIndex) Entry(n int) (TimeEntry, error) {
	if n < 0 || n >= x.Slots() {
		return TimeEntry{}, fmt.Errorf("time index slot %d out of range [0, %d)", n, x.Slots())
	}
	b, err := x.s.slot(n, x.Slots()-1)
	if err != nil {
		return TimeEntry{}, fmt.Errorf("time index %w", err)
	}
	rel := int32(binary.BigEndian.Uint32(b[8:]))
	return TimeEntry{Timestamp: int64(binary.BigEndian.Uint64(b[:])), Offset: x.BaseOffset + int64(rel), RelativeOffset: rel}, nil
}

// ValidEntries counts slots before the first slot i > 0 whose offset equals
// the base offset (broker: DumpLogSegments.dumpTimeIndex). As for the offset
// index, slot 0 always counts when the file holds a whole slot.
//
// maybeAppend allows an entry to repeat the previous entry's offset with a
// larger timestamp, so a slot i > 0 at the base offset is not impossible in
// a written file; DumpLogSegments stops there all the same, and so does this.
func (x *TimeIndex) ValidEntries() (int, error) {
	return validEntries(x.s, x.Slots(), 8)
}

// LastEntry is the broker's TimeIndex.lastEntry: the last slot, or
// (-1, base offset) when there is none.
func (x *TimeIndex) LastEntry() (TimeEntry, error) {
	if n := x.Slots(); n > 0 {
		return x.Entry(n - 1)
	}
	return TimeEntry{Timestamp: -1, Offset: x.BaseOffset}, nil
}

// EntriesBeforePadding is OffsetIndex.EntriesBeforePadding for a time
// index: ValidEntries when the last slot is padding (its offset is the
// base offset), else every slot.
func (x *TimeIndex) EntriesBeforePadding() (int, error) {
	return entriesBeforePadding(x.s, x.Slots(), 8, x.ValidEntries)
}

// Lookup is the broker's TimeIndex.lookup: the entry in the largest slot
// whose timestamp is <= target, or (-1, base offset) and slot -1. Every
// slot counts, padding included.
func (x *TimeIndex) Lookup(target int64, trace func(Probe)) (e TimeEntry, slot int, err error) {
	return x.LookupEntries(target, x.Slots(), trace)
}

// LookupEntries is Lookup over the first entries slots only.
func (x *TimeIndex) LookupEntries(target int64, entries int, trace func(Probe)) (e TimeEntry, slot int, err error) {
	slot, err = x.s.search(min(entries, x.Slots()), key{off: 0, width: 8}, target, LargestLowerBound, trace)
	if err != nil || slot < 0 {
		return TimeEntry{Timestamp: -1, Offset: x.BaseOffset}, -1, err
	}
	e, err = x.Entry(slot)
	if err != nil {
		return TimeEntry{Timestamp: -1, Offset: x.BaseOffset}, -1, err
	}
	return e, slot, nil
}

// SlotByOffset is the search TimeIndex.truncateTo uses: the largest slot
// whose offset is <= offset, or -1.
func (x *TimeIndex) SlotByOffset(offset int64, trace func(Probe)) (int, error) {
	return x.s.search(x.Slots(), key{off: 8, width: 4, base: x.BaseOffset}, offset, LargestLowerBound, trace)
}

// SanityCheck is the broker's TimeIndex.sanityCheck, its three tests in the
// broker's order: the last slot's timestamp must not be below slot 0's, the
// last slot's offset not below the base offset, and the size must be a
// multiple of 12. A zero-padded file fails the first test whenever its first
// timestamp is positive.
func (x *TimeIndex) SanityCheck() error {
	if n := x.Slots(); n > 0 {
		first, err := x.Entry(0)
		if err != nil {
			return err
		}
		last, err := x.Entry(n - 1)
		if err != nil {
			return err
		}
		if last.Timestamp < first.Timestamp {
			return fmt.Errorf("%w: non-zero size but the last timestamp is %d which is less than the first timestamp %d", ErrCorruptIndex, last.Timestamp, first.Timestamp)
		}
		if last.Offset < x.BaseOffset {
			return fmt.Errorf("%w: non-zero size but the last offset is %d which is less than the first offset %d", ErrCorruptIndex, last.Offset, x.BaseOffset)
		}
	}
	if x.TrailingBytes() != 0 {
		return fmt.Errorf("%w: found %d bytes which is neither positive nor a multiple of %d", ErrCorruptIndex, x.size, TimeEntrySize)
	}
	return nil
}
