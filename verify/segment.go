package verify

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// region is one stretch of a .log as the pass walked it: a batch whose
// header parsed (its CRC may be bad), or a damaged byte range that holds no
// batch the pass could read. Regions tile the file from 0 to its end.
type region struct {
	pos, end int64
	damaged  bool

	// Batch fields (damaged == false).
	base    int64 // -1: not known without decompressing (legacy compressed wrapper)
	last    int64
	maxTs   int64
	crcOK   bool
	outlier bool // offsets out of line with the segment (log.offset-*): not trusted by index checks
}

// lowest is the smallest offset the batch is known to hold.
func (r *region) lowest() int64 { return lowestOffset(r.base, r.last) }

// lowestOffset is the smallest offset a batch of the given base and last
// offset is known to hold: its base, or its last when the base is not
// known (-1).
func lowestOffset(base, last int64) int64 {
	if base >= 0 {
		return base
	}
	return last
}

// trusted reports whether the region is a batch whose offsets index checks
// may rely on.
func (r *region) trusted() bool { return !r.damaged && !r.outlier }

// segChecker checks one segment: its .log in one pass, feeding the regions
// it finds to the offset-, time- and transaction-index checks and to the
// recovery emulation behind the *.stale checks. Memory does not depend on
// the segment's size: the iterator's read window and resynchroniser and a
// fixed number of index checkpoints.
type segChecker struct {
	opts *Options
	job  *segmentJob
	base int64

	logName string
	logSize int64
	log     io.ReaderAt          // the .log (empty when there is none)
	it      *inspect.LogIterator // reads the .log, salvaging
	scan    []byte
	bufs    *buffers
	sink    *sink

	track offsetTracker
	oidx  *offsetIndexCheck
	tidx  *timeIndexCheck
	emu   *recoveryEmu

	batches    int64 // valid batches
	logDamaged bool  // a log.* finding was made
	hasBatch   bool  // a trusted batch was seen
	lastOff    int64 // largest last offset of the trusted batches
	tailDamage bool  // damage or an outlier after the last trusted batch
	maxTs      int64
	maxTsOff   int64

	// matcher compares the trusted batches with the partition's
	// leader-epoch-checkpoint (nil: none to compare with).
	matcher       *inspect.EpochMatcher
	epochFindings capped

	err error // the first I/O error met by a check
}

// segFile builds the path of a segment file with the given suffix next to
// the segment's other files.
func (c *segChecker) segFile(suffix string) string {
	return filepath.Join(c.job.dir, inspect.SegmentName(c.base)+suffix)
}

func (c *segChecker) add(check, file string, pos, off *int64, format string, args ...any) {
	c.addAs(Severity(check), check, file, pos, off, format, args...)
}

// addAs records a finding of a check whose severity depends on the case.
func (c *segChecker) addAs(severity, check, file string, pos, off *int64, format string, args ...any) {
	c.sink.add(Finding{
		Severity:          severity,
		Check:             check,
		File:              file,
		SegmentBaseOffset: ptr(c.base),
		Position:          pos,
		Offset:            off,
		Message:           fmt.Sprintf(format, args...),
	})
}

// paddingSeverity is the severity of a zero-filled index tail, and what the
// broker does with it: a running broker searches only the entries before
// the padding (its entry count excludes it), and its next start after an
// unclean shutdown recovers the segment and rebuilds the index; only a
// segment that start does not recover (below the recovery point,
// KAFKA-10207, or after a clean shutdown) is loaded with the padding
// counted as entries.
func (c *segChecker) paddingSeverity() (string, string) {
	if c.job.recovered {
		return SeverityInfo, "the broker's next start recovers this segment and rebuilds the index; a running broker searches only the entries before the padding"
	}
	return SeverityWarning, "the broker's next start does not recover this segment (" + c.job.kept + ") and counts every padding slot as an entry"
}

func (c *segChecker) logFinding(check string, pos int64, off *int64, format string, args ...any) {
	c.logDamaged = true
	c.add(check, c.logName, ptr(pos), off, format, args...)
}

// checkLog reads the .log from position 0 to its end through a salvaging
// LogIterator: past damage it resynchronises on the next valid batch and
// reports the damaged range. verify is stricter than the broker's iterator
// (and so than LogIterator): a header HeaderProblem rejects is a corrupt
// header, and the iterator is moved past it (Reject).
func (c *segChecker) checkLog() error {
	it := c.it
	for it.Next() {
		if d := it.Damage(); d != nil {
			if errors.Is(d.Err, fileio.ErrSegmentTooLarge) {
				continue // reported with the file (log.size)
			}
			if err := c.damaged(d); err != nil {
				return err
			}
			c.opts.meter.Advance(&c.job.reported, d.End)
			continue
		}
		b := it.Batch() // valid until the next Next
		if p := record.HeaderProblem(b); p != "" {
			if err := it.Reject(p); err != nil {
				return err
			}
			if err := c.corrupt(it.Damage(), p); err != nil {
				return err
			}
			c.opts.meter.Advance(&c.job.reported, it.Damage().End)
			continue
		}
		computed, ok, err := it.CheckCRC()
		if err != nil {
			return err
		}
		if !ok {
			if err := it.JudgeMismatch(computed); err != nil {
				return err
			}
			c.crcMismatch(b, computed, it.Damage())
			c.opts.meter.Advance(&c.job.reported, b.End())
			continue
		}
		c.batches++
		first, err := c.checkRecords(b)
		if err != nil {
			return err
		}
		c.batch(b, true, first)
		c.epochMismatch(c.matcher.Batch(b))
		c.opts.meter.Advance(&c.job.reported, b.End())
	}
	c.epochMismatch(c.matcher.Flush())
	return it.Err()
}

// damaged turns a damaged range the iterator met into its finding.
func (c *segChecker) damaged(d *inspect.Damage) error {
	switch {
	case d.Cause == inspect.CauseShortTail:
		// FileLogInputStream.nextBatch: fewer than 18 bytes left ends
		// the iteration; recovery truncates them.
		left := c.logSize - d.Position
		what := fmt.Sprintf("%d bytes after the last batch, too few for a batch header", left)
		if zero, err := c.it.ZeroFilled(); err != nil {
			return err
		} else if zero {
			what = fmt.Sprintf("zero-filled tail of %d bytes, too few for a batch header", left)
		}
		c.tail(d.Position, what)
		return nil
	case d.Cause == inspect.CauseRunsPast:
		return c.runsPast(d)
	case d.Kind() == inspect.DamageHeader:
		return c.corrupt(d, detail(d.Err))
	}
	return d.Err // not damage LogIterator.Next yields
}

// detail is a CorruptError's message without the file and position.
func detail(err error) string {
	var ce *fileio.CorruptError
	if errors.As(err, &ce) {
		return ce.Err.Error()
	}
	return err.Error()
}

// batch hands a batch whose header parsed to the offset tracker. first,
// when not -1, is a legacy compressed wrapper's first inner offset (its
// header does not hold it).
func (c *segChecker) batch(b *record.Batch, crcOK bool, first int64) {
	base := b.BaseOffset
	if base < 0 && first >= 0 {
		base = first
	}
	// Written field by field into the tracker's free slot: a region
	// built elsewhere and copied (a composite literal is) stalls the
	// copy's wide loads on the narrow stores that built it, which took a
	// third of the per-batch checks' time.
	r := c.track.next()
	r.pos, r.end, r.base, r.last, r.maxTs = b.Position, b.End(), base, b.LastOffset, b.MaxTimestamp
	r.damaged, r.crcOK, r.outlier = false, crcOK, false
	c.track.push(c, r)
}

// damage records the damaged range [pos, end).
func (c *segChecker) damage(pos, end int64) {
	c.track.flush(c)
	c.deliver(&region{pos: pos, end: end, damaged: true})
}

// deliver passes a region, in file order, to everything that follows the
// log: segment statistics, the index checks and the recovery emulation.
func (c *segChecker) deliver(r *region) {
	if r.trusted() {
		c.hasBatch = true
		c.lastOff = max(c.lastOff, r.last)
		if r.maxTs > c.maxTs {
			c.maxTs, c.maxTsOff = r.maxTs, r.last
		}
		c.tailDamage = false
	} else {
		c.tailDamage = true
	}
	if c.oidx != nil {
		c.oidx.region(r)
	}
	if c.tidx != nil {
		c.tidx.region(r)
	}
	c.emu.region(r)
}

// skipped describes a damaged range for messages.
func skipped(pos, next int64) string {
	return fmt.Sprintf("bytes %d..%d (%d bytes) skipped, the next valid batch starts at position %d", pos, next-1, next-pos, next)
}

// corrupt reports a header that cannot be a batch: the iterator resumes
// at the next valid batch, the end of the damage d.
func (c *segChecker) corrupt(d *inspect.Damage, why string) error {
	pos, next := d.Position, d.End
	if next < c.logSize {
		c.logFinding(LogCorruptHeader, pos, nil, "%s; %s", why, skipped(pos, next))
		c.damage(pos, next)
		return nil
	}
	zero, err := c.it.ZeroFilled()
	if err != nil {
		return err
	}
	if zero {
		c.tail(pos, "zero-filled tail (a preallocated .log, or blocks never written before an unclean shutdown)")
		return nil
	}
	c.logFinding(LogCorruptHeader, pos, nil, "%s; no valid batch follows: broker recovery would truncate the segment here, dropping %d bytes", why, c.logSize-pos)
	c.damage(pos, c.logSize)
	return nil
}

// runsPast reports an entry whose length runs past the end of the file:
// a torn tail, unless a valid batch follows (then the length is damaged).
func (c *segChecker) runsPast(d *inspect.Damage) error {
	pos := d.Position
	if d.End < c.logSize {
		c.logFinding(LogCorruptHeader, pos, nil, "length field %d: the batch would end at position %d, past the end of the file (%d bytes), yet a valid batch follows; %s",
			d.Size-record.LogOverhead, pos+d.Size, c.logSize, skipped(pos, d.End))
		c.damage(pos, d.End)
		return nil
	}
	// Its length field is above the bytes left, so they are not all zero.
	switch {
	case d.Magic < 0 || d.Magic > 2:
		// Not the start of a batch cut short: bytes that are no batch at all.
		c.logFinding(LogCorruptHeader, pos, nil, "magic %d is not 0, 1 or 2 and the length field %d runs past the end of the file; no valid batch follows: broker recovery would truncate the segment here, dropping %d bytes",
			d.Magic, d.Size-record.LogOverhead, c.logSize-pos)
		c.damage(pos, c.logSize)
	default:
		c.tail(pos, fmt.Sprintf("the last batch is incomplete: it needs %d bytes, %d are left (a torn write)", d.Size, c.logSize-pos))
	}
	return nil
}

// tail reports bytes at the end of the file that hold no complete batch:
// FileLogInputStream stops before them and LogSegment.recover truncates
// the segment there.
func (c *segChecker) tail(pos int64, why string) {
	c.logFinding(LogTruncated, pos, nil, "%s; broker recovery would truncate the segment to %d bytes, dropping %d", why, pos, c.logSize-pos)
	c.damage(pos, c.logSize)
}

// crcMismatch reports a batch whose header is sound but whose CRC does not
// match. The iterator decided (LogIterator.JudgeMismatch, dump-log
// --salvage's decision too): when a plausible batch header starts where
// the batch claims to end (or it ends the file), only its contents are
// damaged, and the walk goes on after it (d is nil). Otherwise its length
// field is likely damaged too, and the walk resynchronises on the next
// valid batch, the end of d.
func (c *segChecker) crcMismatch(b *record.Batch, computed uint32, d *inspect.Damage) {
	pos, end := b.Position, b.End()
	what := fmt.Sprintf("stored CRC %d does not match the computed %d (%s over %d bytes)", b.CRC, computed, crcName(b.Magic), end-pos-record.CRCStart(b.Magic))
	if d != nil {
		c.logFinding(LogCRC, pos, ptr(b.LastOffset), "%s, and no batch starts where its length field says it ends (position %d): the length field is likely damaged too; %s",
			what, end, skipped(pos, d.End))
		c.damage(pos, d.End)
		return
	}
	c.logFinding(LogCRC, pos, ptr(b.LastOffset), "%s: the batch (offsets %s) is damaged; broker recovery would truncate the segment here, dropping %d bytes", what, offsetsText(b), c.logSize-pos)
	c.batch(b, false, -1)
}

func crcName(magic int8) string {
	if magic >= 2 {
		return "CRC-32C"
	}
	return "CRC-32"
}

func offsetsText(b *record.Batch) string {
	if b.BaseOffset < 0 || b.BaseOffset == b.LastOffset {
		return fmt.Sprint(b.LastOffset)
	}
	return fmt.Sprintf("%d..%d", b.BaseOffset, b.LastOffset)
}

// offsetTracker checks that batch offsets increase and stay inside the
// segment. It holds back the latest batch by one step, so that when a
// batch's offsets run ahead of both neighbours (a damaged base offset,
// which the v2 CRC does not cover) that batch, not its successor, is blamed
// and kept out of the index checks.
type offsetTracker struct {
	base  int64 // segment base offset
	limit int64 // next segment's base offset; MaxInt64 when there is none

	slots      [2]region // the batch held back (slots[pend]) and the next one
	pend       int
	hasPending bool

	ref     inLine // the last batch whose offsets were in line
	hasRef  bool
	ref2    int64 // last offset of the in-line batch before ref
	hasRef2 bool

	// Batches reaching the next segment's base offset, reported at the end
	// as log.offset-range or segment.overlap.
	reachCount int
	reachPos   int64
	reachOff   int64

	// A run of batches below the base or not representable, reported once.
	runKind  outOfRange
	runCount int
	runPos   int64
	runFirst int64
	runLast  int64
}

// outOfRange says how a batch's offsets leave the segment's range, if they
// do (a run of batches of one kind is reported once).
type outOfRange uint8

const (
	inRange   outOfRange = iota
	belowBase            // below the segment's base offset
	overflows            // more than 2^31-1 above it: no relative offset
	wraps                // the last offset wrapped past 2^63-1
)

// inLine is what the tracker keeps of a batch whose offsets were in line.
type inLine struct{ pos, base, last int64 }

func (b inLine) lowest() int64 { return lowestOffset(b.base, b.last) }

func inLineOf(r *region) inLine { return inLine{r.pos, r.base, r.last} }

// next is the slot the next batch's region is written to for push.
func (t *offsetTracker) next() *region { return &t.slots[1-t.pend] }

// push takes r, written to next() (the tracker may mark it an outlier),
// and delivers the batch before it: a batch is held back until the next
// one has been seen, which may blame it for an order problem.
func (t *offsetTracker) push(c *segChecker, r *region) {
	low := r.lowest()
	kind := inRange
	switch {
	case r.base >= 0 && r.last < r.base:
		// base + lastOffsetDelta (delta >= 0) went past 2^63-1 and wrapped.
		// The broker's range check, in the same wrapping arithmetic, can let
		// such a batch pass; no real offset is there.
		kind = wraps
	case low < t.base:
		kind = belowBase
	case r.last-t.base > math.MaxInt32:
		kind = overflows
	}
	if kind != t.runKind {
		t.flushRun(c)
	}
	if kind != inRange {
		if t.runCount == 0 {
			t.runKind, t.runPos, t.runFirst = kind, r.pos, low
		}
		t.runCount++
		t.runLast = r.last
		r.outlier = true
	} else {
		t.order(c, r)
		if r.last >= t.limit && !r.outlier {
			if t.reachCount == 0 {
				t.reachPos, t.reachOff = r.pos, low
			}
			t.reachCount++
		}
	}
	if t.hasPending {
		c.deliver(&t.slots[t.pend])
	}
	t.pend, t.hasPending = 1-t.pend, true // r's slot
}

// order checks r against the last in-line batch: its base offset must be
// above that batch's last offset (for a legacy compressed wrapper, whose
// first offset is not in its header, its last offset must be).
func (t *offsetTracker) order(c *segChecker, r *region) {
	after := func(last int64) bool {
		if r.base < 0 {
			return r.last > last
		}
		return r.base > last
	}
	if !t.hasRef || after(t.ref.last) {
		if t.hasRef {
			t.ref2, t.hasRef2 = t.ref.last, true
		}
		t.ref, t.hasRef = inLineOf(r), true
		return
	}
	prev := t.ref
	pending := &t.slots[t.pend]
	if t.hasRef2 && after(t.ref2) && r.last < prev.lowest() && t.hasPending && pending.pos == prev.pos {
		// The previous batch runs ahead of both neighbours: blame it.
		c.logFinding(LogOffsetOrder, prev.pos, ptr(prev.lowest()),
			"batch offsets %s run ahead of the next batch (position %d, offsets %s) and follow the one before it (last offset %d): its base offset field is likely damaged (the v2 CRC does not cover it)",
			rangeText(prev.base, prev.last), r.pos, rangeText(r.base, r.last), t.ref2)
		pending.outlier = true
		if prev.last >= t.limit && t.reachCount > 0 {
			t.reachCount-- // no longer counted as reaching the next segment
		}
		t.ref = inLineOf(r)
		return
	}
	c.logFinding(LogOffsetOrder, r.pos, ptr(r.lowest()),
		"batch offsets %s do not follow the previous batch at position %d, whose last offset is %d",
		rangeText(r.base, r.last), prev.pos, prev.last)
	r.outlier = true // its offsets are in conflict: index checks do not rely on them
	if r.last > prev.last {
		t.ref2, t.hasRef2 = prev.last, true
		t.ref = inLineOf(r)
	}
}

func rangeText(base, last int64) string {
	if base < 0 || base == last {
		return fmt.Sprint(last)
	}
	return fmt.Sprintf("%d..%d", base, last)
}

func (t *offsetTracker) flushRun(c *segChecker) {
	if t.runCount == 0 {
		return
	}
	what := fmt.Sprintf("holds offsets %d..%d, below the segment's base offset %d (LogSegment requires base offset <= every offset in it)", t.runFirst, t.runLast, t.base)
	switch t.runKind {
	case overflows:
		what = fmt.Sprintf("holds offsets up to %d, which cannot be stored relative to the base offset %d (more than 2^31-1 above it; LogSegmentOffsetOverflowException)", t.runLast, t.base)
	case wraps:
		what = fmt.Sprintf("starts at offset %d and its last offset delta reaches past 2^63-1 (the last offset wraps to %d)", t.runFirst, t.runLast)
	}
	if t.runCount == 1 {
		c.logFinding(LogOffsetRange, t.runPos, ptr(t.runFirst), "the batch %s", what)
	} else {
		c.logFinding(LogOffsetRange, t.runPos, ptr(t.runFirst), "%d batches from this position on: the first %s", t.runCount, what)
	}
	t.runKind, t.runCount = inRange, 0
}

// flush delivers the batch held back.
func (t *offsetTracker) flush(c *segChecker) {
	t.flushRun(c)
	if t.hasPending {
		c.deliver(&t.slots[t.pend])
		t.hasPending = false
	}
}

// finish reports batches reaching the next segment's base offset: as
// segment.overlap when the next segment's first batch starts at or below
// this segment's last offset (the same offsets are in both), else as
// log.offset-range.
func (t *offsetTracker) finish(c *segChecker) {
	t.flush(c)
	j := c.job
	if t.reachCount == 0 || !j.hasNext {
		// Without a next segment the limit is math.MaxInt64, reached only
		// by a batch ending at 2^63-1: nothing to overlap.
		return
	}
	// Only now is the next segment's first offset needed: most segments
	// never open their successor's .log.
	nextFirst, nextFirstPos := readFirstOffset(j.next.Log, j.next.BaseOffset)
	if nextFirst <= c.lastOff {
		f := Finding{
			Severity: SeverityError, Check: SegmentOverlap, File: j.next.Log,
			SegmentBaseOffset: ptr(j.next.BaseOffset), Offset: ptr(nextFirst),
			Message: fmt.Sprintf("this segment starts at offset %d but the previous segment %s holds offsets up to %d (from position %d on): offsets %d..%d are in both, and a broker reads them only here (LogSegments.floorSegment)",
				nextFirst, filepath.Base(c.logName), c.lastOff, t.reachPos, nextFirst, c.lastOff),
		}
		if nextFirstPos >= 0 {
			f.Position = ptr(nextFirstPos)
		}
		c.sink.addNext(f)
		c.logDamaged = true
		return
	}
	n := ""
	if t.reachCount > 1 {
		n = fmt.Sprintf(" (and %d later batches)", t.reachCount-1)
	}
	c.logFinding(LogOffsetRange, t.reachPos, ptr(t.reachOff),
		"the batch%s reaches offset %d, at or above the next segment's base offset %d: a broker looks those offsets up in the next segment (LogSegments.floorSegment)", n, c.lastOff, t.limit)
}

// readFirstOffset reads the first batch header of a segment's .log: its
// position is 0 unless the file is empty or starts with damage (then -1).
func readFirstOffset(path string, base int64) (off, pos int64) {
	if path == "" {
		return base, -1
	}
	f, err := fileio.Open(path, fileio.Options{CacheNeutral: true})
	if err != nil {
		return base, -1
	}
	defer f.Close()
	var hdr [record.HeaderReadSize]byte
	n := min(int64(len(hdr)), f.Size())
	if n < record.HeaderSizeUpToMagic+1 {
		return base, -1
	}
	if k, _ := f.ReadAt(hdr[:n], 0); int64(k) < n {
		return base, -1
	}
	b, err := record.ParseBatch(hdr[:n], 0, path)
	if err != nil || record.HeaderProblem(&b) != "" {
		return base, -1
	}
	off = b.LastOffset
	if b.BaseOffset >= 0 {
		off = b.BaseOffset
	}
	if off < base {
		// The next segment reports its own log.offset-range.
		return base, -1
	}
	return off, 0
}
