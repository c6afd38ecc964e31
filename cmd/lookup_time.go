package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/lookup"
)

type lookupTimeOptions struct {
	path      string
	timestamp int64
	trace     bool
}

// AddFlags adds lookup-time's flags to f.
func (o *lookupTimeOptions) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.trace, "trace", false, "show each step: segments considered, index probes, batches scanned")
}

func newLookupTimeCommand(ios *IOStreams) *cobra.Command {
	var opts lookupTimeOptions
	c := &cobra.Command{
		Use:   "lookup-time PATH TIMESTAMP",
		Short: "Answer ListOffsets / offsetsForTimes() for TIMESTAMP as a broker does",
		Long: `Answer what a broker answers to ListOffsets (offsetsForTimes()) for
TIMESTAMP: milliseconds since the epoch, an RFC 3339 time
(2024-05-01T12:00:00Z), a date or a date and time in UTC (2024-05-01,
2024-05-01T12:00, 2024-05-01 12:00:00), a time relative to now (-1h, -30m,
-2d, -1w, -1h30m; also now, now-1h), or one of earliest, latest, max.
A relative time may be given as is: "kseg lookup-time data/orders-0 -1h".

A timestamp is searched as UnifiedLog.fetchOffsetByTimestamp does: the first
segment whose largest timestamp is >= TIMESTAMP, then in that segment only
the time index, the offset index and a scan to the first record whose
timestamp is >= TIMESTAMP (a LogAppendTime batch's records all carry the
batch's timestamp). earliest is the log start offset, latest the log end
offset (both with timestamp -1), max the first record carrying the
partition's largest timestamp (Kafka 3.8+).

Fields: target_timestamp (-2 earliest, -1 latest, -3 max) found offset
timestamp segment segment_base_offset timeindex_entry (slot, timestamp,
offset; null when none was used) batch (as in lookup; null for latest)
leader_epoch (the batch's partition leader epoch; -1 for none or latest)
epoch_entry (epoch, start_offset: the leader-epoch-checkpoint entry covering
the answer's offset; null without a checkpoint), misleading_index (only when
an index entry of the segment searched contradicts the batch it leads to:
the entries, and by_scan, the answer a scan of the segment gives, which is
what the log holds; also said on stderr), and with --trace the steps. The
answer is always the broker's.

Exit codes: 0 found; 1 no record with a timestamp >= TIMESTAMP
({"found":false,"reason":...}); 2 could not look.`,
		Example: `  kseg lookup-time data/orders-0 1700000000000
  kseg lookup-time --trace data/orders-0 2023-11-14T22:13:20Z
  kseg lookup-time data/orders-0 -1h
  kseg lookup-time data/orders-0 2024-05-01
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
	opts.AddFlags(c.Flags())
	return c
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
	// The leader-epoch view (epoch_view.go): the batch's partition leader
	// epoch (-1: none, e.g. latest) and the leader-epoch-checkpoint entry
	// of the offset.
	LeaderEpoch     int32                `json:"leader_epoch"`
	EpochEntry      *epochEntryJSON      `json:"epoch_entry"`
	MisleadingIndex *misleadingIndexJSON `json:"misleading_index,omitempty"`
	Trace           []traceStepJSON      `json:"trace,omitempty"`
}

type timeNotFoundJSON struct {
	TargetTimestamp int64                `json:"target_timestamp"`
	Found           bool                 `json:"found"`
	Reason          string               `json:"reason"`
	MisleadingIndex *misleadingIndexJSON `json:"misleading_index,omitempty"`
	Trace           []traceStepJSON      `json:"trace,omitempty"`
}

func runLookupTime(ios *IOStreams, opts lookupTimeOptions) error {
	p, err := resolvePartition(opts.path)
	if err != nil {
		return err
	}
	res, err := lookup.Time(p, opts.timestamp, lookup.Options{Trace: opts.trace})
	var me *inspect.MisledError
	if errors.As(err, &me) {
		// The broker's search fails on the damage the entries led it to.
		if _, jerr := timeMisleadingJSON(ios, p, me.Misleading, me.ByScanTime, true); jerr != nil {
			return jerr
		}
	}
	if err != nil {
		return err
	}
	misleading, err := timeMisleadingJSON(ios, p, res.Misleading, res.ByScan, false)
	if err != nil {
		return err
	}
	if !res.Found {
		out := timeNotFoundJSON{res.TargetTimestamp, false, res.Reason, misleading, traceJSON(res.Trace)}
		if err := printObjectLines(ios, out, timeNotFoundColumns, traceStory(ios, timeTraceTitle(opts.timestamp), p, res.Trace, timeTarget(opts.timestamp), "")); err != nil {
			return err
		}
		return errNegative(res.Reason)
	}
	out := lookupTimeJSON{TargetTimestamp: res.TargetTimestamp, Found: true, Offset: res.Offset, Timestamp: res.Timestamp,
		Segment: res.Segment, SegmentBaseOffset: res.SegmentBaseOffset, MisleadingIndex: misleading, Trace: traceJSON(res.Trace)}
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
	// ListOffsets answers carry the leader epoch: the batch's for a
	// timestamp or max, and the epoch that covers the offset (for latest,
	// the current epoch at the log end).
	out.LeaderEpoch = -1
	if res.Batch != nil {
		out.LeaderEpoch = res.Batch.PartitionLeaderEpoch
	}
	out.EpochEntry = newEpochView(ios, p).entry(res.Offset)
	conclusion := fmt.Sprintf("ListOffsets answers offset %d (timestamp %d) from %s", res.Offset, res.Timestamp, res.Segment)
	return printObjectLines(ios, out, lookupTimeColumns, traceStory(ios, timeTraceTitle(opts.timestamp), p, res.Trace, timeTarget(opts.timestamp), conclusion))
}

// timeMisleadingJSON is lookup-time's misleading_index for the entries ms
// that misled it and by, the answer by scanning (nil when no entry
// misled), said on stderr too (failed: the broker's search failed where
// they led).
func timeMisleadingJSON(ios *IOStreams, p *inspect.Partition, ms []inspect.MisleadingEntry, by *inspect.TimeLookup, failed bool) (*misleadingIndexJSON, error) {
	if by == nil {
		return nil, nil
	}
	out := byScanJSON{Found: by.Found, Reason: by.Reason}
	scan := "a scan of the log finds no record either: " + by.Reason
	if by.Found {
		out.Offset, out.Timestamp, out.Segment, out.SegmentBaseOffset = &by.Offset, &by.Timestamp, &by.Segment, &by.SegmentBaseOffset
		scan = fmt.Sprintf("a scan of the segment answers offset %d (timestamp %d) in %s", by.Offset, by.Timestamp, by.Segment)
	}
	warnMisleadingLookup(ios, ms, scan, failed)
	return newMisleadingIndexJSON(p, ms, out, by.Batch, by.SegmentBaseOffset)
}

// timeTraceTitle heads the --trace story of a time lookup.
func timeTraceTitle(ts int64) string {
	switch ts {
	case inspect.TimestampEarliest:
		return "how a broker answers ListOffsets for earliest"
	case inspect.TimestampLatest:
		return "how a broker answers ListOffsets for latest"
	case inspect.TimestampMax:
		return "how a broker answers ListOffsets for max (the largest timestamp)"
	}
	if h := humanTime(ts); h != "" {
		return fmt.Sprintf("how a broker answers ListOffsets (offsetsForTimes) for timestamp %d (%s)", ts, h)
	}
	return fmt.Sprintf("how a broker answers ListOffsets (offsetsForTimes) for timestamp %d", ts)
}

var timeNotFoundColumns = []column[timeNotFoundJSON]{
	targetTimestampColumn(func(l timeNotFoundJSON) int64 { return l.TargetTimestamp }),
	withStyle(boolColumn("found", func(l timeNotFoundJSON) bool { return l.Found }), notFoundStyle[timeNotFoundJSON]),
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
		targetTimestampColumn(func(l lookupTimeJSON) int64 { return l.TargetTimestamp }),
		boolColumn("found", func(l lookupTimeJSON) bool { return l.Found }),
		intColumn("offset", func(l lookupTimeJSON) int64 { return l.Offset }),
		timestampColumn("timestamp", func(l lookupTimeJSON) int64 { return l.Timestamp }),
		textColumn("segment", func(l lookupTimeJSON) string { return l.Segment }),
		intColumn("segment_base_offset", func(l lookupTimeJSON) int64 { return l.SegmentBaseOffset }),
		entry("timeindex_entry.slot", func(e *timeIndexEntryJSON) int64 { return int64(e.Slot) }),
		withHuman(entry("timeindex_entry.timestamp", func(e *timeIndexEntryJSON) int64 { return e.Timestamp }), func(l lookupTimeJSON) string {
			if l.TimeIndexEntry == nil {
				return ""
			}
			return humanTime(l.TimeIndexEntry.Timestamp)
		}),
		entry("timeindex_entry.offset", func(e *timeIndexEntryJSON) int64 { return e.Offset }),
	}
	cols = append(cols, batchColumns(func(l lookupTimeJSON) *batchJSON { return l.Batch })...)
	return append(cols, epochColumns(func(l lookupTimeJSON) int32 { return l.LeaderEpoch }, func(l lookupTimeJSON) *epochEntryJSON { return l.EpochEntry })...)
}()

// targetTimestampColumn shows the target with its time, or the name of a
// special target (-2 earliest, -1 latest, -3 max) in the table.
func targetTimestampColumn[T any](value func(T) int64) column[T] {
	c := intColumn("target_timestamp", value)
	c.human = func(v T) string {
		switch ts := value(v); ts {
		case inspect.TimestampEarliest:
			return "earliest"
		case inspect.TimestampLatest:
			return "latest"
		case inspect.TimestampMax:
			return "max"
		default:
			return humanTime(ts)
		}
	}
	return c
}

// withHuman sets a column's table reading aid.
func withHuman[T any](c column[T], human func(T) string) column[T] {
	c.human = human
	return c
}
