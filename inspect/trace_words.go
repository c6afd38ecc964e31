package inspect

import "fmt"

// The words of a lookup's trace: each step's message, told from its kind,
// its Why and the numbers Why speaks of.

// compareWords is a probe's comparison of its key with the target.
var compareWords = map[int]string{-1: "<", 0: "=", 1: ">"}

// Message tells the step in words: the "message" of a lookup's JSON
// trace, and the text of kseg's --trace story.
func (s TraceStep) Message() string {
	switch {
	case s.Step == StepProbe:
		return fmt.Sprintf("%s probe slot %d: key %d %s target", s.Phase, deref(s.Slot), deref(s.Key), compareWords[deref(s.Compare)])
	case s.Step == StepBatch:
		return fmt.Sprintf("batch at position %d: offsets %d..%d, max timestamp %d: %s",
			deref(s.Position), deref(s.BaseOffset), deref(s.LastOffset), deref(s.MaxTS), s.Verdict())
	}
	if m, ok := choiceMessage(s); ok {
		return m
	}
	if m, ok := indexMessage(s); ok {
		return m
	}
	return fmt.Sprintf("%s (%s)", s.Step, s.Why) // a step without words yet (TestTraceWordsForEveryWhy)
}

// choiceMessage words the steps that choose a segment, an index entry or
// the answer.
func choiceMessage(s TraceStep) (string, bool) {
	switch s.Why {
	case WhyFloorSegment:
		return fmt.Sprintf("segment %s chosen among %d: the largest base offset <= %d", s.Segment, s.Candidates, s.Target), true
	case WhyNextSegment:
		return fmt.Sprintf("no batch with last offset >= %d in %s: continuing with the next segment %s", s.Target, s.File, s.Segment), true
	case WhyFirstLargestTS:
		return fmt.Sprintf("segment %s chosen (#%d of %d): the first whose largest timestamp %d (%s) >= %d", s.Segment, s.Number, s.Candidates, s.Timestamp, largestFrom(s), s.Target), true
	case WhyGreatestMaxTS:
		return fmt.Sprintf("segment %s chosen: the first with the greatest max timestamp %d (offset %d)", s.Segment, s.Timestamp, s.Offset), true
	case WhyOffsetEntry:
		return fmt.Sprintf("offset index slot %d: offset %d at position %d", deref(s.Slot), s.Offset, s.EntryPos), true
	case WhyTimeEntry:
		return fmt.Sprintf("time index slot %d: timestamp %d first reached by offset %d", deref(s.Slot), s.Timestamp, s.Offset), true
	case WhyAnswer, WhyScanStops:
		if s.Why == WhyScanStops {
			return s.Detail + ": a broker's scan stops silently here", true
		}
		return s.Detail, true
	case WhyLogStartAbove:
		return fmt.Sprintf("log start offset %d, from %s (above the first segment's base offset %d)", s.Offset, s.Source, s.FirstBase), true
	case WhyEarliest:
		return fmt.Sprintf("earliest: the log start offset %d, from %s", s.Offset, s.Source), true
	case WhyLatest:
		return fmt.Sprintf("latest: the log end offset %d, after the last batch of %s", s.Offset, s.File), true
	case WhyNoAnswerBelowStart:
		return fmt.Sprintf("log start offset %d, from %s: no answer below it", s.Offset, s.Source), true
	case WhyTimeIndexKept:
		return fmt.Sprintf("%s has no .timeindex and the broker's next start would not recover it (%s): the broker creates an empty time index", s.Segment, s.KeptBecause), true
	case WhyTimeIndexKeptMax:
		return fmt.Sprintf("%s has no .timeindex and the broker's next start would not recover it (%s): the broker creates an empty time index, so the segment's largest timestamp is unknown", s.Segment, s.KeptBecause), true
	}
	return "", false
}

// indexMessage words the steps about an index as the broker holds it:
// rebuilt, missing, empty, padded, misleading.
func indexMessage(s TraceStep) (string, bool) {
	switch s.Why {
	case WhyUnrebuilt:
		return fmt.Sprintf("%s: %s; searching without it", s.Segment, rebuildWords(s.Rebuild)), true
	case WhyRebuildFailed:
		return fmt.Sprintf("%s: %s, but recovery cannot rebuild it (%s); searching without it", s.Segment, rebuildWords(s.Rebuild), s.Detail), true
	case WhyRebuilt:
		return fmt.Sprintf("%s: %s; searching the %d offset-index and %d time-index entries recovery would write (built in memory, nothing written)",
			s.Segment, rebuildWords(s.Rebuild), s.RebuiltOffsetEntries, s.RebuiltTimeEntries), true
	case WhyNoOffsetIndex:
		return fmt.Sprintf("%s has no offset index: scanning from position 0 (a broker rebuilds a missing index at load)", s.File), true
	case WhyEmptyOffsetIndex:
		return fmt.Sprintf("offset index %s is empty: scanning from position 0", s.File), true
	case WhyNoEntryBelow:
		return fmt.Sprintf("no index entry <= %d: starting at position 0", s.Target), true
	case WhyEntryPastLog:
		return fmt.Sprintf("index entry points past the end of the log (%d bytes): the broker's scan finds nothing here", s.Offset), true
	case WhyOffsetEntryPastLog:
		return "offset index entry points past the end of the log: nothing to scan", true
	case WhyEntryMisleads:
		return s.Detail + ": the broker follows it all the same; a scan of the segment gives the answer the log holds", true
	case WhyTimeIndexTorn:
		return fmt.Sprintf("time index %s is padded or torn: max timestamp recomputed from the log, as broker recovery would", s.File), true
	case WhyNoTimeIndex:
		return fmt.Sprintf("%s has no time index: max timestamp recomputed from the log", s.File), true
	case WhySkipSegment:
		return fmt.Sprintf("segment %s: largest timestamp %d (%s) < %d: skip", s.Segment, s.Timestamp, largestFrom(s), s.Target), true
	case WhyNoTimeEntryBelow:
		return fmt.Sprintf("no time index entry <= %d: starting from the base offset %d", s.Target, s.Offset), true
	case WhyPadding:
		return fmt.Sprintf("%s index %s: slots %d..%d (%d) are zero padding, the preallocated tail of an active segment (or of one a broker left without a clean shutdown): searching the %d entries before it, as the broker that holds the segment does (its entry count excludes the padding) and as one that recovers it does (recovery rebuilds the index)",
			s.Index, s.File, s.Entries, s.Slots-1, s.Slots-s.Entries, s.Entries), true
	case WhyPaddingKept:
		return fmt.Sprintf("%s is padded on a segment the broker's next start would not recover (%s): a broker restarting now would count all %d slots, padding included (KAFKA-10207); kseg verify reports it", s.File, s.KeptBecause, s.Slots), true
	}
	return "", false
}

// Verdict is what a batch step decided, in words: the end of its Message.
func (s TraceStep) Verdict() string {
	switch s.Why {
	case WhyLastOffsetReaches:
		return fmt.Sprintf("last offset %d >= %d: this batch is the answer", deref(s.LastOffset), s.Target)
	case WhyLastOffsetBelow:
		return fmt.Sprintf("last offset %d < %d: skip", deref(s.LastOffset), s.Target)
	case WhyMaxTSBelow:
		return fmt.Sprintf("max timestamp %d < %d: skip", deref(s.MaxTS), s.Target)
	case WhyRecordReaches:
		return fmt.Sprintf("record at offset %d has timestamp %d >= %d: the answer", s.Offset, s.Timestamp, s.Target)
	case WhyNoRecordReaches:
		return fmt.Sprintf("max timestamp %d >= %d but no record qualifies: next batch", deref(s.MaxTS), s.Target)
	case WhyMaxTSOther:
		return fmt.Sprintf("max timestamp %d != %d: skip", deref(s.MaxTS), s.Target)
	case WhyMagic0:
		return "magic 0 has no timestamps: no answer"
	case WhyFirstMaxRecord:
		return fmt.Sprintf("first record with the max timestamp: offset %d", s.Offset)
	}
	return string(s.Why)
}

// largestFrom says where a segment's largest timestamp came from.
func largestFrom(s TraceStep) string {
	if s.ModTime {
		return "no timestamps: .log last-modified time"
	}
	return "max timestamp"
}

// rebuildWords says why recovery rebuilds a segment's indexes.
func rebuildWords(why string) string {
	switch why {
	case RebuildIndexMissing:
		return "its .index is missing: the broker's loader rebuilds the segment's indexes before it serves anything (LogLoader.loadSegmentFiles, recoverSegment)"
	case RebuildTxnIndexBelowBase:
		return "its .txnindex holds an entry below the base offset: the broker's loader rebuilds the segment's indexes before it serves anything (TransactionIndex.sanityCheck, LogLoader.loadSegmentFiles, recoverSegment)"
	}
	return "its .timeindex is missing and the broker's next start recovers the segment, rebuilding its indexes (LogLoader.recoverLog)"
}

// deref is *p, or zero for nil.
func deref[T int | int64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}
