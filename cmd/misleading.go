package cmd

import (
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/record"
)

// warnMisleading says on stderr that an index entry a command followed
// contradicts the batch it leads to (inspect.MisleadingEntry: the file,
// the entry, what is wrong), and what the command did instead.
func warnMisleading(ios *IOStreams, m *inspect.MisleadingEntry, instead string) {
	ios.Warnf("misleading index entry: %s; %s", m, instead)
}

// misleadingIndexJSON is the "misleading_index" object of lookup and
// lookup-time, present when an index entry the broker's answer followed
// contradicts the batch it leads to: the entries, and the answer a scan
// of their segments gives (what the log holds).
type misleadingIndexJSON struct {
	Entries []misleadingEntryJSON `json:"entries"`
	ByScan  *byScanJSON           `json:"by_scan"`
}

// misleadingEntryJSON is one entry: an offset index entry has position,
// a time index entry timestamp.
type misleadingEntryJSON struct {
	File      string `json:"file"`
	Index     string `json:"index"`
	Slot      int    `json:"slot"`
	Timestamp *int64 `json:"timestamp,omitempty"`
	Offset    int64  `json:"offset"`
	Position  *int64 `json:"position,omitempty"`
	Problem   string `json:"problem"`
}

// byScanJSON is the scan's answer, in the shape of the command's own:
// found with where (offset and timestamp for lookup-time), or the reason.
type byScanJSON struct {
	Found             bool       `json:"found"`
	Reason            string     `json:"reason,omitempty"`
	Offset            *int64     `json:"offset,omitempty"`
	Timestamp         *int64     `json:"timestamp,omitempty"`
	Segment           *string    `json:"segment,omitempty"`
	SegmentBaseOffset *int64     `json:"segment_base_offset,omitempty"`
	Batch             *batchJSON `json:"batch,omitempty"`
}

// newMisleadingIndexJSON renders ms and the scan's answer; nil when no
// entry misled. by is the scan's batch (nil: none), in segment base.
func newMisleadingIndexJSON(p *inspect.Partition, ms []inspect.MisleadingEntry, by byScanJSON, batch *record.Batch, base int64) (*misleadingIndexJSON, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	out := &misleadingIndexJSON{ByScan: &by}
	for _, m := range ms {
		e := misleadingEntryJSON{File: m.File, Index: m.Index, Slot: m.Slot, Offset: m.Offset, Problem: m.Problem}
		if m.Index == "time" {
			e.Timestamp = ptr(m.Timestamp)
		} else {
			e.Position = ptr(m.Position)
		}
		out.Entries = append(out.Entries, e)
	}
	if batch != nil {
		d, err := p.Describe(base, *batch)
		if err != nil {
			return nil, err
		}
		by.Batch = newBatchJSON(d)
	}
	return out, nil
}

// warnMisleadingLookup says on stderr, for each entry that misled a
// lookup, that the broker follows it and what a scan finds instead; failed:
// the broker's read fails where they led (no answer is shown).
func warnMisleadingLookup(ios *IOStreams, ms []inspect.MisleadingEntry, scan string, failed bool) {
	broker, where := "a broker follows it all the same (the answer shown); ", " (misleading_index.by_scan)"
	if failed {
		broker, where = "a broker follows it all the same, and its read fails there; ", ""
	}
	for i := range ms {
		warnMisleading(ios, &ms[i], broker+scan+where)
	}
}
