package inspect

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// Traffic over time, read from the time indexes without reading record
// data (kseg timeline).
//
// A time index entry (T, O) says that T is the largest timestamp of the
// segment up to and including the batch whose last offset is O
// (TimeIndex.maybeAppend from LogSegment.append). The offsets after the
// previous entry, up to O, and the log bytes holding them, are therefore
// attributed to time T. Where those bytes start and end is found as a
// fetch finds it: the offset index, then a few batch headers
// (Segment.LookupOffset of O+1, through an offsetCursor). The offsets and
// bytes after the last entry (an active segment's time index lags the log
// by up to index.interval.bytes) are attributed to the last entry's time.
// A segment without a usable time index (absent, empty, or its first entry
// a zero padding slot) is read from its batch headers instead: one mark
// per batch, at the largest timestamp so far.

// TrafficMark is one step of a segment's traffic: the offsets before
// EndOffset and the log bytes before EndPosition not covered by an earlier
// mark are attributed to Timestamp (-1: none: magic 0, or records written
// without one).
type TrafficMark struct {
	Timestamp   int64
	EndOffset   int64 // exclusive
	EndPosition int64 // exclusive
}

// SegmentTraffic is a segment's marks, in offset order; the last ends at
// the segment's next offset and its log size, so the marks cover the
// whole segment.
type SegmentTraffic struct {
	BaseOffset  int64
	Marks       []TrafficMark
	FromBatches bool // the time index was not usable: the marks come from batch headers
	// Why marks have no timestamp (FromBatches: a time index entry always
	// has one): Magic0, a batch of magic 0, which has no timestamp field;
	// NoTimestamp, a batch of magic 1 or 2 whose largest timestamp is -1
	// (RecordBatch.NO_TIMESTAMP: its records were written without one).
	Magic0, NoTimestamp bool
	// Misleading is the index entry that made the time index unusable:
	// one that contradicts the batch it leads to (MisleadingEntry). The
	// marks then come from the batch headers (FromBatches).
	Misleading *MisleadingEntry
}

// Traffic reads each segment's traffic marks.
func (p *Partition) Traffic() ([]SegmentTraffic, error) {
	out := make([]SegmentTraffic, 0, len(p.Segments))
	for _, sf := range p.Segments {
		if sf.Log == "" {
			continue // an index without its log holds no traffic
		}
		st, err := SegmentTrafficOf(sf)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// SegmentTrafficOf reads one segment's traffic marks.
func SegmentTrafficOf(sf SegmentFiles) (SegmentTraffic, error) {
	seg, err := OpenSegment(sf, SegmentOptions{})
	if err != nil {
		return SegmentTraffic{}, err
	}
	defer seg.Close()
	st := SegmentTraffic{BaseOffset: seg.BaseOffset}
	next, err := seg.NextOffset()
	if err != nil && !fileio.IsCorrupt(err) {
		return st, err
	}
	if err != nil {
		// The log is damaged past its last index entry, so its end is
		// not known from the indexes: the batch headers give what is
		// whole before the damage, and the bytes from there on are
		// counted at the last time.
		st.FromBatches = true
		err = batchMarks(seg, &st)
		return st, err
	}
	valid := 0
	if seg.TimeIndex != nil {
		if valid, err = seg.TimeIndex.ValidEntries(); err != nil {
			return st, fmt.Errorf("%s: %w", seg.TimeIndexName, err)
		}
		if valid == 1 && seg.TimeIndex.Slots() > 1 {
			// Slot 0 always counts, but a zero slot 0 followed by
			// padding is a preallocated index nothing was written to.
			if e, err := seg.TimeIndex.Entry(0); err == nil && e.Timestamp == 0 && e.Offset == seg.BaseOffset {
				valid = 0
			}
		}
	}
	if valid == 0 && next > seg.BaseOffset {
		st.FromBatches = true
		err = batchMarks(seg, &st)
		return st, err
	}
	last := TrafficMark{Timestamp: -1, EndOffset: seg.BaseOffset}
	fetch := newOffsetCursor(seg) // the ends only grow
	for i := range valid {
		e, err := seg.TimeIndex.Entry(i)
		if err != nil {
			return st, fmt.Errorf("%s: slot %d: %w", seg.TimeIndexName, i, err)
		}
		end := min(max(record.OffsetAfter(e.Offset), last.EndOffset), next)
		pos := seg.LogSize
		if end < next {
			b, found, err := fetch.lookup(end)
			if err != nil && !errors.Is(err, fileio.ErrTorn) && !fileio.IsCorrupt(err) {
				return st, err
			}
			m := fetch.misleading
			if m == nil && found && end == record.OffsetAfter(e.Offset) {
				m = fetch.timeEntryProblem(TimeHit{Slot: i, Timestamp: e.Timestamp, Offset: e.Offset}, &b)
			}
			if m != nil {
				// An entry that misleads: the segment's traffic is read
				// from its batch headers instead.
				st.FromBatches, st.Misleading = true, m
				err = batchMarks(seg, &st)
				return st, err
			}
			if found {
				pos = b.Position
			}
		}
		m := TrafficMark{Timestamp: e.Timestamp, EndOffset: end, EndPosition: max(pos, last.EndPosition)}
		st.Marks = append(st.Marks, m)
		last = m
	}
	// The rest of the segment: at the last entry's time.
	st.Marks = append(st.Marks, TrafficMark{Timestamp: last.Timestamp, EndOffset: next, EndPosition: seg.LogSize})
	return st, nil
}

// timeEntryProblem judges time index entry hit by what the cursor's
// fetch of the offset after it read (b, the batch holding that offset):
// the batch holding hit's offset is b itself, or the batch before it when
// the fetch read that one; it must carry hit's timestamp as its max
// (timeBatchProblem). nil also when neither batch is known to hold it.
func (c *offsetCursor) timeEntryProblem(hit TimeHit, b *record.Batch) *MisleadingEntry {
	holder := b
	if b.BaseOffset < 0 || b.BaseOffset > hit.Offset {
		if !c.hasPrev || c.prev.LastOffset < hit.Offset {
			return nil
		}
		holder = &c.prev
	}
	if problem := timeBatchProblem(hit, holder, holder.BaseOffset); problem != "" {
		return c.s.timeMisleads(hit, problem)
	}
	return nil
}

// batchMarks sets st's marks from seg's batch headers: one per batch, at
// the largest timestamp so far, the last ending at the log's size (a torn
// or damaged tail included); and says why a batch had no timestamp.
func batchMarks(seg *Segment, st *SegmentTraffic) error {
	var marks []TrafficMark
	maxTS := int64(-1)
	end := seg.BaseOffset
	sc := seg.Batches(0)
	for sc.Next() {
		b := sc.Batch()
		if b.MaxTimestamp < 0 {
			st.Magic0 = st.Magic0 || b.Magic == 0
			st.NoTimestamp = st.NoTimestamp || b.Magic > 0
		}
		maxTS = max(maxTS, b.MaxTimestamp)
		end = max(end, b.NextOffset())
		marks = append(marks, TrafficMark{Timestamp: maxTS, EndOffset: end, EndPosition: b.Position + b.Size})
	}
	if err := sc.Err(); err != nil && !errors.Is(err, fileio.ErrTorn) && !fileio.IsCorrupt(err) {
		return err
	}
	st.Marks = append(marks, TrafficMark{Timestamp: maxTS, EndOffset: end, EndPosition: seg.LogSize})
	return nil
}

// TimelineBucket is the traffic of one time bucket: offsets (Records) and
// log bytes attributed to times in [Start, End).
type TimelineBucket struct {
	Start, End int64 // ms; End exclusive
	Records    int64
	Bytes      int64
}

// TimeSpan is the first and last timestamp of the marks (-1, -1 when none
// has a timestamp).
func TimeSpan(segs []SegmentTraffic) (from, to int64) {
	from, to = -1, -1
	for _, s := range segs {
		for _, m := range s.Marks {
			if m.Timestamp < 0 {
				continue
			}
			if from < 0 || m.Timestamp < from {
				from = m.Timestamp
			}
			to = max(to, m.Timestamp)
		}
	}
	return from, to
}

// AutoBucket is the width (ms) of about n buckets over span ms (kseg
// timeline's default width, and kseg report's): span / n rounded to the
// nearest whole second below a minute, whole minute below an hour, else
// whole hour; never less than a second.
func AutoBucket(span int64, n int) int64 {
	w := float64(span) / float64(n)
	unit := time.Second.Milliseconds()
	switch {
	case w >= float64(time.Hour.Milliseconds()):
		unit = time.Hour.Milliseconds()
	case w >= float64(time.Minute.Milliseconds()):
		unit = time.Minute.Milliseconds()
	}
	return max(int64(math.Round(w/float64(unit))), 1) * unit
}

// BucketStart is the start of the bucket of width bucket (ms) holding t:
// buckets are aligned on multiples of their width since the epoch.
func BucketStart(t, bucket int64) int64 { return t - t%bucket }

// AddTraffic adds a partition's traffic to buckets, which cover
// [buckets[0].Start, buckets[len-1].End) in contiguous buckets of width
// bucket. The offsets of a mark are those after the previous mark's end
// (for a partition's first mark, from its first segment's base offset;
// for a segment's first mark, from the previous segment's end, so that
// offsets between segments are counted too); its bytes, those after the
// previous mark of its segment. Marks without a timestamp are counted
// with the next mark that has one (or, at the end, the last that had).
// Marks outside the buckets are left out. It returns the offsets and
// bytes added, and those left out for having no timestamp at all.
func AddTraffic(buckets []TimelineBucket, bucket int64, segs []SegmentTraffic) (records, bytes, untimedRecords, untimedBytes int64) {
	if len(segs) == 0 {
		return 0, 0, 0, 0
	}
	first := int64(0)
	if len(buckets) > 0 {
		first = buckets[0].Start
	}
	add := func(ts, n, b int64) {
		if len(buckets) == 0 || ts < first {
			return
		}
		i := (ts - first) / bucket
		if i >= int64(len(buckets)) {
			return
		}
		buckets[i].Records = CappedSum(buckets[i].Records, n)
		buckets[i].Bytes = CappedSum(buckets[i].Bytes, b)
		records = CappedSum(records, n)
		bytes = CappedSum(bytes, b)
	}
	prevEnd := segs[0].BaseOffset
	var pendN, pendB int64 // offsets and bytes waiting for a timestamp
	lastTS := int64(-1)
	for _, s := range segs {
		prevPos := int64(0)
		for _, m := range s.Marks {
			n := max(m.EndOffset-prevEnd, 0)
			b := max(m.EndPosition-prevPos, 0)
			prevEnd = max(prevEnd, m.EndOffset)
			prevPos = max(prevPos, m.EndPosition)
			if m.Timestamp < 0 {
				pendN = CappedSum(pendN, n)
				pendB = CappedSum(pendB, b)
				continue
			}
			add(m.Timestamp, CappedSum(n, pendN), CappedSum(b, pendB))
			pendN, pendB = 0, 0
			lastTS = m.Timestamp
		}
	}
	if pendN > 0 || pendB > 0 {
		if lastTS >= 0 {
			add(lastTS, pendN, pendB)
		} else {
			untimedRecords, untimedBytes = pendN, pendB
		}
	}
	return records, bytes, untimedRecords, untimedBytes
}

// NewBuckets returns the contiguous buckets of width bucket (ms) that
// cover [from, to]; nil when from is negative. The last bucket's end is
// at most 2^63-1 (math.MaxInt64): a bucket holding the largest timestamp
// there is ends there (an exclusive end past it does not fit in an int64).
func NewBuckets(from, to, bucket int64) []TimelineBucket {
	if from < 0 || to < from || bucket <= 0 {
		return nil
	}
	start := BucketStart(from, bucket)
	n := (to-start)/bucket + 1
	out := make([]TimelineBucket, n)
	for i := range out {
		out[i].Start = start + int64(i)*bucket
		out[i].End = CappedSum(out[i].Start, bucket)
	}
	return out
}

// CappedSum is a+b for non-negative a and b, or math.MaxInt64 when the
// sum does not fit: counts of offsets and bytes, and bucket ends, never
// wrap to negative numbers.
func CappedSum(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// offsetCursor answers LookupOffset for a series of non-decreasing targets
// in one segment, each answer exactly LookupOffset's, without scanning the
// same batches again and again. A fetch scans from the position the offset
// index gives; with no offset index, an empty one, or one whose last entry
// lies far behind the targets (a stale or truncated .index), every fetch
// starts at the same place, and with a damaged one (positions reversed or
// shuffled) each starts somewhere behind its answer: a timeline over such
// a segment made one long scan per time index entry, quadratic in the
// segment's size. So once a fetch has scanned more than chainAfterBatches
// batches, the cursor learns which of the positions fetches start at are
// boundaries of the log's chain of batches from position 0 (offsetChain),
// and answers a fetch from such a boundary with one walk of that chain for
// all the targets; any other fetch is LookupOffset's own scan.
type offsetCursor struct {
	s          *Segment
	chain      *offsetChain
	chainTried bool
	// What the last lookup saw besides its answer: the batch just before
	// the answer, when it read it (hasPrev), and the offset index entry it
	// started from when the batch read there contradicts it
	// (offsetBatchProblem, from the header alone: a timeline reads no
	// record data). Where no batch can be read the log is taken as
	// damaged there, which the timeline reads around.
	prev       record.Batch
	hasPrev    bool
	misleading *MisleadingEntry
}

// chainAfterBatches is how long a fetch's scan may be before the cursor
// builds its offsetChain. A fetch the index places scans the batches of
// one index.interval.bytes, at the default 4096 bytes at most 67 of the
// smallest (61-byte) batches; the chain costs two walks of the log. A
// variable for the tests.
var chainAfterBatches = 256

func newOffsetCursor(s *Segment) *offsetCursor { return &offsetCursor{s: s} }

// lookup is s.LookupOffset(target) with the log read through the
// Segment's guarded readers.
func (c *offsetCursor) lookup(target int64) (record.Batch, bool, error) {
	s := c.s
	r := s.guarded()
	c.hasPrev, c.misleading = false, nil
	start, hit, err := s.offsetStart(r, target, nil)
	if err != nil {
		return record.Batch{}, false, err
	}
	if start < 0 {
		return record.Batch{}, false, nil
	}
	if c.chain != nil {
		b, found, err, ok := c.chain.fetch(start, target)
		if ok {
			c.prev, c.hasPrev = c.chain.prev, c.chain.hasPrev
			return b, found, err
		}
		if c.chain.has && start > c.chain.cur.Position && hit.Slot >= 0 {
			c.misleading = s.offsetMisleads(hit, fmt.Sprintf("the batch at position %d, before it, holds offset %d: a scan from there skips it", c.chain.cur.Position, target))
		}
	}
	var st scanStats
	b, _, found, err := s.scanToOffset(s.batches(r.log, start), target, nil, &st, hit)
	if st.batches > chainAfterBatches && !c.chainTried {
		c.chainTried = true
		c.chain = newOffsetChain(s, r)
	}
	c.prev, c.hasPrev = st.prev, found && st.batches >= 2
	if hit.Slot >= 0 && c.misleading == nil && st.batches > 0 {
		if problem := s.offsetBatchProblem(&st.first, st.first.BaseOffset, target); problem != "" {
			c.misleading = s.offsetMisleads(hit, problem)
		}
	}
	return b, found, err
}

// offsetChain answers fetches that start at a batch boundary of the log's
// chain of batches from position 0 (the batches a scan from 0 yields), for
// non-decreasing targets. A fetch for target from such a boundary at or
// before the chain's first batch whose last offset reaches target ends at
// that batch: every batch before it ends below target. So one walk of the
// chain, advanced target by target, answers them all. Memory: the offset
// index's positions, 8 bytes each.
type offsetChain struct {
	bounds  []int64      // position 0 and the offset index's positions that are boundaries of the chain, sorted
	it      *LogIterator // walks the chain, target by target
	cur     record.Batch // the first batch of the chain whose last offset reaches the last target
	has     bool         // cur holds a batch
	prev    record.Batch // the batch of the chain before cur
	hasPrev bool
	ended   bool  // the chain ended before any batch reached it
	err     error // how it ended: damage (nil at its end or a torn tail)
}

// newOffsetChain walks the chain once to find which index positions are
// boundaries of it (position 0, where every fetch without an index entry
// below its target starts, is the chain's start); nil when the index
// cannot be read (the cursor then scans as LookupOffset does).
func newOffsetChain(s *Segment, r readers) *offsetChain {
	bounds := []int64{0}
	if r.idx != nil {
		n, _, err := s.entries(r)
		if err != nil {
			return nil
		}
		for i := range n {
			e, err := r.idx.Entry(i)
			if err != nil {
				return nil
			}
			if p := int64(e.Position); p > 0 && p <= s.LogSize {
				bounds = append(bounds, p)
			}
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	it := NewLogIterator(IterOptions{Headers: true})
	it.ResetReader(r.log, s.LogName, s.LogSize, 0)
	k, kept := 1, 1 // bounds[0] is 0
	for k < len(bounds) && it.Next() {
		p := it.Batch().Position
		for k < len(bounds) && bounds[k] < p {
			k++ // not a boundary of the chain
		}
		if k < len(bounds) && bounds[k] == p {
			bounds[kept] = p
			kept++
			k++
		}
	}
	c := &offsetChain{bounds: bounds[:kept], it: it}
	it.ResetReader(r.log, s.LogName, s.LogSize, 0)
	return c
}

// fetch answers the fetch for target from start when start is a boundary
// of the chain at or before the answer (ok); otherwise the caller scans.
func (c *offsetChain) fetch(start, target int64) (b record.Batch, found bool, err error, ok bool) {
	if _, in := slices.BinarySearch(c.bounds, start); !in {
		return record.Batch{}, false, nil, false
	}
	for !c.ended && (!c.has || c.cur.LastOffset < target) {
		if c.it.Next() {
			c.prev, c.hasPrev = c.cur, c.has
			c.cur, c.has = *c.it.Batch(), true
			continue
		}
		c.ended = true
		if err := c.it.Err(); err != nil && !errors.Is(err, fileio.ErrTorn) {
			c.err = err
		}
	}
	if c.ended {
		return record.Batch{}, false, c.err, true // the fetch walks the chain to the same end
	}
	if start <= c.cur.Position {
		return c.cur, true, nil, true
	}
	return record.Batch{}, false, nil, false
}
