package cmd

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/lookup"
	"github.com/kseg/kseg/inspect/record"
)

type lookupOptions struct {
	path   string
	offset int64
	trace  bool
}

// AddFlags adds lookup's flags to f.
func (o *lookupOptions) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.trace, "trace", false, "show each step: segment chosen, index probes, batches scanned")
}

func newLookupCommand(ios *IOStreams) *cobra.Command {
	var opts lookupOptions
	c := &cobra.Command{
		Use:   "lookup PATH OFFSET",
		Short: "Find the batch a broker returns for a fetch from OFFSET",
		Long: `Resolve OFFSET the way a broker serving a fetch does: pick the segment with
the largest base offset <= OFFSET, binary-search its offset index for the
largest entry <= OFFSET (the broker's warm/cold search, probe for probe), then
scan batch headers from that position to the first batch whose last offset
is >= OFFSET. That batch is the answer, also when OFFSET itself was removed by
compaction (the answer is then the next batch).

Fields: target_offset found segment segment_base_offset index_entry
(slot, offset, position; null when no entry <= OFFSET) batch (base_offset,
last_offset, position, size incl. the 12-byte prefix, magic, max_timestamp,
record_count, compression) scanned_batches scanned_bytes leader_epoch (the
batch's partition leader epoch, -1 for none) epoch_entry (epoch,
start_offset: the leader-epoch-checkpoint entry with the largest start
offset <= OFFSET, i.e. the epoch that wrote it; null without a checkpoint),
misleading_index (only when the index entry the broker followed contradicts
the batch it leads to: the entries, and by_scan, the answer a scan of the
segment gives, which is what the log holds; also said on stderr), and with
--trace the steps taken. The answer is always the broker's.

Exit codes: 0 found; 1 not in the log (below the first segment's base
offset, or at/after the log end offset: {"found":false,"reason":...});
2 could not look (bad PATH, unreadable or corrupt files).`,
		Example: `  kseg lookup data/orders-0 1234
  kseg lookup --trace data/orders-0 1234
  kseg lookup -o json data/orders-0 1234 | jq .batch.position`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			off, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil {
				return usageErrorf("OFFSET must be an integer offset, not %q", args[1])
			}
			opts.path, opts.offset = args[0], off
			return runLookup(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

type indexEntryJSON struct {
	Slot     int   `json:"slot"`
	Offset   int64 `json:"offset"`
	Position int64 `json:"position"`
}

// lookupJSON is the contract's lookup line for a found offset.
type lookupJSON struct {
	TargetOffset      int64           `json:"target_offset"`
	Found             bool            `json:"found"`
	Segment           string          `json:"segment"`
	SegmentBaseOffset int64           `json:"segment_base_offset"`
	IndexEntry        *indexEntryJSON `json:"index_entry"`
	Batch             *batchJSON      `json:"batch"`
	ScannedBatches    int             `json:"scanned_batches"`
	ScannedBytes      int64           `json:"scanned_bytes"`
	// The leader-epoch view (epoch_view.go): the batch's partition leader
	// epoch (-1: none) and the leader-epoch-checkpoint entry of the offset.
	LeaderEpoch     int32                `json:"leader_epoch"`
	EpochEntry      *epochEntryJSON      `json:"epoch_entry"`
	MisleadingIndex *misleadingIndexJSON `json:"misleading_index,omitempty"`
	Trace           []traceStepJSON      `json:"trace,omitempty"`
}

// offsetNotFoundJSON is the contract's line for an offset not in the log.
type offsetNotFoundJSON struct {
	TargetOffset    int64                `json:"target_offset"`
	Found           bool                 `json:"found"`
	Reason          string               `json:"reason"`
	MisleadingIndex *misleadingIndexJSON `json:"misleading_index,omitempty"`
	Trace           []traceStepJSON      `json:"trace,omitempty"`
}

func runLookup(ios *IOStreams, opts lookupOptions) error {
	p, err := resolvePartition(opts.path)
	if err != nil {
		return err
	}
	res, err := lookup.Offset(p, opts.offset, lookup.Options{Trace: opts.trace})
	var me *inspect.MisledError
	if errors.As(err, &me) {
		// The broker's fetch fails on the damage the entries led it to.
		if _, jerr := offsetMisleadingJSON(ios, p, opts.offset, me.Misleading, me.ByScanOffset, true); jerr != nil {
			return jerr
		}
	}
	if err != nil {
		return err
	}
	misleading, err := offsetMisleadingJSON(ios, p, opts.offset, res.Misleading, res.ByScan, false)
	if err != nil {
		return err
	}
	if !res.Found {
		out := offsetNotFoundJSON{res.TargetOffset, false, res.Reason, misleading, traceJSON(res.Trace)}
		story := traceStory(ios, fmt.Sprintf("how a broker serves a fetch from offset %d", opts.offset), p, res.Trace, offsetTarget(opts.offset), "")
		if err := printObjectLines(ios, out, offsetNotFoundColumns, story); err != nil {
			return err
		}
		return errNegative(res.Reason)
	}
	d, err := p.Describe(res.SegmentBaseOffset, res.Batch)
	if err != nil {
		return err
	}
	out := lookupJSON{TargetOffset: res.TargetOffset, Found: true, Segment: res.Segment, SegmentBaseOffset: res.SegmentBaseOffset,
		Batch: newBatchJSON(d), ScannedBatches: res.ScannedBatches, ScannedBytes: res.ScannedBytes, MisleadingIndex: misleading, Trace: traceJSON(res.Trace)}
	if e := res.IndexEntry; e != nil {
		out.IndexEntry = &indexEntryJSON{e.Slot, e.Offset, e.Position}
	}
	// The epoch that wrote the offset: the batch's, and the checkpoint's
	// entry for the offset (the batch's first offset when compaction
	// removed the target).
	out.LeaderEpoch = d.Batch.PartitionLeaderEpoch
	out.EpochEntry = newEpochView(ios, p).entry(max(opts.offset, d.FirstOffset))
	conclusion := fmt.Sprintf("a fetch from offset %d reads %s from byte position %d: the batch of offsets %d..%d (%d bytes), found in %s (%d bytes) of headers",
		opts.offset, res.Segment, res.Batch.Position, d.FirstOffset, res.Batch.LastOffset, res.Batch.Size, count(res.ScannedBatches, "batch"), res.ScannedBytes)
	story := traceStory(ios, fmt.Sprintf("how a broker serves a fetch from offset %d", opts.offset), p, res.Trace, offsetTarget(opts.offset), conclusion)
	return printObjectLines(ios, out, lookupColumns, story)
}

// offsetMisleadingJSON is lookup's misleading_index for the entries ms
// that misled a lookup of target and by, the answer by scanning (nil when
// no entry misled), said on stderr too (failed: the broker's fetch failed
// where they led).
func offsetMisleadingJSON(ios *IOStreams, p *inspect.Partition, target int64, ms []inspect.MisleadingEntry, by *inspect.OffsetLookup, failed bool) (*misleadingIndexJSON, error) {
	if by == nil {
		return nil, nil
	}
	out := byScanJSON{Found: by.Found, Reason: by.Reason}
	scan := "a scan of the log finds no batch either: " + by.Reason
	var batch *record.Batch
	if by.Found {
		out.Segment, out.SegmentBaseOffset, batch = &by.Segment, &by.SegmentBaseOffset, &by.Batch
		scan = fmt.Sprintf("a scan of the segment finds offset %d in the batch at position %d of %s (offsets up to %d)", target, by.Batch.Position, by.Segment, by.Batch.LastOffset)
	}
	warnMisleadingLookup(ios, ms, scan, failed)
	return newMisleadingIndexJSON(p, ms, out, batch, by.SegmentBaseOffset)
}

var offsetNotFoundColumns = []column[offsetNotFoundJSON]{
	intColumn("target_offset", func(l offsetNotFoundJSON) int64 { return l.TargetOffset }),
	withStyle(boolColumn("found", func(l offsetNotFoundJSON) bool { return l.Found }), notFoundStyle[offsetNotFoundJSON]),
	textColumn("reason", func(l offsetNotFoundJSON) string { return l.Reason }),
}

var lookupColumns = func() []column[lookupJSON] {
	cols := []column[lookupJSON]{
		intColumn("target_offset", func(l lookupJSON) int64 { return l.TargetOffset }),
		boolColumn("found", func(l lookupJSON) bool { return l.Found }),
		textColumn("segment", func(l lookupJSON) string { return l.Segment }),
		intColumn("segment_base_offset", func(l lookupJSON) int64 { return l.SegmentBaseOffset }),
		nullableIntColumn("index_entry.slot", func(l lookupJSON) *int {
			if l.IndexEntry == nil {
				return nil
			}
			return &l.IndexEntry.Slot
		}),
		nullableIntColumn("index_entry.offset", func(l lookupJSON) *int64 {
			if l.IndexEntry == nil {
				return nil
			}
			return &l.IndexEntry.Offset
		}),
		nullableIntColumn("index_entry.position", func(l lookupJSON) *int64 {
			if l.IndexEntry == nil {
				return nil
			}
			return &l.IndexEntry.Position
		}),
	}
	cols = append(cols, batchColumns(func(l lookupJSON) *batchJSON { return l.Batch })...)
	cols = append(cols,
		intColumn("scanned_batches", func(l lookupJSON) int { return l.ScannedBatches }),
		intColumn("scanned_bytes", func(l lookupJSON) int64 { return l.ScannedBytes }),
	)
	return append(cols, epochColumns(func(l lookupJSON) int32 { return l.LeaderEpoch }, func(l lookupJSON) *epochEntryJSON { return l.EpochEntry })...)
}()

// batchColumns are the batch object's fields, dotted, for table and CSV.
func batchColumns[T any](get func(T) *batchJSON) []column[T] {
	timeCol := func(c column[T]) column[T] {
		c.human = func(t T) string {
			if b := get(t); b != nil {
				return humanTime(b.MaxTimestamp)
			}
			return ""
		}
		return c
	}
	f := func(name string, v func(*batchJSON) int64) column[T] {
		return nullableIntColumn(name, func(t T) *int64 {
			b := get(t)
			if b == nil {
				return nil
			}
			x := v(b)
			return &x
		})
	}
	return []column[T]{
		f("batch.base_offset", func(b *batchJSON) int64 { return b.BaseOffset }),
		f("batch.last_offset", func(b *batchJSON) int64 { return b.LastOffset }),
		f("batch.position", func(b *batchJSON) int64 { return b.Position }),
		f("batch.size", func(b *batchJSON) int64 { return b.Size }),
		f("batch.magic", func(b *batchJSON) int64 { return int64(b.Magic) }),
		timeCol(f("batch.max_timestamp", func(b *batchJSON) int64 { return b.MaxTimestamp })),
		f("batch.record_count", func(b *batchJSON) int64 { return b.RecordCount }),
		textColumn("batch.compression", func(t T) string {
			if b := get(t); b != nil {
				return b.Compression
			}
			return ""
		}),
	}
}
