package indexfmt

// RecoveryIndexer is the index-point rule of broker recovery
// (LogSegment.recover, run by LogLoader.recoverSegment; kafka-on-disk.md
// section 9.1): fed the valid batches of one segment in log order, it says
// which offset-index and time-index entries recovery appends, starting from
// empty indexes:
//
//	validBytes = 0; lastIndexEntry = 0; maxTs = (-1, baseOffset)
//	for each valid batch:
//	    if batch.maxTimestamp > maxTs.timestamp:                 (strict)
//	        maxTs = (batch.maxTimestamp, batch.lastOffset)
//	    if validBytes - lastIndexEntry > index.interval.bytes:   (strict)
//	        offsetIndex.append(batch.lastOffset, validBytes)
//	        timeIndex.maybeAppend(maxTs)
//	        lastIndexEntry = validBytes
//	    validBytes += batch.sizeInBytes
//	timeIndex.maybeAppend(maxTs, skipFullCheck = true)           (Close)
//
// The appends follow OffsetIndex.append and TimeIndex.maybeAppend (the same
// rules as OffsetIndexBuilder and TimeIndexBuilder), so the time index only
// grows on a strictly greater timestamp, and the first batch of a segment
// never gets an entry.
//
// It is pure: no bytes are kept, so memory does not grow with the segment.
// rebuild's planner writes the entries into builders; verify's stale check
// compares them with the files on disk as they come.
type RecoveryIndexer struct {
	interval       int64
	validBytes     int64
	lastIndexEntry int64
	// maxTimestampAndOffsetSoFar, and the position of that batch.
	maxTs, maxTsOffset, maxTsPos int64

	offsets offsetAppendRule
	times   timeAppendRule
}

// RecoveryPoint is what recovery appends before it accepts one batch.
type RecoveryPoint struct {
	HasOffset bool
	Offset    OffsetEntry // (batch.lastOffset, batch position) when HasOffset
	HasTime   bool
	Time      TimeEntry // the running maximum when HasTime
}

// NewRecoveryIndexer starts the recovery of the segment with baseOffset,
// with the broker's index.interval.bytes (0: every batch but the first).
func NewRecoveryIndexer(baseOffset, indexIntervalBytes int64) *RecoveryIndexer {
	return &RecoveryIndexer{
		interval: indexIntervalBytes,
		maxTs:    -1, maxTsOffset: baseOffset,
		offsets: offsetAppendRule{base: baseOffset, last: baseOffset},
		times:   newTimeAppendRule(baseOffset),
	}
}

// Batch feeds the next valid batch: its position in the .log, its size in
// bytes (12 + length), its last offset and its header's max timestamp. It
// returns the entries recovery appends at that batch. An error is the
// exception the broker's append throws, and the batch is not accepted:
// ErrInvalidOffset (InvalidOffsetException: LogLoader.recoverLog then
// empties the whole segment), ErrOffsetOverflow or ErrInvalidTimestamp.
// The position given is that of the batch; recovery's validBytes is the
// sum of the sizes before it, which is the same for a log read batch after
// batch.
func (r *RecoveryIndexer) Batch(position, size, lastOffset, maxTimestamp int64) (RecoveryPoint, error) {
	var p RecoveryPoint
	err := r.BatchTo(&p, position, size, lastOffset, maxTimestamp)
	return p, err
}

// BatchTo is Batch writing what recovery appends to *p (HasOffset and
// HasTime say which of its entries are set): a loop over millions of
// small batches keeps one RecoveryPoint instead of copying one out per
// batch (the copy cost more than the rule).
func (r *RecoveryIndexer) BatchTo(p *RecoveryPoint, position, size, lastOffset, maxTimestamp int64) error {
	p.HasOffset, p.HasTime = false, false
	if maxTimestamp > r.maxTs {
		r.maxTs, r.maxTsOffset, r.maxTsPos = maxTimestamp, lastOffset, position
	}
	if position-r.lastIndexEntry > r.interval {
		e, err := r.offsets.check(lastOffset, int32(position))
		if err != nil {
			return err
		}
		p.HasOffset, p.Offset = true, e
		if p.Time, p.HasTime, err = r.times.check(r.maxTs, r.maxTsOffset); err != nil {
			return err
		}
		r.lastIndexEntry = position
	}
	r.validBytes = position + size
	return nil
}

// Close is the append after the loop, however it ended
// (timeIndex.maybeAppend(maxTs, skipFullCheck = true)): the entry a closed
// segment gets, when the running maximum is above the last entry.
func (r *RecoveryIndexer) Close() (TimeEntry, bool, error) {
	return r.times.check(r.maxTs, r.maxTsOffset)
}

// MaxTimestamp is the running maximum: the largest batch timestamp so far,
// the last offset of the first batch reaching it and that batch's position
// ((-1, base offset, 0) before any batch has a timestamp >= 0).
func (r *RecoveryIndexer) MaxTimestamp() (timestamp, offset, position int64) {
	return r.maxTs, r.maxTsOffset, r.maxTsPos
}

// ValidBytes is the end of the last batch accepted.
func (r *RecoveryIndexer) ValidBytes() int64 { return r.validBytes }

// OffsetEntries and TimeEntries count the entries appended so far.
func (r *RecoveryIndexer) OffsetEntries() int { return r.offsets.n }

// TimeEntries counts the time-index entries appended so far (Close's
// included).
func (r *RecoveryIndexer) TimeEntries() int { return r.times.n }
