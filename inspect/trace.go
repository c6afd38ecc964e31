package inspect

import (
	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/record"
)

// TraceStep is one step of a lookup as a broker would take it, for --trace
// (Message tells it in words). Step is the kind of step
// (StepSegment, StepProbe, StepIndexEntry, StepBatch, StepNote); Why, for
// every step but a probe, is the rule or case that decided it. The other
// fields are set where they apply: the first group is what each kind of
// step shows of itself, the second the numbers and names Why speaks of.
type TraceStep struct {
	Step string
	Why  TraceWhy
	// segment
	Segment    string
	Candidates int
	// probe, index_entry
	Index   string // "offset" or "time"
	Phase   string
	Slot    *int
	Key     *int64
	Compare *int
	// batch
	Position   *int64
	BaseOffset *int64
	LastOffset *int64
	MaxTS      *int64

	// What Why speaks of.
	Target      int64  // the offset or timestamp looked for
	Offset      int64  // an offset: an index entry's, a record's, a log start or end offset
	Timestamp   int64  // a timestamp: an index entry's, a record's, a segment's largest
	EntryPos    int64  // an offset index entry's position
	FirstBase   int64  // the first segment's base offset
	Number      int    // a segment's number among the candidates (from 1)
	Entries     int    // index entries before the padding
	Slots       int    // index slots, padding included
	File        string // a file or segment named (besides Segment)
	Source      string // where the log start offset came from (LogStartFrom*)
	KeptBecause string // why the broker's next start would not recover the segment (BrokerState)
	Detail      string // a result's reason, or an error, told as it is
	// RebuiltOffsetEntries and RebuiltTimeEntries: the index entries
	// recovery writes for a segment it rebuilds (WhyRebuilt).
	RebuiltOffsetEntries, RebuiltTimeEntries int
	// Rebuild: why recovery rebuilds the segment's indexes (RebuildIndexMissing, RebuildTxnIndexBelowBase, RebuildTimeIndexMissing).
	Rebuild string
	// ModTime: the segment has no timestamps, so its largest timestamp is
	// the .log's modification time (LogSegment.largestTimestamp).
	ModTime bool
}

// Kinds of trace step.
const (
	StepSegment    = "segment"
	StepProbe      = "probe"
	StepIndexEntry = "index_entry"
	StepBatch      = "batch"
	StepNote       = "note"
)

// TraceWhy says which rule or case decided a step.
type TraceWhy string

// What decided a step, by kind of step.
const (
	// segment
	WhyFloorSegment   TraceWhy = "floor-segment"    // the largest base offset <= Target
	WhyNextSegment    TraceWhy = "next-segment"     // no batch reached Target in File
	WhyFirstLargestTS TraceWhy = "first-largest-ts" // the first segment whose largest timestamp >= Target
	WhyGreatestMaxTS  TraceWhy = "greatest-max-ts"  // the first with the greatest max timestamp
	// index_entry
	WhyOffsetEntry TraceWhy = "offset-entry" // offset index slot: Offset at EntryPos
	WhyTimeEntry   TraceWhy = "time-entry"   // time index slot: Timestamp first reached by Offset
	// batch
	WhyLastOffsetReaches TraceWhy = "last-offset-reaches" // last offset >= Target: the answer
	WhyLastOffsetBelow   TraceWhy = "last-offset-below"   // last offset < Target: skip
	WhyMaxTSBelow        TraceWhy = "max-ts-below"        // max timestamp < Target: skip
	WhyRecordReaches     TraceWhy = "record-reaches"      // the record at Offset has Timestamp >= Target
	WhyNoRecordReaches   TraceWhy = "no-record-reaches"   // max timestamp >= Target, no record does
	WhyMaxTSOther        TraceWhy = "max-ts-other"        // max timestamp != Target: skip
	WhyMagic0            TraceWhy = "magic-0"             // no timestamps: no answer
	WhyFirstMaxRecord    TraceWhy = "first-max-record"    // the first record with the max timestamp, at Offset
	// note
	WhyAnswer             TraceWhy = "answer"                // the result's reason (Detail)
	WhyLogStartAbove      TraceWhy = "log-start-above"       // Offset from Source, above FirstBase
	WhyEarliest           TraceWhy = "earliest"              // the log start Offset, from Source
	WhyLatest             TraceWhy = "latest"                // the log end Offset, after File
	WhyNoAnswerBelowStart TraceWhy = "no-answer-below-start" // the log start Offset, from Source
	WhyTimeIndexKept      TraceWhy = "timeindex-kept"        // Segment has no .timeindex and is not recovered (KeptBecause)
	WhyTimeIndexKeptMax   TraceWhy = "timeindex-kept-max"    // the same, for its largest timestamp
	WhyUnrebuilt          TraceWhy = "unrebuilt"             // Rebuild, but nothing rebuilds it
	WhyRebuildFailed      TraceWhy = "rebuild-failed"        // Rebuild, but recovery fails (Detail)
	WhyRebuilt            TraceWhy = "rebuilt"               // Rebuild: searching RebuiltOffsetEntries and RebuiltTimeEntries
	WhyNoOffsetIndex      TraceWhy = "no-offset-index"       // File (the .log) has no offset index
	WhyEmptyOffsetIndex   TraceWhy = "empty-offset-index"    // File is empty
	WhyNoEntryBelow       TraceWhy = "no-entry-below"        // no offset index entry <= Target
	WhyEntryPastLog       TraceWhy = "entry-past-log"        // the entry points past the log's Offset bytes
	WhyOffsetEntryPastLog TraceWhy = "offset-entry-past-log" // the same, in a time lookup
	WhyScanStops          TraceWhy = "scan-stops"            // a torn tail (Detail) stops the scan
	WhyTimeIndexTorn      TraceWhy = "timeindex-torn"        // File is padded or torn
	WhyNoTimeIndex        TraceWhy = "no-timeindex"          // File (the .log) has no time index
	WhySkipSegment        TraceWhy = "skip-segment"          // Segment's largest Timestamp < Target
	WhyNoTimeEntryBelow   TraceWhy = "no-time-entry-below"   // no time index entry <= Target: from Offset
	WhyPadding            TraceWhy = "padding"               // Index File: Entries entries, Slots slots
	WhyPaddingKept        TraceWhy = "padding-kept"          // the same, on a segment not recovered (KeptBecause)
	WhyEntryMisleads      TraceWhy = "entry-misleads"        // Detail: an entry followed contradicts its batch (MisleadingEntry)
)

// Why recovery rebuilds a segment's indexes before a lookup (TraceStep.Rebuild).
const (
	RebuildIndexMissing      = "index-missing"       // LogLoader.loadSegmentFiles, recoverSegment
	RebuildTimeIndexMissing  = "timeindex-missing"   // the next start recovers the segment (LogLoader.recoverLog)
	RebuildTxnIndexBelowBase = "txnindex-below-base" // TransactionIndex.sanityCheck fails (LogLoader.loadSegmentFiles, recoverSegment)
)

// tracer collects steps when enabled; a nil *tracer records nothing.
type tracer struct{ steps []TraceStep }

func (t *tracer) add(s TraceStep) {
	if t != nil {
		t.steps = append(t.steps, s)
	}
}

// note adds a note step.
func (t *tracer) note(s TraceStep) {
	if t != nil {
		s.Step = StepNote
		t.steps = append(t.steps, s)
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
		t.add(TraceStep{Step: StepProbe, Index: index, Phase: string(p.Phase), Slot: &slot, Key: &key, Compare: &c})
	}
}

// batch adds a batch step: b, and s's Why and numbers.
func (t *tracer) batch(b *record.Batch, s TraceStep) {
	if t == nil {
		return
	}
	pos, base, last, mts := b.Position, b.BaseOffset, b.LastOffset, b.MaxTimestamp
	s.Step, s.Position, s.BaseOffset, s.LastOffset, s.MaxTS = StepBatch, &pos, &base, &last, &mts
	t.add(s)
}

func (t *tracer) result() []TraceStep {
	if t == nil {
		return nil
	}
	return t.steps
}
