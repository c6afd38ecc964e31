package kafkagen

import (
	"fmt"
	"math"

	"github.com/kseg/kseg/indexfmt"
)

// segmentIndexer keeps a segment's offset and time index the way the
// broker's append path does from Kafka 4.1 on, one decision per batch
// (LogSegment.append after KAFKA-806):
//
//	for each batch of the appended records, at its position:
//	    if batch.maxTimestamp > maxTimestampSoFar:                 (strict)
//	        maxTimestampAndOffsetSoFar = (batch.maxTimestamp, batch.lastOffset)
//	    if bytesSinceLastIndexEntry > indexIntervalBytes:          (strict, checked before adding the batch)
//	        offsetIndex.append(batch.lastOffset, position)
//	        timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar)
//	        bytesSinceLastIndexEntry = 0
//	    bytesSinceLastIndexEntry += batch.sizeInBytes
//
// and on roll or close the final time-index entry
// timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar,
// skipFullCheck = true). With one LogSegment object from the first to the
// last batch this is exactly what recovery (LogSegment.recover) rebuilds.
type segmentIndexer struct {
	base     int64
	interval int64

	size                 int64 // bytes appended so far (the next batch's position)
	bytesSinceLastEntry  int64
	maxTimestampSoFar    int64 // UNKNOWN is read from the empty time index as (-1, base)
	offsetOfMaxTimestamp int64

	offsetIndex       []byte
	offsetEntries     []OffsetEntry
	lastIndexedOffset int64 // OffsetIndex.lastOffset: base when empty

	timeIndex     []byte
	timeEntries   []TimeEntry
	lastTimeEntry TimeEntry // TimeIndex.lastEntry: (-1, base) when empty

	maxOffsetEntries int // capacity of a MaxIndexBytes index
	maxTimeEntries   int
}

func newSegmentIndexer(base int64, intervalBytes int) *segmentIndexer {
	return &segmentIndexer{
		base:                 base,
		interval:             int64(intervalBytes),
		maxTimestampSoFar:    -1,
		offsetOfMaxTimestamp: base,
		lastIndexedOffset:    base,
		lastTimeEntry:        TimeEntry{Timestamp: -1, Offset: base},
		maxOffsetEntries:     MaxIndexBytes / indexfmt.OffsetEntrySize,
		maxTimeEntries:       MaxIndexBytes / indexfmt.TimeEntrySize,
	}
}

// relative is AbstractIndex.relativeOffset: offset - base must fit in
// [0, Integer.MAX_VALUE] (else IndexOffsetOverflowException).
func (s *segmentIndexer) relative(offset int64) (int32, error) {
	d := offset - s.base
	if d < 0 || d > math.MaxInt32 {
		return 0, fmt.Errorf("offset %d cannot be stored relative to base offset %d", offset, s.base)
	}
	return int32(d), nil
}

// full reports whether the next append would need a roll because an index
// is full (OffsetIndex.isFull; TimeIndex.isFull keeps one slot for the
// entry written at roll).
func (s *segmentIndexer) full() bool {
	return len(s.offsetEntries) >= s.maxOffsetEntries || len(s.timeEntries) >= s.maxTimeEntries-1
}

// appendBatch records a batch written at position s.size.
func (s *segmentIndexer) appendBatch(lastOffset, maxTimestamp, size int64) error {
	if _, err := s.relative(lastOffset); err != nil { // LogSegment.ensureOffsetInRange
		return err
	}
	if s.size+size > math.MaxInt32 {
		return fmt.Errorf("segment %d would grow past 2 GiB", s.base)
	}
	if maxTimestamp > s.maxTimestampSoFar {
		s.maxTimestampSoFar, s.offsetOfMaxTimestamp = maxTimestamp, lastOffset
	}
	if s.bytesSinceLastEntry > s.interval {
		if err := s.appendOffset(lastOffset, int32(s.size)); err != nil {
			return err
		}
		if err := s.maybeAppendTime(s.maxTimestampSoFar, s.offsetOfMaxTimestamp, false); err != nil {
			return err
		}
		s.bytesSinceLastEntry = 0
	}
	s.size += size
	s.bytesSinceLastEntry += size
	return nil
}

// appendOffset is OffsetIndex.append: the offset must be strictly greater
// than the last one appended.
func (s *segmentIndexer) appendOffset(offset int64, position int32) error {
	if len(s.offsetEntries) >= s.maxOffsetEntries {
		return fmt.Errorf("attempt to append to a full offset index (%d entries)", len(s.offsetEntries))
	}
	if len(s.offsetEntries) > 0 && offset <= s.lastIndexedOffset {
		return fmt.Errorf("attempt to append offset %d to the offset index, no larger than the last offset appended (%d)", offset, s.lastIndexedOffset)
	}
	rel, err := s.relative(offset)
	if err != nil {
		return err
	}
	s.offsetIndex = indexfmt.AppendOffsetEntry(s.offsetIndex, rel, position)
	s.offsetEntries = append(s.offsetEntries, OffsetEntry{Offset: offset, Position: position})
	s.lastIndexedOffset = offset
	return nil
}

// maybeAppendTime is TimeIndex.maybeAppend: an entry is written only when
// the timestamp is strictly greater than the last entry's; with an empty
// index the last entry is (-1, base), so timestamps of -1 (magic 0) never
// get one.
func (s *segmentIndexer) maybeAppendTime(timestamp, offset int64, skipFullCheck bool) error {
	n := len(s.timeEntries)
	if !skipFullCheck && n >= s.maxTimeEntries-1 {
		return fmt.Errorf("attempt to append to a full time index (%d entries)", n)
	}
	if n != 0 && offset < s.lastTimeEntry.Offset {
		return fmt.Errorf("attempt to append offset %d to the time index, smaller than the last offset %d", offset, s.lastTimeEntry.Offset)
	}
	if n != 0 && timestamp < s.lastTimeEntry.Timestamp {
		return fmt.Errorf("attempt to append timestamp %d to the time index, smaller than the last timestamp %d", timestamp, s.lastTimeEntry.Timestamp)
	}
	if timestamp <= s.lastTimeEntry.Timestamp {
		return nil
	}
	rel, err := s.relative(offset)
	if err != nil {
		return err
	}
	s.timeIndex = indexfmt.AppendTimeEntry(s.timeIndex, timestamp, rel)
	e := TimeEntry{Timestamp: timestamp, Offset: offset}
	s.timeEntries = append(s.timeEntries, e)
	s.lastTimeEntry = e
	return nil
}

// closeSegment writes the entry a roll (LogSegment.onBecomeInactiveSegment)
// or a clean close (LogSegment.close) adds: the segment's max timestamp, if
// it is above the last entry.
func (s *segmentIndexer) closeSegment() error {
	return s.maybeAppendTime(s.maxTimestampSoFar, s.offsetOfMaxTimestamp, true)
}
