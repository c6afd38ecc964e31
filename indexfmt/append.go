package indexfmt

import (
	"errors"
	"fmt"
)

// ErrInvalidOffset: an append that would break the index's offset order
// (broker: InvalidOffsetException). Broker recovery catches this one and
// empties the segment (LogLoader.recoverLog).
var ErrInvalidOffset = errors.New("invalid offset for index append")

// ErrInvalidTimestamp: a time-index append whose timestamp is below the last
// entry's (broker: IllegalStateException in TimeIndex.maybeAppend). It is
// deliberately not ErrInvalidOffset: recovery does not catch it.
var ErrInvalidTimestamp = errors.New("invalid timestamp for time index append")

// offsetAppendRule is the check OffsetIndex.append makes before it writes:
// offsets strictly increase, and each fits relative to the base offset.
// OffsetIndexBuilder and RecoveryIndexer keep one each.
type offsetAppendRule struct {
	base, last int64
	n          int
}

// check returns the entry (offset, position) becomes, or the broker's
// exception as an error; on success the entry counts as appended.
func (r *offsetAppendRule) check(offset int64, position int32) (OffsetEntry, error) {
	if r.n > 0 && offset <= r.last {
		return OffsetEntry{}, fmt.Errorf("%w: attempt to append an offset (%d) no larger than the last offset appended (%d)", ErrInvalidOffset, offset, r.last)
	}
	rel, err := RelativeOffset(r.base, offset)
	if err != nil {
		return OffsetEntry{}, err
	}
	r.last = offset
	r.n++
	return OffsetEntry{Offset: offset, RelativeOffset: rel, Position: position}, nil
}

// OffsetIndexBuilder produces the bytes of an offset index the way the
// broker appends to one (OffsetIndex.append): offsets strictly increase,
// each must fit relative to the base offset. The result is trimmed
// (entries x 8 bytes), as after trimToValidSize.
type OffsetIndexBuilder struct {
	BaseOffset int64
	buf        []byte
	rule       offsetAppendRule
}

// NewOffsetIndexBuilder starts an empty index; lastOffset is the base offset.
func NewOffsetIndexBuilder(baseOffset int64) *OffsetIndexBuilder {
	return &OffsetIndexBuilder{BaseOffset: baseOffset, rule: offsetAppendRule{base: baseOffset, last: baseOffset}}
}

// Append adds (offset, position). It fails like the broker when offset is not
// larger than the last offset appended or does not fit in the entry.
func (b *OffsetIndexBuilder) Append(offset int64, position int32) error {
	e, err := b.rule.check(offset, position)
	if err != nil {
		return err
	}
	b.buf = AppendOffsetEntry(grow(b.buf, OffsetEntrySize), e.RelativeOffset, e.Position)
	return nil
}

// Grow makes room for n more entries without reallocating.
func (b *OffsetIndexBuilder) Grow(n int) { b.buf = reserve(b.buf, n*OffsetEntrySize) }

// Entries is the number of entries appended.
func (b *OffsetIndexBuilder) Entries() int { return b.rule.n }

// Bytes is the index file content.
func (b *OffsetIndexBuilder) Bytes() []byte { return b.buf }

// timeAppendRule is TimeIndex.maybeAppend's decision (the full check is
// the caller's: a rebuilt index is never full), in the broker's order: an
// offset below the last entry's is ErrInvalidOffset (InvalidOffsetException),
// then a timestamp below the last entry's is ErrInvalidTimestamp
// (IllegalStateException); equal values are allowed. The entry is written
// only when the timestamp is strictly greater than the last entry's, which
// for an empty index is (-1, base offset); only then must the offset fit
// (ErrOffsetOverflow). TimeIndexBuilder and RecoveryIndexer keep one each.
type timeAppendRule struct {
	base               int64
	lastTS, lastOffset int64
	n                  int
}

func newTimeAppendRule(base int64) timeAppendRule {
	return timeAppendRule{base: base, lastTS: -1, lastOffset: base}
}

// check returns the entry to write and true, false when nothing is
// written, or the broker's exception as an error.
func (r *timeAppendRule) check(timestamp, offset int64) (TimeEntry, bool, error) {
	if r.n > 0 && offset < r.lastOffset {
		return TimeEntry{}, false, fmt.Errorf("%w: attempt to append an offset (%d) to slot %d no larger than the last offset appended (%d)", ErrInvalidOffset, offset, r.n, r.lastOffset)
	}
	if r.n > 0 && timestamp < r.lastTS {
		return TimeEntry{}, false, fmt.Errorf("%w: attempt to append a timestamp (%d) to slot %d no larger than the last timestamp appended (%d)", ErrInvalidTimestamp, timestamp, r.n, r.lastTS)
	}
	if timestamp <= r.lastTS {
		return TimeEntry{}, false, nil
	}
	rel, err := RelativeOffset(r.base, offset)
	if err != nil {
		return TimeEntry{}, false, err
	}
	r.lastTS, r.lastOffset = timestamp, offset
	r.n++
	return TimeEntry{Timestamp: timestamp, Offset: offset, RelativeOffset: rel}, true, nil
}

// TimeIndexBuilder produces the bytes of a time index the way the broker
// appends to one (TimeIndex.maybeAppend). An empty index's last entry is
// (-1, base offset), so the first entry needs a timestamp >= 0.
type TimeIndexBuilder struct {
	BaseOffset int64
	buf        []byte
	rule       timeAppendRule
}

// NewTimeIndexBuilder starts an empty time index.
func NewTimeIndexBuilder(baseOffset int64) *TimeIndexBuilder {
	return &TimeIndexBuilder{BaseOffset: baseOffset, rule: newTimeAppendRule(baseOffset)}
}

// MaybeAppend follows TimeIndex.maybeAppend (timeAppendRule): it writes
// (timestamp, offset) when the timestamp is strictly greater than the last
// entry's, and fails as the broker does.
func (b *TimeIndexBuilder) MaybeAppend(timestamp, offset int64) error {
	e, ok, err := b.rule.check(timestamp, offset)
	if err != nil || !ok {
		return err
	}
	b.buf = AppendTimeEntry(grow(b.buf, TimeEntrySize), e.Timestamp, e.RelativeOffset)
	return nil
}

// Grow makes room for n more entries without reallocating.
func (b *TimeIndexBuilder) Grow(n int) { b.buf = reserve(b.buf, n*TimeEntrySize) }

// Entries is the number of entries appended.
func (b *TimeIndexBuilder) Entries() int { return b.rule.n }

// Bytes is the index file content.
func (b *TimeIndexBuilder) Bytes() []byte { return b.buf }

// grow makes room for n more bytes, doubling the capacity: append grows a
// large slice by a quarter at a time, which for the 1-3 MiB index of a 1 GiB
// segment allocated and copied five times its final size (rebuild's
// allocation profile); doubling allocates at most twice, copies at most once.
func grow(buf []byte, n int) []byte {
	if len(buf)+n <= cap(buf) {
		return buf
	}
	return reserve(buf, max(cap(buf), n, 4096))
}

// reserve makes room for exactly n more bytes unless there is room already.
func reserve(buf []byte, n int) []byte {
	if n <= cap(buf)-len(buf) {
		return buf
	}
	b := make([]byte, len(buf), len(buf)+n)
	copy(b, buf)
	return b
}
