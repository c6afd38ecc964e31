package inspect

import (
	"errors"
	"fmt"
	"sort"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// IndexHit is the index slot a lookup started from.
type IndexHit struct {
	Slot     int
	Offset   int64
	Position int64
}

// OffsetLookup is the answer to "where is offset N", as the contract's
// lookup JSON has it.
type OffsetLookup struct {
	TargetOffset      int64
	Found             bool
	Reason            string
	Segment           string // .log base name
	SegmentBaseOffset int64
	IndexEntry        *IndexHit
	Batch             record.Batch
	ScannedBatches    int
	ScannedBytes      int64
	Trace             []TraceStep
	// Misleading lists the offset index entries the lookup followed that
	// contradict the batch they lead to (checkOffsetEntry). The answer
	// above is still the broker's, which follows them; ByScan is then the
	// answer with every segment holding such an entry scanned from
	// position 0 instead: what the log holds. Both nil on a healthy index.
	Misleading []MisleadingEntry
	ByScan     *OffsetLookup
	// Stopped (ByScan only): not found because the scan of a segment
	// whose entry misled met damage, in Segment (Reason says what).
	Stopped bool
}

// LookupOptions tune a lookup.
type LookupOptions struct {
	Trace bool
	// Broker is the partition's broker state (Partition.ReadBrokerState);
	// nil: the lookup reads it from the partition's data directory.
	Broker *BrokerState
	// RecoveredIndexes builds in memory the offset and time index broker
	// recovery would write for a segment (nothing written). A lookup uses
	// them for a segment the broker's loader rebuilds before it serves
	// anything (RebuiltAtLoad: its .index missing, its .txnindex failing
	// the sanity check), and for one whose .timeindex is missing
	// when the next start recovers that segment (otherwise the broker
	// creates an empty time index). Nil: such a segment is searched without
	// the missing index, from position 0.
	RecoveredIndexes func(SegmentFiles) (index, timeIndex []byte, err error)
	// CheckPassedOver makes a timestamp lookup also judge what each
	// segment it passes over took its largest timestamp from (the time
	// index's last entry, or the .log's modification time when there is
	// none): a segment opened and a few headers read each, where the
	// broker's choice reads one slot. A search sets it, so that it never
	// passes over a segment holding what it looks for; a lookup judges
	// only the entries of the segment it searches.
	CheckPassedOver bool
}

// brokerState is opts.Broker, or the state read from p's data directory.
func (p *Partition) brokerState(opts LookupOptions) (*BrokerState, error) {
	if opts.Broker != nil {
		return opts.Broker, nil
	}
	return p.ReadBrokerState()
}

// openForLookup opens a segment as the broker serving a lookup holds it:
// with the indexes its loader rebuilds when one is missing
// (opts.RecoveredIndexes), and knowing whether its next start would
// recover it (Segment.KeptBecause).
func openForLookup(sf SegmentFiles, st *BrokerState, opts LookupOptions, tr *tracer) (*Segment, error) {
	seg, err := OpenSegment(sf, SegmentOptions{})
	if err != nil {
		return nil, err
	}
	seg.KeptBecause = st.kept(sf.BaseOffset)
	rebuild := ""
	if sf.Log != "" {
		// A .txnindex that cannot be read leaves the segment as it is:
		// the lookup never reads that file otherwise.
		rebuild, _ = RebuiltAtLoad(sf)
	}
	switch {
	case sf.Log == "", rebuild != "":
	case sf.TimeIndex == "" && seg.KeptBecause == "":
		rebuild = RebuildTimeIndexMissing
	case sf.TimeIndex == "":
		tr.note(TraceStep{Why: WhyTimeIndexKept, Segment: sf.Name(), KeptBecause: seg.KeptBecause})
	}
	if rebuild == "" {
		return seg, nil
	}
	if opts.RecoveredIndexes == nil {
		tr.note(TraceStep{Why: WhyUnrebuilt, Segment: sf.Name(), Rebuild: rebuild})
		return seg, nil
	}
	idx, tidx, err := opts.RecoveredIndexes(sf)
	if err != nil {
		// Recovery itself fails here (the broker's load would too): the
		// files as they are are all there is to search.
		if tr != nil {
			tr.note(TraceStep{Why: WhyRebuildFailed, Segment: sf.Name(), Rebuild: rebuild, Detail: err.Error()})
		}
		return seg, nil
	}
	seg.UseIndexes(idx, tidx)
	if tr != nil {
		tr.note(TraceStep{Why: WhyRebuilt, Segment: sf.Name(), Rebuild: rebuild, RebuiltOffsetEntries: len(idx) / 8, RebuiltTimeEntries: len(tidx) / 12})
	}
	return seg, nil
}

// floorSegment is LogSegments.floorSegment: the index of the segment with
// the largest base offset <= offset, or -1.
func floorSegment(segs []SegmentFiles, offset int64) int {
	return sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset > offset }) - 1
}

// LookupOffset answers a fetch from offset target the way a broker does
// (LocalLog.read, LogSegment.translateOffset, FileRecords.searchForOffsetWithSize):
// the segment with the largest base offset <= target, its offset index's
// largest entry <= target (or position 0), then a scan to the first batch
// whose last offset >= target. When that segment has no such batch (the
// offset was compacted away at its end) the next segment's first batch is the
// answer. Only the chosen segments are opened; only batch headers are read.
func (p *Partition) LookupOffset(target int64, opts LookupOptions) (*OffsetLookup, error) {
	var tr *tracer
	if opts.Trace {
		tr = &tracer{}
	}
	res := &OffsetLookup{TargetOffset: target}
	if len(p.Segments) == 0 {
		// A broker always has a segment; a directory read without any
		// holds no offset at all.
		res.Reason = fmt.Sprintf("%s holds no segment", p.Dir)
		tr.note(TraceStep{Why: WhyAnswer, Detail: res.Reason})
		res.Trace = tr.result()
		return res, nil
	}
	st, err := p.brokerState(opts)
	if err != nil {
		return nil, err
	}
	i := floorSegment(p.Segments, target)
	if i < 0 {
		res.Reason = fmt.Sprintf("offset %d is below the first segment's base offset %d", target, p.Segments[0].BaseOffset)
		tr.note(TraceStep{Why: WhyAnswer, Detail: res.Reason})
		res.Trace = tr.result()
		return res, nil
	}
	start, src := st.logStartOrFirst(p.Segments)
	if src == LogStartFromCheckpoint {
		tr.note(TraceStep{Why: WhyLogStartAbove, Offset: start, Source: src, FirstBase: p.Segments[0].BaseOffset})
	}
	if src == LogStartFromCheckpoint && target < start {
		// UnifiedLog.read / LocalLog.read: OffsetOutOfRangeException
		// below the log start offset.
		res.Reason = fmt.Sprintf("offset %d is below the log start offset %d (from %s; the records below it were deleted by DeleteRecords or retention, and a broker answers OFFSET_OUT_OF_RANGE)", target, start, src)
		tr.note(TraceStep{Why: WhyAnswer, Detail: res.Reason})
		res.Trace = tr.result()
		return res, nil
	}
	if tr != nil {
		tr.add(TraceStep{Step: StepSegment, Why: WhyFloorSegment, Segment: p.Segments[i].Name(), Candidates: len(p.Segments), Target: target})
	}
	err = p.lookupOffsetFrom(i, target, res, st, opts, tr, false)
	if err != nil && (len(res.Misleading) == 0 || !fileio.IsCorrupt(err)) {
		return nil, err
	}
	if len(res.Misleading) > 0 {
		scan := &OffsetLookup{TargetOffset: target}
		if err := p.lookupOffsetFrom(i, target, scan, st, opts, nil, true); err != nil {
			return nil, err
		}
		scan.Misleading = nil
		res.ByScan = scan
	}
	if err != nil {
		return nil, &MisledError{Err: err, Misleading: res.Misleading, ByScanOffset: res.ByScan}
	}
	res.Trace = tr.result()
	return res, nil
}

// lookupOffsetFrom is the broker's read of target from segment i on (the
// floor segment), into res. byScan: a segment whose offset index entry
// misleads is scanned from position 0 instead (OffsetLookup.ByScan).
func (p *Partition) lookupOffsetFrom(i int, target int64, res *OffsetLookup, st *BrokerState, opts LookupOptions, tr *tracer, byScan bool) error {
	logEnd := p.Segments[i].BaseOffset
	for ; i < len(p.Segments); i++ {
		seg, err := openForLookup(p.Segments[i], st, opts, tr)
		if err != nil {
			return err
		}
		found, next, stop, err := lookupInSegment(seg, target, res, tr, byScan)
		seg.Close()
		if err != nil {
			return err
		}
		if found {
			res.Found = true
			res.Segment = p.Segments[i].Name()
			res.SegmentBaseOffset = p.Segments[i].BaseOffset
			return nil
		}
		if stop {
			res.Stopped, res.Segment, res.SegmentBaseOffset = true, p.Segments[i].Name(), p.Segments[i].BaseOffset
			return nil
		}
		logEnd = max(next, logEnd)
		if i+1 < len(p.Segments) {
			if tr != nil {
				tr.add(TraceStep{Step: StepSegment, Why: WhyNextSegment, Segment: p.Segments[i+1].Name(), Candidates: len(p.Segments),
					Target: target, File: p.Segments[i].Name()})
			}
		}
	}
	res.Reason = fmt.Sprintf("offset %d is at or after the log end offset %d", target, logEnd)
	tr.note(TraceStep{Why: WhyAnswer, Detail: res.Reason})
	return nil
}

// lookupInSegment does steps 3-4 of the broker's read in one segment and
// judges the index entry it followed (checkOffsetEntry). It returns
// whether a batch was found, and else the next offset after the last
// batch it saw (the segment's log end offset when the scan reached it);
// stop when, byScan, the scan of a segment whose entry misled stops at
// damage (res.Reason says where). The broker's read fails on damage with
// an error, misled or not.
func lookupInSegment(seg *Segment, target int64, res *OffsetLookup, tr *tracer, byScan bool) (found bool, next int64, stop bool, err error) {
	var st scanStats
	r := seg.guarded()
	b, hit, found, err := seg.lookupOffset(r, target, tr, &st)
	res.ScannedBatches += st.batches
	res.ScannedBytes += st.bytes
	res.IndexEntry = nil
	if hit.Slot >= 0 {
		res.IndexEntry = &hit
	}
	if err != nil && !fileio.IsCorrupt(err) {
		return false, st.next, false, err
	}
	m, cerr := seg.checkOffsetEntry(r, hit, target, true)
	if cerr != nil {
		return false, st.next, false, cerr
	}
	if m == nil {
		if err != nil {
			return false, st.next, false, err
		}
		if found {
			res.Batch = b
		}
		return found, st.next, false, nil
	}
	res.Misleading = append(res.Misleading, *m)
	if tr != nil {
		tr.note(TraceStep{Why: WhyEntryMisleads, File: m.File, Detail: m.String()})
	}
	if byScan {
		st = scanStats{next: seg.BaseOffset}
		b, _, found, err = seg.scanToOffset(seg.batches(r.log, 0), target, nil, &st, hit)
	}
	if err != nil {
		if !byScan || !fileio.IsCorrupt(err) {
			return false, st.next, false, err
		}
		res.Reason = fmt.Sprintf("a scan of %s for offset %d stops at damage: %v", seg.LogName, target, err)
		return false, st.next, true, nil
	}
	if found {
		res.Batch = b
	}
	return found, st.next, false, nil
}

// scanStats is what a lookup in one segment scanned.
type scanStats struct {
	batches int
	bytes   int64
	next    int64 // the offset after the last batch seen; the base offset when none
	// first is the first batch seen (batches >= 1), prev the last one
	// whose last offset is below the target (batches >= 2 when found).
	first, prev record.Batch
}

// LookupOffset is the broker's read of offset target in this segment
// (LogSegment.translateOffset, FileRecords.searchForOffsetWithSize): the
// offset index's largest entry <= target among the entries before any
// zero padding, as the broker that holds the segment counts them (hit;
// Slot -1 when there is none, or no index, and the scan starts at
// position 0), then a scan of batch
// headers to the first batch whose last offset >= target. found is false
// when the segment holds no such batch (a damaged tail ends the scan
// silently, as it does for the broker).
//
// It allocates nothing: the index search and the headers-only iterator use
// buffers the Segment keeps, so a Segment must not be used by several
// goroutines at once.
func (s *Segment) LookupOffset(target int64) (b record.Batch, hit IndexHit, found bool, err error) {
	var st scanStats
	if s.unguarded(func(r readers) { b, hit, found, err = s.lookupOffset(r, target, nil, &st) }) {
		st = scanStats{}
		return s.lookupOffset(s.guarded(), target, nil, &st)
	}
	return b, hit, found, err
}

func (s *Segment) lookupOffset(r readers, target int64, tr *tracer, st *scanStats) (record.Batch, IndexHit, bool, error) {
	st.next = s.BaseOffset
	start, hit, err := s.offsetStart(r, target, tr)
	if err != nil || start < 0 {
		return record.Batch{}, hit, false, err
	}
	return s.scanToOffset(s.batches(r.log, start), target, tr, st, hit)
}

// offsetStart is the first step of an offset lookup (OffsetIndex.lookup):
// the position the scan starts at, from the largest index entry at or
// below target among those before any padding (0 with none, or no
// index); -1 when the entry's position lies outside the log (a damaged
// entry): the lookup then finds nothing.
func (s *Segment) offsetStart(r readers, target int64, tr *tracer) (int64, IndexHit, error) {
	hit := IndexHit{Slot: -1, Offset: s.BaseOffset}
	start := int64(0)
	n, _, err := s.entries(r)
	if err != nil {
		return 0, hit, err
	}
	switch {
	case r.idx == nil:
		if tr != nil {
			tr.note(TraceStep{Why: WhyNoOffsetIndex, File: s.LogName})
		}
	case n == 0:
		s.tracePadding(tr, "offset", s.IndexName, n, r.idx.Slots())
		if tr != nil {
			tr.note(TraceStep{Why: WhyEmptyOffsetIndex, File: s.IndexName})
		}
	default:
		s.tracePadding(tr, "offset", s.IndexName, n, r.idx.Slots())
		e, slot, err := r.idx.LookupEntries(target, n, tr.probes("offset"))
		if err != nil {
			return 0, hit, fmt.Errorf("%s: %w", s.IndexName, err)
		}
		if slot < 0 {
			if tr != nil {
				tr.note(TraceStep{Why: WhyNoEntryBelow, Target: target})
			}
			break
		}
		hit = IndexHit{Slot: slot, Offset: e.Offset, Position: int64(e.Position)}
		if tr != nil {
			sl := slot
			tr.add(TraceStep{Step: StepIndexEntry, Why: WhyOffsetEntry, Index: "offset", Slot: &sl, Offset: e.Offset, EntryPos: int64(e.Position)})
		}
		start = int64(e.Position)
		if start < 0 || start > s.LogSize {
			if tr != nil {
				tr.note(TraceStep{Why: WhyEntryPastLog, Offset: s.LogSize})
			}
			return -1, hit, nil
		}
	}
	return start, hit, nil
}

// scanToOffset is the second step (FileRecords.searchForOffsetWithSize):
// the first batch sc yields whose last offset reaches target; not found
// at the end of the log or a torn tail, an error at other damage.
func (s *Segment) scanToOffset(sc *LogIterator, target int64, tr *tracer, st *scanStats, hit IndexHit) (record.Batch, IndexHit, bool, error) {
	for sc.Next() {
		b := sc.Batch()
		st.batches++
		st.bytes += b.Size
		st.next = b.LastOffset + 1
		if st.batches == 1 {
			st.first = *b
		}
		if b.LastOffset >= target {
			if tr != nil {
				tr.batch(b, TraceStep{Why: WhyLastOffsetReaches, Target: target})
			}
			return *b, hit, true, nil
		}
		st.prev = *b
		if tr != nil {
			tr.batch(b, TraceStep{Why: WhyLastOffsetBelow, Target: target})
		}
	}
	if err := sc.Err(); err != nil {
		if !errors.Is(err, fileio.ErrTorn) {
			return record.Batch{}, hit, false, err
		}
		if tr != nil {
			tr.note(TraceStep{Why: WhyScanStops, Detail: err.Error()})
		}
	}
	return record.Batch{}, hit, false, nil
}
