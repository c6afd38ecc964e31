package inspect

import (
	"errors"
	"fmt"
	"sort"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// TraceStep is one step of a lookup as a broker would take it, for --trace.
// Step is one of "segment", "probe", "index_entry", "batch", "note"; the
// other fields are set where they apply.
type TraceStep struct {
	Step       string `json:"step"`
	Message    string `json:"message"`
	Segment    string `json:"segment,omitempty"`
	Candidates int    `json:"candidates,omitempty"`
	// probe
	Index   string `json:"index,omitempty"` // "offset" or "time"
	Phase   string `json:"phase,omitempty"`
	Slot    *int   `json:"slot,omitempty"`
	Key     *int64 `json:"key,omitempty"`
	Compare *int   `json:"compare,omitempty"`
	// batch
	Position   *int64 `json:"position,omitempty"`
	BaseOffset *int64 `json:"base_offset,omitempty"`
	LastOffset *int64 `json:"last_offset,omitempty"`
	MaxTS      *int64 `json:"max_timestamp,omitempty"`
}

// tracer collects steps when enabled; a nil *tracer records nothing.
type tracer struct{ steps []TraceStep }

func (t *tracer) add(s TraceStep) {
	if t != nil {
		t.steps = append(t.steps, s)
	}
}

func (t *tracer) notef(format string, args ...any) {
	if t != nil {
		t.add(TraceStep{Step: "note", Message: fmt.Sprintf(format, args...)})
	}
}

// probes returns the sink for indexfmt's search, nil when not tracing so the
// search stays allocation-free.
func (t *tracer) probes(index string) func(indexfmt.Probe) {
	if t == nil {
		return nil
	}
	return func(p indexfmt.Probe) {
		slot, key, c := p.Slot, p.Key, p.Cmp
		rel := map[int]string{-1: "<", 0: "=", 1: ">"}[c]
		t.add(TraceStep{Step: "probe", Index: index, Phase: string(p.Phase), Slot: &slot, Key: &key, Compare: &c,
			Message: fmt.Sprintf("%s probe slot %d: key %d %s target", p.Phase, p.Slot, p.Key, rel)})
	}
}

func (t *tracer) batch(b *record.Batch, verdict string) {
	if t == nil {
		return
	}
	pos, base, last, mts := b.Position, b.BaseOffset, b.LastOffset, b.MaxTimestamp
	t.add(TraceStep{Step: "batch", Position: &pos, BaseOffset: &base, LastOffset: &last, MaxTS: &mts,
		Message: fmt.Sprintf("batch at position %d: offsets %d..%d, max timestamp %d: %s", pos, base, last, mts, verdict)})
}

func (t *tracer) result() []TraceStep {
	if t == nil {
		return nil
	}
	return t.steps
}

// IndexHit is the index slot a lookup started from.
type IndexHit struct {
	Slot     int   `json:"slot"`
	Offset   int64 `json:"offset"`
	Position int64 `json:"position"`
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
}

// LookupOptions tune a lookup.
type LookupOptions struct {
	Trace bool
	// Broker is the partition's broker state (Partition.ReadBrokerState);
	// nil: the lookup reads it from the partition's data directory.
	Broker *BrokerState
	// RecoveredIndexes builds in memory the offset and time index broker
	// recovery would write for a segment (nothing written). A lookup uses
	// them for a segment whose .index is missing, which the broker's
	// loader rebuilds before the segment serves anything
	// (LogLoader.loadSegmentFiles: "Could not find offset index file ...
	// rebuilding index files"), and for one whose .timeindex is missing
	// when the next start recovers that segment (otherwise the broker
	// creates an empty time index). Nil: such a segment is searched without
	// the missing index, from position 0.
	RecoveredIndexes func(SegmentFiles) (index, timeIndex []byte, err error)
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
// recover it (Segment.Kept).
func openForLookup(sf SegmentFiles, st *BrokerState, opts LookupOptions, tr *tracer) (*Segment, error) {
	seg, err := OpenSegment(sf, SegmentOptions{})
	if err != nil {
		return nil, err
	}
	seg.Kept = st.kept(sf.BaseOffset)
	rebuild := ""
	switch {
	case sf.Log == "":
	case sf.Index == "":
		rebuild = "its .index is missing: the broker's loader rebuilds the segment's indexes before it serves anything (LogLoader.loadSegmentFiles, recoverSegment)"
	case sf.TimeIndex == "" && seg.Kept == "":
		rebuild = "its .timeindex is missing and the broker's next start recovers the segment, rebuilding its indexes (LogLoader.recoverLog)"
	case sf.TimeIndex == "":
		tr.notef("%s has no .timeindex and the broker's next start would not recover it (%s): the broker creates an empty time index", sf.Name(), seg.Kept)
	}
	if rebuild == "" {
		return seg, nil
	}
	if opts.RecoveredIndexes == nil {
		tr.notef("%s: %s; searching without it", sf.Name(), rebuild)
		return seg, nil
	}
	idx, tidx, err := opts.RecoveredIndexes(sf)
	if err != nil {
		// Recovery itself fails here (the broker's load would too): the
		// files as they are are all there is to search.
		tr.notef("%s: %s, but recovery cannot rebuild it (%v); searching without it", sf.Name(), rebuild, err)
		return seg, nil
	}
	seg.UseIndexes(idx, tidx)
	if tr != nil {
		tr.notef("%s: %s; searching the %d offset-index and %d time-index entries recovery would write (built in memory, nothing written)",
			sf.Name(), rebuild, len(idx)/8, len(tidx)/12)
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
		tr.notef("%s", res.Reason)
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
		tr.notef("%s", res.Reason)
		res.Trace = tr.result()
		return res, nil
	}
	start, src := st.logStartOrFirst(p.Segments)
	if src == LogStartFromCheckpoint {
		tr.notef("log start offset %d, from %s (above the first segment's base offset %d)", start, src, p.Segments[0].BaseOffset)
	}
	if src == LogStartFromCheckpoint && target < start {
		// UnifiedLog.read / LocalLog.read: OffsetOutOfRangeException
		// below the log start offset.
		res.Reason = fmt.Sprintf("offset %d is below the log start offset %d (from %s; the records below it were deleted by DeleteRecords or retention, and a broker answers OFFSET_OUT_OF_RANGE)", target, start, src)
		tr.notef("%s", res.Reason)
		res.Trace = tr.result()
		return res, nil
	}
	tr.add(TraceStep{Step: "segment", Segment: p.Segments[i].Name(), Candidates: len(p.Segments),
		Message: fmt.Sprintf("segment %s chosen among %d: the largest base offset <= %d", p.Segments[i].Name(), len(p.Segments), target)})
	logEnd := p.Segments[i].BaseOffset
	for ; i < len(p.Segments); i++ {
		seg, err := openForLookup(p.Segments[i], st, opts, tr)
		if err != nil {
			return nil, err
		}
		found, next, err := lookupInSegment(seg, target, res, tr)
		seg.Close()
		if err != nil {
			return nil, err
		}
		if found {
			res.Found = true
			res.Segment = p.Segments[i].Name()
			res.SegmentBaseOffset = p.Segments[i].BaseOffset
			res.Trace = tr.result()
			return res, nil
		}
		logEnd = max(next, logEnd)
		if i+1 < len(p.Segments) {
			tr.add(TraceStep{Step: "segment", Segment: p.Segments[i+1].Name(), Candidates: len(p.Segments),
				Message: fmt.Sprintf("no batch with last offset >= %d in %s: continuing with the next segment %s", target, p.Segments[i].Name(), p.Segments[i+1].Name())})
		}
	}
	res.Reason = fmt.Sprintf("offset %d is at or after the log end offset %d", target, logEnd)
	tr.notef("%s", res.Reason)
	res.Trace = tr.result()
	return res, nil
}

// lookupInSegment does steps 3-4 of the broker's read in one segment. It
// returns whether a batch was found, and else the next offset after the
// last batch it saw (the segment's log end offset when the scan reached it).
func lookupInSegment(seg *Segment, target int64, res *OffsetLookup, tr *tracer) (bool, int64, error) {
	var st scanStats
	b, hit, found, err := seg.lookupOffset(seg.guarded(), target, tr, &st)
	res.ScannedBatches += st.batches
	res.ScannedBytes += st.bytes
	res.IndexEntry = nil
	if hit.Slot >= 0 {
		res.IndexEntry = &hit
	}
	if err != nil {
		return false, st.next, err
	}
	if found {
		res.Batch = b
	}
	return found, st.next, nil
}

// scanStats is what a lookup in one segment scanned.
type scanStats struct {
	batches int
	bytes   int64
	next    int64 // the offset after the last batch seen; the base offset when none
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
// It allocates nothing: the index search and the header scanner use
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
	hit := IndexHit{Slot: -1, Offset: s.BaseOffset}
	st.next = s.BaseOffset
	start := int64(0)
	n, _, err := s.entries(r)
	if err != nil {
		return record.Batch{}, hit, false, err
	}
	switch {
	case r.idx == nil:
		if tr != nil {
			tr.notef("%s has no offset index: scanning from position 0 (a broker rebuilds a missing index at load)", s.LogName)
		}
	case n == 0:
		s.tracePadding(tr, "offset index", s.IndexName, n, r.idx.Slots())
		if tr != nil {
			tr.notef("offset index %s is empty: scanning from position 0", s.IndexName)
		}
	default:
		s.tracePadding(tr, "offset index", s.IndexName, n, r.idx.Slots())
		e, slot, err := r.idx.LookupEntries(target, n, tr.probes("offset"))
		if err != nil {
			return record.Batch{}, hit, false, fmt.Errorf("%s: %w", s.IndexName, err)
		}
		if slot < 0 {
			if tr != nil {
				tr.notef("no index entry <= %d: starting at position 0", target)
			}
			break
		}
		hit = IndexHit{Slot: slot, Offset: e.Offset, Position: int64(e.Position)}
		if tr != nil {
			sl := slot
			tr.add(TraceStep{Step: "index_entry", Index: "offset", Slot: &sl,
				Message: fmt.Sprintf("offset index slot %d: offset %d at position %d", slot, e.Offset, e.Position)})
		}
		start = int64(e.Position)
		if (start < 0 || start > s.LogSize) && tr != nil {
			tr.notef("index entry points past the end of the log (%d bytes): the broker's scan finds nothing here", s.LogSize)
		}
	}
	if start < 0 || start > s.LogSize {
		return record.Batch{}, hit, false, nil
	}
	sc := s.scanner(r.log, start)
	for sc.Next() {
		b := sc.Batch()
		st.batches++
		st.bytes += b.Size
		st.next = b.LastOffset + 1
		if b.LastOffset >= target {
			if tr != nil {
				tr.batch(b, fmt.Sprintf("last offset %d >= %d: this batch is the answer", b.LastOffset, target))
			}
			return *b, hit, true, nil
		}
		if tr != nil {
			tr.batch(b, fmt.Sprintf("last offset %d < %d: skip", b.LastOffset, target))
		}
	}
	if err := sc.Err(); err != nil {
		if !errors.Is(err, fileio.ErrTorn) {
			return record.Batch{}, hit, false, err
		}
		if tr != nil {
			tr.notef("%v: a broker's scan stops silently here", err)
		}
	}
	return record.Batch{}, hit, false, nil
}
