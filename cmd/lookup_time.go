package cmd

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/inspect"
)

type lookupTimeOptions struct {
	path      string
	timestamp int64
	trace     bool
}

func newLookupTimeCommand(ios *IOStreams) *cobra.Command {
	var opts lookupTimeOptions
	c := &cobra.Command{
		Use:   "lookup-time PATH TIMESTAMP",
		Short: "Answer ListOffsets / offsetsForTimes() for TIMESTAMP as a broker does",
		Long: `Answer what a broker answers to ListOffsets (offsetsForTimes()) for
TIMESTAMP: milliseconds since the epoch, an RFC 3339 time
(2024-05-01T12:00:00Z), or one of earliest, latest, max.

A timestamp is searched as UnifiedLog.fetchOffsetByTimestamp does: the first
segment whose largest timestamp is >= TIMESTAMP, then in that segment only
the time index, the offset index and a scan to the first record whose
timestamp is >= TIMESTAMP (a LogAppendTime batch's records all carry the
batch's timestamp). earliest is the log start offset, latest the log end
offset (both with timestamp -1), max the first record carrying the
partition's largest timestamp (Kafka 3.8+).

Fields: target_timestamp (-2 earliest, -1 latest, -3 max) found offset
timestamp segment segment_base_offset timeindex_entry (slot, timestamp,
offset; null when none was used) batch (as in lookup; null for latest), and
with --trace the steps.

Exit codes: 0 found; 1 no record with a timestamp >= TIMESTAMP
({"found":false,"reason":...}); 2 could not look.`,
		Example: `  kseg lookup-time data/orders-0 1700000000000
  kseg lookup-time --trace data/orders-0 2023-11-14T22:13:20Z
  kseg lookup-time -o json data/orders-0 max | jq .offset`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			ts, err := parseTimestamp(args[1])
			if err != nil {
				return err
			}
			opts.path, opts.timestamp = args[0], ts
			return runLookupTime(ios, opts)
		},
	}
	c.Flags().BoolVar(&opts.trace, "trace", false, "show each step: segments considered, index probes, batches scanned")
	return c
}

// parseTimestamp reads a TIMESTAMP argument.
func parseTimestamp(s string) (int64, error) {
	switch strings.ToLower(s) {
	case "earliest":
		return inspect.TimestampEarliest, nil
	case "latest":
		return inspect.TimestampLatest, nil
	case "max":
		return inspect.TimestampMax, nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 {
			return 0, usageErrorf("TIMESTAMP must be >= 0 milliseconds (use earliest, latest or max for the special values), not %d", v)
		}
		return v, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		ms := t.UnixMilli()
		if ms < 0 {
			return 0, usageErrorf("TIMESTAMP %q is before 1970", s)
		}
		return ms, nil
	}
	return 0, usageErrorf("TIMESTAMP must be milliseconds since the epoch, an RFC 3339 time, earliest, latest or max, not %q", s)
}

type timeIndexEntryJSON struct {
	Slot      int   `json:"slot"`
	Timestamp int64 `json:"timestamp"`
	Offset    int64 `json:"offset"`
}

// lookupTimeJSON is the contract's lookup-time line for a found answer.
type lookupTimeJSON struct {
	TargetTimestamp   int64               `json:"target_timestamp"`
	Found             bool                `json:"found"`
	Offset            int64               `json:"offset"`
	Timestamp         int64               `json:"timestamp"`
	Segment           string              `json:"segment"`
	SegmentBaseOffset int64               `json:"segment_base_offset"`
	TimeIndexEntry    *timeIndexEntryJSON `json:"timeindex_entry"`
	Batch             *batchJSON          `json:"batch"`
	Trace             []inspect.TraceStep `json:"trace,omitempty"`
}

type timeNotFoundJSON struct {
	TargetTimestamp int64               `json:"target_timestamp"`
	Found           bool                `json:"found"`
	Reason          string              `json:"reason"`
	Trace           []inspect.TraceStep `json:"trace,omitempty"`
}

func runLookupTime(ios *IOStreams, opts lookupTimeOptions) error {
	p, err := resolvePartition(opts.path)
	if err != nil {
		return err
	}
	res, err := p.LookupTime(opts.timestamp, inspect.LookupOptions{Trace: opts.trace})
	if err != nil {
		return err
	}
	if !res.Found {
		out := timeNotFoundJSON{res.TargetTimestamp, false, res.Reason, res.Trace}
		if err := printObject(ios, out, timeNotFoundColumns, traceFooter(ios, out.Trace)...); err != nil {
			return err
		}
		return errNegative(res.Reason)
	}
	out := lookupTimeJSON{TargetTimestamp: res.TargetTimestamp, Found: true, Offset: res.Offset, Timestamp: res.Timestamp,
		Segment: res.Segment, SegmentBaseOffset: res.SegmentBaseOffset, Trace: res.Trace}
	if e := res.TimeIndexEntry; e != nil {
		out.TimeIndexEntry = &timeIndexEntryJSON{e.Slot, e.Timestamp, e.Offset}
	}
	if res.Batch != nil {
		d, err := p.Describe(res.SegmentBaseOffset, *res.Batch)
		if err != nil {
			return err
		}
		out.Batch = newBatchJSON(d)
	}
	return printObject(ios, out, lookupTimeColumns, traceFooter(ios, out.Trace)...)
}

var timeNotFoundColumns = []column[timeNotFoundJSON]{
	intColumn("target_timestamp", func(l timeNotFoundJSON) int64 { return l.TargetTimestamp }),
	boolColumn("found", func(l timeNotFoundJSON) bool { return l.Found }),
	textColumn("reason", func(l timeNotFoundJSON) string { return l.Reason }),
}

var lookupTimeColumns = func() []column[lookupTimeJSON] {
	entry := func(name string, v func(*timeIndexEntryJSON) int64) column[lookupTimeJSON] {
		return nullableIntColumn(name, func(l lookupTimeJSON) *int64 {
			if l.TimeIndexEntry == nil {
				return nil
			}
			x := v(l.TimeIndexEntry)
			return &x
		})
	}
	cols := []column[lookupTimeJSON]{
		intColumn("target_timestamp", func(l lookupTimeJSON) int64 { return l.TargetTimestamp }),
		boolColumn("found", func(l lookupTimeJSON) bool { return l.Found }),
		intColumn("offset", func(l lookupTimeJSON) int64 { return l.Offset }),
		intColumn("timestamp", func(l lookupTimeJSON) int64 { return l.Timestamp }),
		textColumn("segment", func(l lookupTimeJSON) string { return l.Segment }),
		intColumn("segment_base_offset", func(l lookupTimeJSON) int64 { return l.SegmentBaseOffset }),
		entry("timeindex_entry.slot", func(e *timeIndexEntryJSON) int64 { return int64(e.Slot) }),
		entry("timeindex_entry.timestamp", func(e *timeIndexEntryJSON) int64 { return e.Timestamp }),
		entry("timeindex_entry.offset", func(e *timeIndexEntryJSON) int64 { return e.Offset }),
	}
	return append(cols, batchColumns(func(l lookupTimeJSON) *batchJSON { return l.Batch })...)
}()
