package recovery

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/producerstate"
	"github.com/kseg/kseg/inspect/record"
)

// DefaultIndexIntervalBytes is the broker's index.interval.bytes default
// (ServerLogConfigs.LOG_INDEX_INTERVAL_BYTES_DEFAULT).
const DefaultIndexIntervalBytes = 4096

// IndexEveryBatch asks for index.interval.bytes = 0 in
// Options.IndexIntervalBytes, whose zero value means the default: every
// batch except the first of a segment then gets an index entry.
const IndexEveryBatch = -1

// Options are the broker settings recovery depends on, and the one repair
// kseg plans beyond recovery.
type Options struct {
	// IndexIntervalBytes is the broker's index.interval.bytes: 0 means the
	// default 4096, IndexEveryBatch means 0; other negative values are
	// invalid.
	IndexIntervalBytes int64
	// Progress, when set, is called with the bytes of .log read so far and
	// their total: every few MiB at most, and last with done == total when
	// the planning completes (PlanPartition, or Run over all partitions).
	// Nil costs nothing.
	Progress func(done, total int64)

	// Meter, when set, is used instead of Progress: one meter shared by
	// the plans of several partitions (rebuild.Run's), finished by its
	// owner.
	Meter *inspect.Meter
	// CutOverlap plans, beyond broker recovery, the cut of a segment's log
	// at its first batch whose offsets reach the next segment's base offset
	// (SegmentRecovery.Overlap): recovery stops there as if the log ended
	// there. Run sets it with ApplyOptions.TruncateLog.
	CutOverlap bool

	// readAheadMin: 0 scans logs of inspect.ReadAheadMinBytes and more on
	// two goroutines (inspect.IterOptions.ReadAhead), < 0 every log on
	// one, > 0 logs of that many bytes and more on two (tests compare
	// the two ways).
	readAheadMin int64
}

// Interval returns the effective index.interval.bytes, or an error for an
// invalid IndexIntervalBytes.
func (o Options) Interval() (int64, error) {
	switch {
	case o.IndexIntervalBytes == 0:
		return DefaultIndexIntervalBytes, nil
	case o.IndexIntervalBytes == IndexEveryBatch:
		return 0, nil
	case o.IndexIntervalBytes < 0:
		return 0, fmt.Errorf("index interval bytes %d: want >= 0", o.IndexIntervalBytes)
	}
	return o.IndexIntervalBytes, nil
}

// SegmentRecovery is what broker recovery (LogSegment.recover) leaves for one
// segment.
type SegmentRecovery struct {
	Segment inspect.SegmentFiles

	Index, TimeIndex []byte // exactly the bytes recovery leaves (trimmed); never nil
	TxnIndex         []byte // nil: no aborted transaction in this segment

	IndexEntries, TimeIndexEntries, TxnEntries int

	Batches    int   // batches in the valid prefix
	ValidBytes int64 // end of the valid prefix (recovery's validBytes)
	// NextOffset is the offset after the valid prefix's last batch (its
	// largest last offset + 1), the base offset when it holds none: the
	// segment's log end offset once recovery has cut it.
	NextOffset     int64
	TruncatedBytes int64 // log size - ValidBytes
	// StopErr says why recovery stopped before the end of the log (a
	// *fileio.CorruptError naming the .log and the byte position), nil when
	// the whole log is valid. See PlanPartition for the kinds.
	StopErr error
	// Overlap is the first batch of the valid prefix whose last offset
	// reaches the next segment's base offset (a *fileio.CorruptError of
	// kind ErrOverlap naming the .log, the batch's position and its last
	// offset), nil when there is none. With Options.CutOverlap it is also
	// the StopErr: the plan ends before that batch.
	Overlap error
}

// ErrOverlap marks a batch whose offsets reach the next segment's base
// offset. A broker's fetch picks the segment with the largest base offset
// <= the offset asked for (LogSegments.floorSegment), so it never reads that
// batch, nor anything after it in this segment: those offsets are served
// from the next segment, or not at all. Broker recovery does not look
// across segments and keeps such batches; kseg cuts them with
// Options.CutOverlap.
var ErrOverlap = errors.New("offsets reach the next segment's base offset")

// LogSize is the size of the .log when it was planned.
func (p *SegmentRecovery) LogSize() int64 { return p.ValidBytes + p.TruncatedBytes }

// ErrUnrecoverable marks a segment broker recovery cannot rebuild: the
// broker throws an exception recovery does not catch (a batch whose last
// offset does not fit relative to the base offset,
// LogSegmentOffsetOverflowException; a producer-state replay failure). It is
// wrapped in a *fileio.CorruptError naming the file and position.
var ErrUnrecoverable = errors.New("broker recovery cannot rebuild this segment")

// PlanPartition runs broker recovery over every segment of p, in base-offset
// order, and returns one plan per segment. Nothing is written.
//
// Each segment is recovered as LogSegment.recover does (kafka-on-disk.md
// section 9.1), from empty indexes:
//
//   - batches are read with the file iterator's stop rules
//     (FileLogInputStream.nextBatch) and validated as ensureValid does (v2:
//     size >= 61 and CRC-32C; v0/v1: the outer CRC-32);
//   - a batch at position p gets an offset-index entry (lastOffset, p) when
//     p - (position of the last indexed batch, or 0) > index.interval.bytes,
//     strictly, so the first batch never does; the time index gets the
//     running maximum batch timestamp (strict '>', with the last offset of
//     the first batch reaching it) at the same points, only when it grew
//     (TimeIndex.maybeAppend), and once more at the end;
//   - records are not decoded, except the first record of a v2 control batch
//     with a producer id (the transaction marker).
//
// Transactions are tracked from the first segment of p (producer snapshots
// are not read), so an aborted transaction's entry lands in the .txnindex of
// the segment holding its ABORT marker.
//
// Where recovery stops early, StopErr says why and ValidBytes where:
//   - fileio.ErrTorn: the log ends inside a batch or its header (the broker
//     stops silently there);
//   - fileio.ErrCorruptHeader: a length field below 14, or a v2 batch
//     shorter than 61 bytes (CorruptRecordException);
//   - fileio.ErrCRC: a stored CRC that does not match;
//   - fileio.ErrCorruptRecords: a malformed control record
//     (InvalidRecordException); the broker has already counted that batch, so
//     the cut is after it.
//
// With opts.CutOverlap, recovery also stops (before the batch, which is then
// cut with the rest) at the first batch whose last offset reaches the next
// segment's base offset: StopErr and Overlap are then a CorruptError of kind
// ErrOverlap. Without it that batch is only reported in Overlap.
//
// A non-increasing offset at an index point makes the broker's index append
// throw InvalidOffsetException; LogLoader.recoverLog then empties the whole
// segment (truncateTo(baseOffset)). kseg plans exactly that: ValidBytes 0,
// empty indexes, the whole log counted as TruncatedBytes, and StopErr a
// CorruptError (kinds fileio.ErrCorruptHeader and indexfmt.ErrInvalidOffset)
// at the batch where it happened. The producer state is rolled back to the
// start of that segment. (The broker would also delete every later unflushed
// segment; kseg plans each of them as if it stayed.)
//
// PlanPartition returns an error, with the plans of the segments before the
// failing one, when a segment cannot be read, or when recovery itself would
// fail (ErrUnrecoverable).
func PlanPartition(p *inspect.Partition, opts Options) (_ []SegmentRecovery, err error) {
	interval, err := opts.Interval()
	if err != nil {
		return nil, err
	}
	r := recoverer{interval: interval, txns: producerstate.New(), cutOverlap: opts.CutOverlap, readAheadMin: opts.readAheadMin}
	plans := make([]SegmentRecovery, 0, len(p.Segments))
	r.meter = opts.Meter
	if r.meter == nil {
		r.meter = inspect.NewMeter(opts.Progress, func() int64 { return inspect.LogBytes(p.Segments, 0) })
		defer func() {
			if err == nil {
				r.meter.Finish()
			}
		}()
	}
	for i, seg := range p.Segments {
		limit := int64(math.MaxInt64)
		if i+1 < len(p.Segments) {
			limit = p.Segments[i+1].BaseOffset
		}
		plan, err := r.segment(seg, limit)
		if err != nil {
			return plans, err
		}
		plans = append(plans, plan)
	}
	return plans, nil
}

// recoverer carries what lives across segments: the producer state and the
// record decoder's buffers.
type recoverer struct {
	meter      *inspect.Meter // progress; nil: none
	reported   int64          // bytes of the current segment reported to meter
	interval   int64
	cutOverlap bool
	txns       *producerstate.State
	dec        record.RecordDecoder
	scratch    []byte // for the rare batch the entry scanner refuses (negativeDelta)

	readAheadMin int64
}

// segmentRun is the state of LogSegment.recover for one segment.
type segmentRun struct {
	name    string
	base    int64
	limit   int64 // the next segment's base offset; MaxInt64 for the last segment
	overlap error // the first batch reaching limit

	idx   *indexfmt.RecoveryIndexer // the index-point rule
	point indexfmt.RecoveryPoint    // what idx appends at the current batch
	oi    *indexfmt.OffsetIndexBuilder
	ti    *indexfmt.TimeIndexBuilder
	txn   []byte

	lastTxnOffset int64 // TransactionIndex.lastOffset; -1: none appended
	batches       int
	next          int64 // the offset after the valid batches
	size          int64 // of the log
}

func (r *recoverer) segment(seg inspect.SegmentFiles, limit int64) (SegmentRecovery, error) {
	plan := SegmentRecovery{Segment: seg}
	if seg.Log == "" {
		return plan, fmt.Errorf("segment %s: %w: no .log file to rebuild from", inspect.SegmentName(seg.BaseOffset), fileio.ErrNotKafka)
	}
	f, err := fileio.Open(seg.Log, fileio.Options{CacheNeutral: true})
	if err != nil {
		return plan, err
	}
	defer f.Close()
	size := f.Size()
	if size > math.MaxInt32 {
		// FileRecords refuses such a file; positions would not fit an entry.
		return plan, &fileio.CorruptError{File: seg.Log, Position: -1, Offset: -1,
			Err: fmt.Errorf("%w: %w: the log is %d bytes, more than the broker can open (%d)", fileio.ErrCorruptHeader, ErrUnrecoverable, size, math.MaxInt32)}
	}

	start := r.txns.Clone()
	run := &segmentRun{
		name: seg.Log, base: seg.BaseOffset, limit: limit,
		idx:           indexfmt.NewRecoveryIndexer(seg.BaseOffset, r.interval),
		oi:            indexfmt.NewOffsetIndexBuilder(seg.BaseOffset),
		ti:            indexfmt.NewTimeIndexBuilder(seg.BaseOffset),
		lastTxnOffset: -1, size: size, next: seg.BaseOffset,
	}
	// The rebuilt indexes usually have as many entries as the ones on
	// disk: reserve that much (never more than the log could need), so that
	// building them does not reallocate.
	most := int(size/(r.interval+1)) + 2
	run.oi.Grow(min(fileSize(seg.Index)/indexfmt.OffsetEntrySize, most))
	run.ti.Grow(min(fileSize(seg.TimeIndex)/indexfmt.TimeEntrySize, most))
	stop, err := r.scan(f, size, run)
	r.meter.Done(&r.reported, size)
	if err != nil {
		return plan, err
	}
	if !errors.Is(stop, indexfmt.ErrInvalidOffset) {
		// After the loop, however it ended: the entry a closed segment gets
		// (timeIndex.maybeAppend(max, offset, skipFullCheck = true)). An
		// InvalidOffsetException here empties the segment as well.
		if t, ok, aerr := run.idx.Close(); aerr != nil {
			_, maxTsOffset, maxTsPos := run.idx.MaxTimestamp()
			if stop, err = run.indexAppendFailed(aerr, maxTsPos, maxTsOffset); err != nil {
				return plan, err
			}
		} else if ok {
			if err := run.ti.MaybeAppend(t.Timestamp, t.Offset); err != nil {
				return plan, err
			}
		}
	}
	plan.StopErr = stop
	plan.Overlap = run.overlap
	if errors.Is(stop, indexfmt.ErrInvalidOffset) {
		// LogLoader.recoverLog: the segment is truncated to its base offset.
		r.txns = start
		plan.Index, plan.TimeIndex = []byte{}, []byte{}
		plan.ValidBytes, plan.TruncatedBytes, plan.NextOffset = 0, size, seg.BaseOffset
		return plan, nil
	}
	plan.Index = nonNil(run.oi.Bytes())
	plan.TimeIndex = nonNil(run.ti.Bytes())
	plan.TxnIndex = run.txn
	plan.IndexEntries = run.oi.Entries()
	plan.TimeIndexEntries = run.ti.Entries()
	plan.TxnEntries = len(run.txn) / indexfmt.TxnEntrySize
	plan.Batches = run.batches
	plan.ValidBytes = run.idx.ValidBytes()
	plan.TruncatedBytes = size - plan.ValidBytes
	plan.NextOffset = run.next
	return plan, nil
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int {
	if path == "" {
		return 0
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return int(min(st.Size(), math.MaxInt32))
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// scan is the batch loop of LogSegment.recover. It returns the reason the
// loop stopped early (nil at the clean end of the log), or an error when
// the segment cannot be planned at all.
func (r *recoverer) scan(f *fileio.File, size int64, run *segmentRun) (stop, err error) {
	// The broker's iterator: stop at the first damage.
	it := inspect.NewLogIterator(inspect.IterOptions{Window: window(size), ReadAhead: r.readAheadMin >= 0, ReadAheadMin: r.readAheadMin})
	defer it.Close()
	it.Reset(f, nil, 0)
	for {
		for it.Next() {
			b := it.Batch()
			// batch.ensureValid(): the size was checked by ParseBatch.
			computed, ok, err := it.CheckCRC()
			if err != nil {
				return nil, err
			}
			if !ok {
				return crcError(run.name, b, computed), nil
			}
			if stop, err := r.batch(run, b, it.Entry); stop != nil || err != nil {
				return stop, err
			}
			r.meter.Advance(&r.reported, b.End())
		}
		serr := it.Err()
		if serr == nil {
			return nil, nil
		}
		var ce *fileio.CorruptError
		if !errors.As(serr, &ce) || !(errors.Is(serr, fileio.ErrTorn) || errors.Is(serr, fileio.ErrCorruptHeader)) {
			return nil, serr // a read error, the file changed: not a recovery outcome
		}
		// ParseBatch refuses a v2 batch with a negative lastOffsetDelta,
		// which ensureValid accepts when its CRC (which covers the delta)
		// matches. Give such a batch the broker's treatment and go on after it.
		next, stop, err := r.negativeDelta(f, size, run, ce.Position)
		if err != nil || stop != nil {
			return stop, err
		}
		if next < 0 {
			return serr, nil
		}
		it.Reset(f, nil, next)
	}
}

// window is the iterator's read size for a log of size bytes: whole small
// logs in one read, at most inspect.DefaultWindow.
func window(left int64) int {
	return int(min(max(left, 4096), inspect.DefaultWindow))
}

func crcError(file string, b *record.Batch, computed uint32) error {
	return &fileio.CorruptError{File: file, Position: b.Position, Offset: b.LastOffset,
		Err: fmt.Errorf("%w: stored crc = %d, computed crc = %d (magic %d batch of %d bytes)", fileio.ErrCRC, b.CRC, computed, b.Magic, b.Size)}
}

// batch is the body of the recovery loop for one batch that passed
// ensureValid. entry returns the whole batch (only control batches need it).
func (r *recoverer) batch(run *segmentRun, b *record.Batch, entry func() ([]byte, error)) (stop, err error) {
	// Not recovery's: a batch a broker's fetch never reads here.
	if b.LastOffset >= run.limit && run.overlap == nil {
		offsets := fmt.Sprint(b.LastOffset)
		if b.BaseOffset >= 0 && b.BaseOffset != b.LastOffset {
			offsets = fmt.Sprintf("%d..%d", b.BaseOffset, b.LastOffset)
		}
		run.overlap = &fileio.CorruptError{File: run.name, Position: b.Position, Offset: b.LastOffset,
			Err: fmt.Errorf("%w: batch offsets %s reach the next segment's base offset %d; a broker reads offsets from %d on in the next segment (LogSegments.floorSegment), never this batch or the %d bytes from it to the end of this log",
				ErrOverlap, offsets, run.limit, run.limit, run.size-b.Position)}
		if r.cutOverlap {
			return run.overlap, nil
		}
	}
	// ensureOffsetInRange: LogSegmentOffsetOverflowException is not caught
	// by recovery (the loader splits legacy segments, or fails).
	if _, err := indexfmt.RelativeOffset(run.base, b.LastOffset); err != nil {
		return nil, &fileio.CorruptError{File: run.name, Position: b.Position, Offset: b.LastOffset,
			Err: fmt.Errorf("%w: %w: batch last offset %d does not fit relative to base offset %d (broker: LogSegmentOffsetOverflowException): %w", fileio.ErrCorruptHeader, ErrUnrecoverable, b.LastOffset, run.base, err)}
	}
	// The index points (indexfmt.RecoveryIndexer): the builders write what
	// the rule appends, and agree with it.
	pt := &run.point
	if err := run.idx.BatchTo(pt, b.Position, b.Size, b.LastOffset, b.MaxTimestamp); err != nil {
		offset := b.LastOffset
		if pt.HasOffset { // the time index's append failed
			_, offset, _ = run.idx.MaxTimestamp()
		}
		return run.indexAppendFailed(err, b.Position, offset)
	}
	if pt.HasOffset {
		if err := run.oi.Append(pt.Offset.Offset, pt.Offset.Position); err != nil {
			return run.indexAppendFailed(err, b.Position, b.LastOffset)
		}
	}
	if pt.HasTime {
		if err := run.ti.MaybeAppend(pt.Time.Timestamp, pt.Time.Offset); err != nil {
			return run.indexAppendFailed(err, b.Position, pt.Time.Offset)
		}
	}
	run.batches++
	run.next = max(run.next, b.LastOffset+1)
	if b.Magic < 2 || b.ProducerID <= -1 { // RecordBatch.hasProducerId
		return nil, nil
	}
	return r.producerState(run, b, entry)
}

// indexAppendFailed classifies an index append error: InvalidOffsetException
// empties the segment (a stop reason); anything else cannot happen after the
// range check and is reported as an error.
func (run *segmentRun) indexAppendFailed(err error, pos, offset int64) (stop, ferr error) {
	if errors.Is(err, indexfmt.ErrInvalidOffset) {
		return &fileio.CorruptError{File: run.name, Position: pos, Offset: offset,
			Err: fmt.Errorf("%w: non-increasing offset at an index point; broker recovery empties this segment (InvalidOffsetException): %w", fileio.ErrCorruptHeader, err)}, nil
	}
	return nil, &fileio.CorruptError{File: run.name, Position: pos, Offset: offset, Err: fmt.Errorf("%w: %w", ErrUnrecoverable, err)}
}

// producerState replays a v2 batch with a producer id
// (LogSegment.updateProducerState).
func (r *recoverer) producerState(run *segmentRun, b *record.Batch, entry func() ([]byte, error)) (stop, err error) {
	unrecoverable := func(format string, args ...any) error {
		return &fileio.CorruptError{File: run.name, Position: b.Position, Offset: b.BaseOffset,
			Err: fmt.Errorf("%w: %w: "+format, append([]any{fileio.ErrCorruptRecords, ErrUnrecoverable}, args...)...)}
	}
	if !b.IsControl() {
		if err := r.txns.DataBatch(b.ProducerID, b.ProducerEpoch, b.BaseOffset, b.LastOffset, b.MaxTimestamp, b.IsTransactional()); err != nil {
			return nil, unrecoverable("%v", err)
		}
		return nil, nil
	}
	// The coordinator epoch and the producer epoch are only logged on the
	// replication path (checkCoordinatorEpoch, checkProducerEpoch).
	m, ok, stop, err := r.firstControlRecord(run, b, entry)
	if stop != nil || err != nil || !ok {
		return stop, err
	}
	if !m.IsEnd() {
		// EndTransactionMarker.deserialize: IllegalArgumentException.
		return nil, unrecoverable("control batch of producer %d holds a %s record, not a transaction marker (broker: IllegalArgumentException)", b.ProducerID, m.Type)
	}
	done, err := r.txns.EndMarker(b.ProducerID, b.ProducerEpoch, m.CoordinatorEpoch, b.BaseOffset, m.Timestamp, m.Type == record.ControlAbort)
	if err != nil {
		return nil, unrecoverable("%v", err)
	}
	if done == nil || !done.Aborted {
		return nil, nil
	}
	txn := indexfmt.AbortedTxn{Version: 0, ProducerID: done.ProducerID, FirstOffset: done.FirstOffset, LastOffset: done.LastOffset, LastStableOffset: done.LastStableOffset}
	// TransactionIndex.append: last offsets strictly increase within the
	// (reset) index.
	if run.lastTxnOffset >= 0 && txn.LastOffset <= run.lastTxnOffset {
		return nil, unrecoverable("aborted transaction ending at %d is not after the previous one at %d (broker: IllegalArgumentException in TransactionIndex.append)", txn.LastOffset, run.lastTxnOffset)
	}
	run.lastTxnOffset = txn.LastOffset
	run.txn = indexfmt.AppendTxnEntry(run.txn, txn)
	return nil, nil
}

// firstControlRecord reads a control batch's first record
// (producerstate.ReadMarker) and sorts its problems the way recovery
// meets them: malformed records are InvalidRecordException, a stop
// reason after this batch; a null key or marker value makes the broker
// fail (NullPointerException), which kseg reports as ErrUnrecoverable.
func (r *recoverer) firstControlRecord(run *segmentRun, b *record.Batch, entry func() ([]byte, error)) (m producerstate.Marker, ok bool, stop, err error) {
	e, err := entry()
	if err != nil {
		return m, false, nil, err
	}
	m, ok, err = producerstate.ReadMarker(&r.dec, run.name, e, b)
	switch {
	case err == nil:
		return m, ok, nil, nil
	case errors.Is(err, producerstate.ErrNullControlKey), errors.Is(err, producerstate.ErrNullMarkerValue):
		cause := producerstate.ErrNullControlKey
		if errors.Is(err, producerstate.ErrNullMarkerValue) {
			cause = producerstate.ErrNullMarkerValue
		}
		return m, false, nil, &fileio.CorruptError{File: run.name, Position: b.Position, Offset: b.BaseOffset,
			Err: fmt.Errorf("%w: %w: %w", fileio.ErrCorruptRecords, ErrUnrecoverable, cause)}
	case errors.Is(err, fileio.ErrCorruptRecords):
		return m, false, err, nil
	}
	return m, false, nil, err
}

// negativeDelta handles the one batch ParseBatch refuses that the broker's
// ensureValid accepts: a v2 batch of a valid size with a negative
// lastOffsetDelta and a matching CRC. It returns the position after that
// batch (-1 when the entry at pos is not such a batch: the scanner's error
// stands), or why recovery stops.
func (r *recoverer) negativeDelta(f *fileio.File, size int64, run *segmentRun, pos int64) (next int64, stop, err error) {
	if pos < 0 || pos != run.idx.ValidBytes() || size-pos < record.V2HeaderSize {
		return -1, nil, nil
	}
	var hdr [record.HeaderReadSize]byte
	if _, err := f.ReadAt(hdr[:], pos); err != nil {
		return -1, nil, err
	}
	b, perr := record.ParseBatch(hdr[:], pos, f.Name)
	if perr == nil || b.Magic < 2 || b.Size < record.V2HeaderSize || b.Size > size-pos || b.LastOffsetDelta >= 0 {
		return -1, nil, nil
	}
	computed, err := crcAt(f, &b, r.scratchBuf())
	if err != nil {
		return -1, nil, err
	}
	if computed != b.CRC {
		return -1, crcError(run.name, &b, computed), nil
	}
	entry := func() ([]byte, error) {
		if b.Size > inspect.MaxEntryBytes {
			return nil, &fileio.CorruptError{File: f.Name, Position: b.Position, Offset: -1, Err: fmt.Errorf("%w: batch of %d bytes is larger than %d", fileio.ErrTooLarge, b.Size, inspect.MaxEntryBytes)}
		}
		buf := make([]byte, b.Size)
		if _, err := f.ReadAt(buf, b.Position); err != nil {
			return nil, err
		}
		return buf, nil
	}
	if stop, err := r.batch(run, &b, entry); stop != nil || err != nil {
		return -1, stop, err
	}
	return b.End(), nil, nil
}

func (r *recoverer) scratchBuf() []byte {
	if r.scratch == nil {
		r.scratch = make([]byte, 64<<10)
	}
	return r.scratch
}

// crcAt computes an entry's checksum by streaming it through buf.
func crcAt(f io.ReaderAt, b *record.Batch, buf []byte) (uint32, error) {
	var crc uint32
	for at := b.Position + record.CRCStart(b.Magic); at < b.End(); {
		n := min(int64(len(buf)), b.End()-at)
		if _, err := f.ReadAt(buf[:n], at); err != nil {
			return 0, err
		}
		crc = record.UpdateCRC(b.Magic, crc, buf[:n])
		at += n
	}
	return crc, nil
}
