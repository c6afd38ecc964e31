package inspect

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// ListOffsets special timestamps (ListOffsetsRequest), as kseg reports them
// in target_timestamp for earliest, latest and max.
const (
	TimestampLatest   int64 = -1
	TimestampEarliest int64 = -2
	TimestampMax      int64 = -3
)

// TimeHit is the time-index slot a time lookup used.
type TimeHit struct {
	Slot      int
	Timestamp int64
	Offset    int64
}

// TimeLookup is the answer to ListOffsets by timestamp, as the contract's
// lookup-time JSON has it.
type TimeLookup struct {
	TargetTimestamp   int64
	Found             bool
	Reason            string
	Offset            int64
	Timestamp         int64
	Segment           string
	SegmentBaseOffset int64
	TimeIndexEntry    *TimeHit
	Batch             *record.Batch // nil for "latest"
	Trace             []TraceStep
	// Misleading lists the index entries the lookup followed that
	// contradict the batch they lead to: a segment's last time index
	// entry (its largest timestamp), the time index entry a search starts
	// from, the offset index entry that places it (checkTimeEntry,
	// checkOffsetEntry). The answer above is still the broker's, which
	// follows them; ByScan is then the answer with each such segment read
	// from its batches instead: what the log holds. Both nil on healthy
	// indexes.
	Misleading []MisleadingEntry
	ByScan     *TimeLookup
	// Stopped (ByScan only): not found because the scan of a segment
	// whose entry misled met damage, in Segment (Reason says what).
	Stopped bool
}

// errStopRecords ends a record iteration early.
var errStopRecords = errors.New("stop")

// LookupTime answers ListOffsets for target the way a broker does
// (UnifiedLog.fetchOffsetByTimestamp): TimestampEarliest, TimestampLatest,
// TimestampMax, or a timestamp in ms searched through
// LogSegment.findOffsetByTimestamp. The log start offset is the broker's
// (BrokerState.LogStart: log-start-offset-checkpoint when above the first
// segment's base offset).
func (p *Partition) LookupTime(target int64, opts LookupOptions) (*TimeLookup, error) {
	var tr *tracer
	if opts.Trace {
		tr = &tracer{}
	}
	var (
		res *TimeLookup
		err error
		st  *BrokerState
	)
	if len(p.Segments) > 0 {
		if st, err = p.brokerState(opts); err != nil {
			return nil, err
		}
		opts.Broker = st
	}
	switch {
	case target < 0 && target != TimestampEarliest && target != TimestampLatest && target != TimestampMax:
		return nil, fmt.Errorf("timestamp %d: negative timestamps other than the special values are not searchable", target)
	case len(p.Segments) == 0:
		// A broker always has a segment; a directory read without any
		// holds no offset at all.
		res = &TimeLookup{Reason: fmt.Sprintf("%s holds no segment", p.Dir)}
		tr.note(TraceStep{Why: WhyAnswer, Detail: res.Reason})
	case target == TimestampEarliest:
		res, err = p.lookupEarliest(tr, opts)
	case target == TimestampLatest:
		res, err = p.lookupLatest(tr)
	case target == TimestampMax:
		res, err = p.lookupMaxTimestamp(tr, opts)
	default:
		res, err = p.lookupTimestamp(target, tr, opts)
	}
	if err != nil {
		return nil, err
	}
	res.TargetTimestamp = target
	res.Trace = tr.result()
	return res, nil
}

func (p *Partition) lookupEarliest(tr *tracer, opts LookupOptions) (*TimeLookup, error) {
	start, src := opts.Broker.logStartOrFirst(p.Segments)
	tr.note(TraceStep{Why: WhyEarliest, Offset: start, Source: src})
	first := p.Segments[max(floorSegment(p.Segments, start), 0)]
	res := &TimeLookup{Found: true, Offset: start, Timestamp: -1, Segment: first.Name(), SegmentBaseOffset: first.BaseOffset}
	ol, err := p.LookupOffset(start, LookupOptions{Broker: opts.Broker, RecoveredIndexes: opts.RecoveredIndexes})
	if err != nil {
		return nil, err
	}
	if ol.Found {
		res.Batch = &ol.Batch
		res.Segment, res.SegmentBaseOffset = ol.Segment, ol.SegmentBaseOffset
	}
	return res, nil
}

func (p *Partition) lookupLatest(tr *tracer) (*TimeLookup, error) {
	last := p.Segments[len(p.Segments)-1]
	seg, err := OpenSegment(last, SegmentOptions{})
	if err != nil {
		return nil, err
	}
	defer seg.Close()
	leo, err := seg.NextOffset()
	if err != nil {
		return nil, err
	}
	if tr != nil {
		tr.note(TraceStep{Why: WhyLatest, Offset: leo, File: last.Name()})
	}
	return &TimeLookup{Found: true, Offset: leo, Timestamp: -1, Segment: last.Name(), SegmentBaseOffset: last.BaseOffset}, nil
}

// segmentMaxTimestamp is maxTimestampAndOffsetSoFar as a broker holds it
// after loading the segment: the time index's last entry (TimeIndex.lastEntry),
// or (-1, base) for an empty one. When the time index is missing, torn, or
// zero-padded (an unclean shutdown, after which the broker recovers the
// segment) it is recomputed from the batch headers as LogSegment.recover
// does: the first batch reaching the maximum, by strict '>'. hit is the
// slot used, or nil.
func segmentMaxTimestamp(seg *Segment, tr *tracer) (ts, offset int64, hit *TimeHit, err error) {
	if seg.TimeIndex != nil {
		ts, offset, hit, clean, err := lastTimeEntry(seg.TimeIndex)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("%s: %w", seg.TimeIndexName, err)
		}
		if clean {
			return ts, offset, hit, nil
		}
		tr.note(TraceStep{Why: WhyTimeIndexTorn, File: seg.TimeIndexName})
	} else {
		tr.note(TraceStep{Why: WhyNoTimeIndex, File: seg.LogName})
	}
	ts, offset, err = batchesMaxTimestamp(seg)
	return ts, offset, nil, err
}

// batchesMaxTimestamp is a segment's largest timestamp from its batch
// headers, as LogSegment.recover computes it: the first batch reaching
// the maximum, by strict '>' (-1 and the base offset when none has one).
func batchesMaxTimestamp(seg *Segment) (ts, offset int64, err error) {
	ts, offset = -1, seg.BaseOffset
	sc := seg.Batches(0)
	for sc.Next() {
		if b := sc.Batch(); b.MaxTimestamp > ts {
			ts, offset = b.MaxTimestamp, b.LastOffset
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, fileio.ErrTorn) {
		return 0, 0, err
	}
	return ts, offset, nil
}

// lastTimeEntry reads a time index's last entry, and whether the file is
// clean: a whole number of slots, the last not zero padding (a slot i > 0
// at the base offset: a zero-filled tail ends with one). Only the last
// slot is read, as the broker reads it; a padded file is one whose last
// slot is padding, since padding runs to the end of the file.
func lastTimeEntry(x *indexfmt.TimeIndex) (ts, offset int64, hit *TimeHit, clean bool, err error) {
	e, err := x.LastEntry()
	if err != nil {
		return 0, 0, nil, false, err
	}
	n := x.Slots()
	if x.TrailingBytes() != 0 || (n > 1 && e.RelativeOffset == 0) {
		return 0, 0, nil, false, nil
	}
	if n > 0 {
		hit = &TimeHit{Slot: n - 1, Timestamp: e.Timestamp, Offset: e.Offset}
	}
	return e.Timestamp, e.Offset, hit, true, nil
}

// maxTimestampOf is segmentMaxTimestamp for a segment not yet opened: when
// its time index is clean only that file's last slot is read (with pread:
// one slot does not warrant a mapping); otherwise the segment is opened and
// its log scanned.
//
// A segment whose .timeindex is missing (its .index present) and which the
// broker's next start does not recover gets an empty time index from the
// loader: its largest timestamp is unknown (-1), and the .log's
// modification time stands in for it (LogSegment.largestTimestamp).
func maxTimestampOf(sf SegmentFiles, st *BrokerState, tr *tracer) (ts, offset int64, hit *TimeHit, err error) {
	if sf.TimeIndex == "" && sf.Index != "" && sf.Log != "" {
		if kept := st.kept(sf.BaseOffset); kept != "" {
			if tr != nil {
				tr.note(TraceStep{Why: WhyTimeIndexKeptMax, Segment: sf.Name(), KeptBecause: kept})
			}
			return -1, sf.BaseOffset, nil, nil
		}
	}
	if sf.TimeIndex != "" {
		f, err := fileio.Open(sf.TimeIndex, fileio.Options{})
		if err != nil {
			return 0, 0, nil, err
		}
		ts, offset, hit, clean, err := lastTimeEntry(indexfmt.NewTimeIndexFrom(fileio.NewIndexSlots(f, f.Size()), sf.BaseOffset))
		f.Close()
		if err != nil {
			return 0, 0, nil, fmt.Errorf("%s: %w", sf.TimeIndex, err)
		}
		if clean {
			return ts, offset, hit, nil
		}
	}
	seg, err := OpenSegment(sf, SegmentOptions{})
	if err != nil {
		return 0, 0, nil, err
	}
	defer seg.Close()
	return segmentMaxTimestamp(seg, tr)
}

// lookupTimestamp: the first segment whose largest timestamp is >= target
// (LogSegment.largestTimestamp: maxTimestampSoFar, or the .log's mtime when
// there is no timestamp), then findOffsetByTimestamp in that segment only.
// Every index entry followed is judged (TimeLookup.Misleading); when one
// misleads, the search is made again with those segments read from their
// batches (TimeLookup.ByScan).
func (p *Partition) lookupTimestamp(target int64, tr *tracer, opts LookupOptions) (*TimeLookup, error) {
	res, err := p.searchTimestamp(target, tr, opts, false)
	if res == nil || len(res.Misleading) == 0 || (err != nil && !fileio.IsCorrupt(err)) {
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	scan, serr := p.searchTimestamp(target, nil, opts, true)
	if serr != nil {
		return nil, serr
	}
	scan.Misleading = nil
	if err != nil {
		return nil, &MisledError{Err: err, Misleading: res.Misleading, ByScanTime: scan}
	}
	res.ByScan = scan
	return res, nil
}

// searchTimestamp is the broker's timestamp search (lookupTimestamp);
// byScan: a segment whose index entries mislead is read from its batches
// instead, for its largest timestamp and for the search in it.
func (p *Partition) searchTimestamp(target int64, tr *tracer, opts LookupOptions, byScan bool) (*TimeLookup, error) {
	// fetchOffsetByTimestamp searches from the log start offset.
	startingOffset, src := opts.Broker.logStartOrFirst(p.Segments)
	tr.note(TraceStep{Why: WhyNoAnswerBelowStart, Offset: startingOffset, Source: src})
	var misleading []MisleadingEntry
	misled := func(m *MisleadingEntry) {
		misleading = append(misleading, *m)
		if tr != nil {
			tr.note(TraceStep{Why: WhyEntryMisleads, File: m.File, Detail: m.String()})
		}
	}
	for i, sf := range p.Segments {
		largest, modTime, hit, err := largestTimestamp(sf, opts.Broker, tr)
		if err != nil {
			return nil, err
		}
		checked := false
		if largest < target && opts.CheckPassedOver && sf.Log != "" {
			// Passed over: judge what its largest timestamp came from.
			var m *MisleadingEntry
			var scanned int64
			if hit != nil {
				m, scanned, err = checkLargestTimestamp(sf, *hit, byScan)
			} else if modTime {
				m, scanned, err = checkUntimedSegment(sf, largest, target)
			}
			if err != nil {
				return nil, err
			}
			checked = true
			if m != nil {
				misled(m)
				if byScan {
					largest, modTime = scanned, false
				}
			}
		}
		if largest < target {
			if tr != nil { // sf.Name() formats a name: not for every segment passed untraced
				tr.note(TraceStep{Why: WhySkipSegment, Segment: sf.Name(), Timestamp: largest, ModTime: modTime, Target: target})
			}
			continue
		}
		if tr != nil {
			tr.add(TraceStep{Step: StepSegment, Why: WhyFirstLargestTS, Segment: sf.Name(), Candidates: len(p.Segments),
				Number: i + 1, Timestamp: largest, ModTime: modTime, Target: target})
		}
		seg, err := openForLookup(sf, opts.Broker, opts, tr)
		if err != nil {
			return nil, err
		}
		if hit != nil && !checked {
			// Chosen: the entry its largest timestamp came from.
			m, err := seg.checkLastTimeEntry(seg.guarded(), *hit)
			if err == nil && m != nil {
				misled(m)
				if byScan {
					largest, _, err = batchesMaxTimestamp(seg)
				}
			}
			if err != nil || largest < target {
				seg.Close()
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		res, m, err := findOffsetByTimestamp(seg, target, startingOffset, tr, byScan)
		seg.Close()
		if m != nil {
			misled(m)
		}
		if err != nil {
			// The entries that misled on the way, for a MisledError.
			return &TimeLookup{Misleading: misleading}, err
		}
		if !res.Found && res.Reason == "" {
			res.Reason = fmt.Sprintf("no record with timestamp >= %d in segment %s (a broker does not search later segments)", target, sf.Name())
		}
		res.Misleading = misleading
		return res, nil
	}
	return &TimeLookup{Reason: fmt.Sprintf("no segment has a timestamp >= %d", target), Misleading: misleading}, nil
}

// checkLargestTimestamp judges the time index entry a segment's largest
// timestamp was taken from (its last: TimeIndex.lastEntry), opening the
// segment (with pread: a few reads). byScan, when it misleads: scanned is
// the largest timestamp of the segment's batches, as recovery computes it.
func checkLargestTimestamp(sf SegmentFiles, hit TimeHit, byScan bool) (m *MisleadingEntry, scanned int64, err error) {
	timeIndex := sf.TimeIndex
	sf.TimeIndex = "" // hit is its entry: the check reads the log and the offset index
	seg, err := OpenSegment(sf, SegmentOptions{Unmapped: true})
	if err != nil {
		return nil, 0, err
	}
	defer seg.Close()
	seg.TimeIndexName = timeIndex
	if m, err = seg.checkLastTimeEntry(seg.guarded(), hit); err != nil || m == nil || !byScan {
		return m, 0, err
	}
	scanned, _, err = batchesMaxTimestamp(seg)
	return m, scanned, err
}

// checkUntimedSegment judges a segment whose largest timestamp is its
// .log's modification time mtime (LogSegment.largestTimestamp: its time
// index holds no entry, or is missing on a segment the broker's next start
// does not recover), which a timestamp search for target passes over: it
// misleads when a batch of the log reaches target, as a time index with no
// entry (or a missing one) says no batch has a timestamp, and recovery
// rebuilds the time index of a log that has. scanned: the largest
// timestamp of the batches.
func checkUntimedSegment(sf SegmentFiles, mtime, target int64) (*MisleadingEntry, int64, error) {
	seg, err := OpenSegment(sf, SegmentOptions{Unmapped: true})
	if err != nil {
		return nil, 0, err
	}
	defer seg.Close()
	scanned, offset, err := batchesMaxTimestamp(seg)
	if err != nil || scanned < target {
		return nil, scanned, err
	}
	name := sf.TimeIndex
	what := "holds no entry"
	if name == "" {
		name = strings.TrimSuffix(sf.Log, LogSuffix) + TimeIndexSuffix
		what = "is missing"
	}
	return &MisleadingEntry{File: name, Index: "time", Slot: -1, Offset: offset, Position: -1, Timestamp: -1,
		Problem: fmt.Sprintf("the time index %s, so a broker takes the .log's modification time %d as the segment's largest timestamp, but offset %d has timestamp %d: a timestamp search passes the segment over", what, mtime, offset, scanned)}, scanned, nil
}

// checkTimeHit judges the entries a timestamp search follows in the
// segment: the time index entry hit (nil: none, or below the starting
// offset), and the offset index entry that places the scan at key (the
// larger of hit's offset and the starting offset). With hit, pos is the
// position of the batch holding its offset. The offset index entry's
// batch is read for its CRC only without hit: with it, the time entry's
// check reads on from there to the batch holding its offset, which must
// carry its timestamp, and bytes inside a batch that read as a header do
// not lead there.
func (s *Segment) checkTimeHit(r readers, hit *TimeHit, key int64) (m *MisleadingEntry, pos int64, err error) {
	ohit, before, err := s.offsetHit(r, key)
	if err != nil {
		return nil, 0, err
	}
	if m, err := s.checkOffsetEntry(r, ohit, key, hit == nil); m != nil || err != nil {
		return m, 0, err
	}
	if hit == nil {
		return nil, 0, nil
	}
	if ohit.Slot >= 0 {
		pos = ohit.Position
	}
	return s.checkTimeEntry(r, *hit, pos, before)
}

// offsetHit is the offset index entry OffsetIndex.lookup(key) gives
// (Slot -1: none), and the position of the entry before it (0 for the
// first; -1 with none).
func (s *Segment) offsetHit(r readers, key int64) (IndexHit, int64, error) {
	hit := IndexHit{Slot: -1, Offset: s.BaseOffset}
	if r.idx == nil {
		return hit, -1, nil
	}
	n, _, err := s.entries(r)
	if err != nil {
		return hit, -1, err
	}
	e, slot, err := r.idx.LookupEntries(key, n, nil)
	if err != nil {
		return hit, -1, fmt.Errorf("%s: %w", s.IndexName, err)
	}
	if slot < 0 {
		return hit, -1, nil
	}
	hit = IndexHit{Slot: slot, Offset: e.Offset, Position: int64(e.Position)}
	before := int64(0)
	if slot > 0 {
		pe, err := r.idx.Entry(slot - 1)
		if err != nil {
			return hit, -1, fmt.Errorf("%s: %w", s.IndexName, err)
		}
		before = int64(pe.Position)
	}
	return hit, before, nil
}

// LargestTimestamp is LogSegment.largestTimestamp as a broker that loaded
// the segment has it: maxTimestampSoFar (maxTimestampOf: the time index's
// last entry, or the batches when the broker's next start rebuilds it),
// else the .log's modification time (fromModTime; 0 without a .log). st
// may be nil (every segment counts as recovered).
//
// active, when not nil, says sf is the partition's last segment and is
// what Partition.LogEnd's scan found in it: without a clean shutdown its
// time index lacks the entry LogSegment.close appends, and recovery, which
// reads every batch, also counts the batches after the last entry. Those
// are the batches the scan read: at the offset index's last entry, which
// the time index's last entry does not follow (an entry is appended at an
// index point whenever the max timestamp grew), the max timestamp so far
// was that entry's.
func LargestTimestamp(sf SegmentFiles, st *BrokerState, active *SegmentEnd) (ts int64, fromModTime bool, err error) {
	ts, mtime, _, err := largestTimestamp(sf, st, nil)
	if err != nil || active == nil || st == nil || st.Recovery.Clean || active.MaxTimestamp < 0 {
		return ts, mtime, err
	}
	if mtime {
		return active.MaxTimestamp, false, nil
	}
	return max(ts, active.MaxTimestamp), false, nil
}

// largestTimestamp is LargestTimestamp without the active segment's rule,
// with the time-index slot the answer came from (nil: none).
func largestTimestamp(sf SegmentFiles, st *BrokerState, tr *tracer) (int64, bool, *TimeHit, error) {
	largest, _, hit, err := maxTimestampOf(sf, st, tr)
	if err != nil || largest >= 0 {
		return largest, false, hit, err
	}
	largest = 0
	if sf.Log != "" {
		if fi, err := os.Stat(sf.Log); err == nil {
			largest = fi.ModTime().UnixMilli()
		}
	}
	return largest, true, hit, nil
}

// findOffsetByTimestamp is LogSegment.findOffsetByTimestamp +
// FileRecords.searchForTimestamp, and the judgement of the entries it
// followed (m: the first that misleads). byScan: when one misleads, the
// answer is the segment's scanned from position 0 instead.
func findOffsetByTimestamp(seg *Segment, target, startingOffset int64, tr *tracer, byScan bool) (*TimeLookup, *MisleadingEntry, error) {
	r := seg.guarded()
	a, err := seg.lookupTimestamp(r, target, startingOffset, tr)
	if err != nil && !fileio.IsCorrupt(err) {
		return nil, nil, err
	}
	var hit *TimeHit
	key := max(seg.BaseOffset, startingOffset)
	if te := a.TimeIndexEntry; te.Slot >= 0 && te.Offset >= startingOffset {
		hit, key = &te, te.Offset
	}
	m, _, cerr := seg.checkTimeHit(r, hit, key)
	if cerr != nil {
		return nil, nil, cerr
	}
	if m != nil && byScan {
		a = TimeAnswer{TimeIndexEntry: a.TimeIndexEntry}
		err = seg.searchTimestampFrom(r, 0, target, startingOffset, nil, &a)
	}
	res := &TimeLookup{Segment: SegmentName(seg.BaseOffset) + LogSuffix, SegmentBaseOffset: seg.BaseOffset}
	if err != nil {
		if m == nil || !byScan {
			// The broker's search fails on the damage, misled or not.
			return nil, m, err
		}
		res.Stopped = true
		res.Reason = fmt.Sprintf("a scan of %s for timestamp %d stops at damage: %v", seg.LogName, target, err)
		return res, m, nil
	}
	if a.TimeIndexEntry.Slot >= 0 {
		h := a.TimeIndexEntry
		res.TimeIndexEntry = &h
	}
	if a.Found {
		res.Found, res.Offset, res.Timestamp = true, a.Offset, a.Timestamp
		b := a.Batch
		res.Batch = &b
	}
	return res, m, nil
}

// TimeAnswer is the answer of Segment.LookupTimestamp.
type TimeAnswer struct {
	Found     bool
	Offset    int64        // the first record with timestamp >= target and offset >= the starting offset
	Timestamp int64        // its timestamp
	Batch     record.Batch // the batch holding it
	// TimeIndexEntry is the time-index slot the search started from; Slot
	// is -1 when the time index is absent or has no entry <= target.
	TimeIndexEntry TimeHit
}

// timeLookupState is what a timestamp lookup's record callback works on.
// The Segment keeps it and the callback, so that a lookup allocates nothing.
type timeLookupState struct {
	target, startingOffset int64
	found                  bool
	offset, timestamp      int64
	fn                     func(*record.Record) error
}

// LookupTimestamp answers ListOffsets for target in this segment as the
// broker does (LogSegment.findOffsetByTimestamp, FileRecords.searchForTimestamp):
// the time index's largest entry <= target gives an offset (the base offset
// without one), raised to startingOffset (the log start offset); the offset
// index gives the position to scan from; the first batch whose max
// timestamp is >= target is decoded, and its first record with a timestamp
// >= target and an offset >= startingOffset is the answer. If that batch
// holds none, the scan goes on. Found is false when no batch qualifies.
//
// Searching and scanning allocate nothing; decoding a batch reuses the
// Segment's buffers (they grow to the largest batch decoded). A Segment
// must not be used by several goroutines at once.
func (s *Segment) LookupTimestamp(target, startingOffset int64) (a TimeAnswer, err error) {
	if s.unguarded(func(r readers) { a, err = s.lookupTimestamp(r, target, startingOffset, nil) }) {
		return s.lookupTimestamp(s.guarded(), target, startingOffset, nil)
	}
	return a, err
}

func (s *Segment) lookupTimestamp(r readers, target, startingOffset int64, tr *tracer) (TimeAnswer, error) {
	a := TimeAnswer{TimeIndexEntry: TimeHit{Slot: -1, Timestamp: -1, Offset: s.BaseOffset}}
	from := s.BaseOffset
	_, n, err := s.entries(r)
	if err != nil {
		return a, err
	}
	if r.tidx != nil {
		s.tracePadding(tr, "time", s.TimeIndexName, n, r.tidx.Slots())
		e, slot, err := r.tidx.LookupEntries(target, n, tr.probes("time"))
		if err != nil {
			return a, fmt.Errorf("%s: %w", s.TimeIndexName, err)
		}
		if slot >= 0 {
			a.TimeIndexEntry = TimeHit{Slot: slot, Timestamp: e.Timestamp, Offset: e.Offset}
			if tr != nil {
				sl := slot
				tr.add(TraceStep{Step: StepIndexEntry, Why: WhyTimeEntry, Index: "time", Slot: &sl, Timestamp: e.Timestamp, Offset: e.Offset})
			}
			from = e.Offset
		} else if tr != nil {
			tr.note(TraceStep{Why: WhyNoTimeEntryBelow, Target: target, Offset: s.BaseOffset})
		}
	}
	from = max(from, startingOffset)
	pos, err := offsetPosition(s, r, from, tr)
	if err != nil {
		return a, err
	}
	return a, s.searchTimestampFrom(r, pos, target, startingOffset, tr, &a)
}

// searchTimestampFrom is FileRecords.searchForTimestamp from position pos:
// the first batch whose max timestamp is >= target is decoded, and its
// first record with a timestamp >= target and an offset >= startingOffset
// is the answer (into a); if that batch holds none, the scan goes on.
func (s *Segment) searchTimestampFrom(r readers, pos, target, startingOffset int64, tr *tracer, a *TimeAnswer) error {
	var err error
	st := &s.tl
	st.target, st.startingOffset = target, startingOffset
	if st.fn == nil {
		st.fn = func(r *record.Record) error {
			if r.Timestamp >= st.target && r.Offset >= st.startingOffset {
				st.offset, st.timestamp, st.found = r.Offset, r.Timestamp, true
				return errStopRecords
			}
			return nil
		}
	}
	sc := s.batches(r.log, pos)
	for sc.Next() {
		b := sc.Batch()
		if b.MaxTimestamp < target {
			if tr != nil {
				tr.batch(b, TraceStep{Why: WhyMaxTSBelow, Target: target})
			}
			continue
		}
		st.found = false
		s.buf, err = s.dec.RecordsAt(s.LogName, r.log, b, s.buf, st.fn)
		if err != nil && err != errStopRecords {
			return err
		}
		if st.found {
			a.Found, a.Offset, a.Timestamp, a.Batch = true, st.offset, st.timestamp, *b
			if tr != nil {
				tr.batch(b, TraceStep{Why: WhyRecordReaches, Offset: a.Offset, Timestamp: a.Timestamp, Target: target})
			}
			return nil
		}
		if tr != nil {
			tr.batch(b, TraceStep{Why: WhyNoRecordReaches, Target: target})
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, fileio.ErrTorn) {
		return err
	}
	return nil
}

// offsetPosition is OffsetIndex.lookup(offset).position in r.idx, seg's
// offset index (its entries before any padding), 0 without one.
func offsetPosition(seg *Segment, r readers, offset int64, tr *tracer) (int64, error) {
	if r.idx == nil {
		return 0, nil
	}
	n, _, err := seg.entries(r)
	if err != nil {
		return 0, err
	}
	seg.tracePadding(tr, "offset", seg.IndexName, n, r.idx.Slots())
	e, slot, err := r.idx.LookupEntries(offset, n, tr.probes("offset"))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", seg.IndexName, err)
	}
	if slot >= 0 && tr != nil {
		s := slot
		tr.add(TraceStep{Step: StepIndexEntry, Why: WhyOffsetEntry, Index: "offset", Slot: &s, Offset: e.Offset, EntryPos: int64(e.Position)})
	}
	if e.Position < 0 || int64(e.Position) > seg.LogSize {
		tr.note(TraceStep{Why: WhyOffsetEntryPastLog})
		return seg.LogSize, nil
	}
	return int64(e.Position), nil
}

// lookupMaxTimestamp is ListOffsets MAX_TIMESTAMP as Kafka 3.8+ answers it
// (UnifiedLog.fetchOffsetByTimestamp, RecordBatch.offsetOfMaxTimestamp):
// the first segment with the greatest max timestamp, the first batch from
// its (max timestamp, offset) index position whose max timestamp equals it,
// and in that batch the first record carrying it. The chosen segment's
// entries are judged (TimeLookup.Misleading); when one misleads, ByScan
// is the answer with that segment's largest timestamp and the batch
// carrying it read from its batches.
func (p *Partition) lookupMaxTimestamp(tr *tracer, opts LookupOptions) (*TimeLookup, error) {
	res, err := p.searchMaxTimestamp(tr, opts, false)
	if err != nil || len(res.Misleading) == 0 {
		return res, err
	}
	scan, err := p.searchMaxTimestamp(nil, opts, true)
	if err != nil {
		return nil, err
	}
	scan.Misleading = nil
	res.ByScan = scan
	return res, nil
}

// maxCandidate is a segment's largest timestamp as the MAX_TIMESTAMP
// search takes it: from its time index (hit), or scanned from its batches.
type maxCandidate struct {
	ts, offset int64
	hit        *TimeHit
	scanned    bool
}

func (p *Partition) searchMaxTimestamp(tr *tracer, opts LookupOptions, byScan bool) (*TimeLookup, error) {
	cands := make([]maxCandidate, len(p.Segments))
	for i, sf := range p.Segments {
		ts, off, hit, err := maxTimestampOf(sf, opts.Broker, tr)
		if err != nil {
			return nil, err
		}
		cands[i] = maxCandidate{ts: ts, offset: off, hit: hit}
	}
	var misleading []MisleadingEntry
	for {
		best := 0
		for i, c := range cands {
			if c.ts > cands[best].ts {
				best = i
			}
		}
		c := cands[best]
		sf := p.Segments[best]
		if tr != nil {
			tr.add(TraceStep{Step: StepSegment, Why: WhyGreatestMaxTS, Segment: sf.Name(), Candidates: len(p.Segments), Timestamp: c.ts, Offset: c.offset})
		}
		seg, err := openForLookup(sf, opts.Broker, opts, tr)
		if err != nil {
			return nil, err
		}
		res, m, again, err := seg.maxTimestampIn(c, tr, byScan)
		if err == nil && again {
			cands[best].ts, cands[best].offset, err = batchesMaxTimestamp(seg)
			cands[best].hit, cands[best].scanned = nil, true
		}
		seg.Close()
		if err != nil {
			return nil, err
		}
		if m != nil {
			misleading = append(misleading, *m)
			if tr != nil {
				tr.note(TraceStep{Why: WhyEntryMisleads, File: m.File, Detail: m.String()})
			}
		}
		if again {
			continue
		}
		res.Segment, res.SegmentBaseOffset = sf.Name(), sf.BaseOffset
		res.Misleading = misleading
		return res, nil
	}
}

// maxTimestampIn finds the record carrying the segment's largest
// timestamp c: the first batch from the offset index's position for c's
// offset whose max timestamp equals it, and in it the first record
// carrying it. It judges the entries followed (m: the first that
// misleads); byScan, when the time index entry misleads, again asks for
// the segment's largest timestamp to be read from its batches and the
// choice made again, and when the offset index entry does, the batch is
// looked for from position 0.
func (seg *Segment) maxTimestampIn(c maxCandidate, tr *tracer, byScan bool) (res *TimeLookup, m *MisleadingEntry, again bool, err error) {
	res = &TimeLookup{TimeIndexEntry: c.hit}
	r := seg.guarded()
	if c.hit != nil {
		if m, err = seg.checkLastTimeEntry(r, *c.hit); err != nil {
			return nil, nil, false, err
		}
		if m != nil && byScan {
			return nil, m, true, nil
		}
	}
	pos, err := offsetPosition(seg, r, c.offset, tr)
	if err != nil {
		return nil, nil, false, err
	}
	if m == nil {
		ohit, _, err := seg.offsetHit(r, c.offset)
		if err != nil {
			return nil, nil, false, err
		}
		if m, err = seg.checkOffsetEntry(r, ohit, c.offset, true); err != nil {
			return nil, nil, false, err
		}
		if m != nil && byScan {
			pos = 0
		}
	}
	var dec record.RecordDecoder
	sc := seg.Batches(pos)
	for sc.Next() {
		b := sc.Batch()
		if b.MaxTimestamp != c.ts {
			tr.batch(b, TraceStep{Why: WhyMaxTSOther, Target: c.ts})
			continue
		}
		if b.Magic == 0 {
			tr.batch(b, TraceStep{Why: WhyMagic0})
			break
		}
		entry, err := seg.ReadEntry(b, nil)
		if err != nil {
			return nil, nil, false, err
		}
		err = dec.Records(seg.LogName, entry, b, func(r *record.Record) error {
			if r.Timestamp == b.MaxTimestamp {
				res.Offset, res.Timestamp, res.Found = r.Offset, r.Timestamp, true
				return errStopRecords
			}
			return nil
		})
		if err != nil && err != errStopRecords {
			return nil, nil, false, err
		}
		if res.Found {
			tr.batch(b, TraceStep{Why: WhyFirstMaxRecord, Offset: res.Offset})
			bc := *b
			res.Batch = &bc
			return res, m, false, nil
		}
		break
	}
	if err := sc.Err(); err != nil && !errors.Is(err, fileio.ErrTorn) {
		return nil, nil, false, err
	}
	res.Reason = fmt.Sprintf("no batch with the max timestamp %d holds a record carrying it", c.ts)
	return res, m, false, nil
}
