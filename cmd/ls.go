package cmd

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fatih/color"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/listing"
)

type lsOptions struct {
	paths    []string
	segments bool
	deep     bool
}

// AddFlags adds ls's flags to f.
func (o *lsOptions) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.segments, "segments", false, "one row per segment instead of per partition")
	f.BoolVar(&o.deep, "deep", false, "read every batch header: exact batch and record counts, damage anywhere in the log")
}

// lsLong is kseg ls's help.
const lsLong = `List what is under each PATH: one row per partition, or with --segments one
row per segment. The first command to run on an unfamiliar data directory.

It reads little: each .log's first batch and, as a broker finds the end of a
segment (LogSegment.readNextOffset), the batches after the offset index's
last entry; the index files' sizes and their entries up to any zero padding.
Batch and record counts are given when that reading covered the whole log
(no offset index entry to start from), or with --deep, which reads every
batch header of every log (with a progress bar on a terminal). CRCs are not
checked: kseg verify does that.

Status: ok, or a comma-separated list of
  missing-index   a .index or .timeindex is absent (a broker rebuilds a
                  missing .index at load, and creates an empty .timeindex)
  padded-index    an index ends in zero-filled preallocated slots: the
                  active segment of a running broker, or of one that did
                  not shut down cleanly
  bad-index       an index's size is not a multiple of its entry size, or
                  its last entry leads nowhere in the log
  torn-tail       the .log ends inside a batch (recovery cuts it off)
  corrupt-log     an impossible batch header before the end of the .log
  missing-log     an index file named without its .log
  leftover-files  (partition rows) .deleted, .cleaned, .swap or orphaned
                  index files that the broker resolves at load
Run kseg verify PATH for every finding, with its byte position.

The default table shows partition (the directory's name), segments,
offsets (base..last), size, last_timestamp and status, fitted to the
terminal; with --segments, partition, segment (its base offset; a KRaft
snapshot as "snapshot END-EPOCH", a bootstrap.checkpoint as "bootstrap"),
offsets, size, last_timestamp and status. -o wide shows every field below
(counts not read as -), the segment's file name among them.

Partition fields: dir topic partition segments base_offset (the first
segment's) last_offset next_offset (the log end offset) batches records
first_timestamp last_timestamp log_bytes index_entries timeindex_entries
status, and in JSON only, from the files beside the segments:
log_start_offset recovery_point high_watermark (from the data directory's
checkpoints; null when not listed) leader_epoch (the latest in
leader-epoch-checkpoint) producer_snapshots, and metadata_snapshots (the
KRaft snapshots of __cluster_metadata-0, only when it has some).

Segment fields (--segments): dir segment base_offset last_offset
next_offset batches records first_timestamp last_timestamp log_bytes
index_entries index_bytes index_fill timeindex_entries timeindex_bytes
timeindex_fill txnindex_entries status, and snapshot (end_offset, epoch,
bootstrap) on the rows of KRaft metadata snapshots: each
<offset>-<epoch>.checkpoint after its partition's segments, a data
directory's bootstrap.checkpoint after its partitions (read whole: they
have no index). *_fill is trimmed (entries fill the
file), preallocated (zero-filled slots follow the entries) or
trailing-bytes (a partial entry at the end). A field is null (an empty cell)
when it does not apply: no batch, no timestamp (magic 0), an absent file,
counts not read (- in tables). Tables show sizes in IEC units, grouped
counts and RFC 3339 times.

Exit codes: 0 listed (whatever the statuses say); 2 a PATH could not be
read.`

func newLsCommand(ios *IOStreams) *cobra.Command {
	var opts lsOptions
	c := &cobra.Command{
		Use:     "ls PATH...",
		Aliases: []string{"describe"},
		Short:   "List partitions (or segments) with offsets, sizes, indexes and a status",
		Long:    lsLong,
		Example: `  kseg ls /var/lib/kafka/data
  kseg ls --segments data/orders-0
  kseg ls --deep -o json data | jq -c 'select(.status != "ok")'
  kseg describe data/orders-0`,
		Args: cobra.MinimumNArgs(1),
		RunE: pathsRunE(&opts.paths, func() error { return runLs(ios, opts) }),
	}
	opts.AddFlags(c.Flags())
	return c
}

// lsPartitionJSON is the contract's ls line for a partition.
type lsPartitionJSON struct {
	Dir       string  `json:"dir"`
	Topic     *string `json:"topic"`
	Partition *int32  `json:"partition"`
	Segments  int     `json:"segments"`
	lsRange
	IndexEntries      int64  `json:"index_entries"`
	TimeIndexEntries  int64  `json:"timeindex_entries"`
	Status            string `json:"status"`
	LogStartOffset    *int64 `json:"log_start_offset"`
	RecoveryPoint     *int64 `json:"recovery_point"`
	HighWatermark     *int64 `json:"high_watermark"`
	LeaderEpoch       *int32 `json:"leader_epoch"`
	ProducerSnapshots int    `json:"producer_snapshots"`
	// MetadataSnapshots counts the KRaft snapshots of __cluster_metadata-0
	// (ls --segments lists them); absent when there are none.
	MetadataSnapshots int `json:"metadata_snapshots,omitempty"`
}

// lsSegmentJSON is the contract's ls --segments line.
type lsSegmentJSON struct {
	Dir     string `json:"dir"`
	Segment string `json:"segment"`
	lsRange
	IndexEntries     *int    `json:"index_entries"`
	IndexBytes       *int64  `json:"index_bytes"`
	IndexFill        *string `json:"index_fill"`
	TimeIndexEntries *int    `json:"timeindex_entries"`
	TimeIndexBytes   *int64  `json:"timeindex_bytes"`
	TimeIndexFill    *string `json:"timeindex_fill"`
	TxnIndexEntries  *int    `json:"txnindex_entries"`
	Status           string  `json:"status"`
	// Snapshot is the id of a KRaft metadata snapshot's row (its name's
	// end offset and epoch): snapshots are listed after their partition's
	// segments, and a data directory's bootstrap.checkpoint after its
	// partitions.
	Snapshot *snapshotIDJSON `json:"snapshot,omitempty"`
}

// statusStyle colours a status cell: green when ok, yellow for warnings
// only, red (bold) when an error word is in it.
func statusStyle(status string) []color.Attribute {
	if status == inspect.StatusOK {
		return []color.Attribute{color.FgGreen}
	}
	for _, w := range strings.Split(status, ",") {
		if !inspect.StatusWarning(w) {
			return []color.Attribute{color.FgRed, color.Bold}
		}
	}
	return []color.Attribute{color.FgYellow}
}

// fill names how an index's bytes are used; nil when it is absent.
func fill(s inspect.IndexStats) *string {
	var f string
	switch {
	case !s.Present:
		return nil
	case s.Trailing > 0:
		f = "trailing-bytes"
	case s.Padded():
		f = "preallocated"
	default:
		f = "trimmed"
	}
	return &f
}

// orNull is &v, or nil when v is -1 (Kafka's "none").
func orNull(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func segmentLine(p *inspect.Partition, s *inspect.SegmentSummary) lsSegmentJSON {
	out := lsSegmentJSON{
		Dir: p.Dir, Segment: s.Files.Name(),
		lsRange: lsRange{BaseOffset: s.Files.BaseOffset, LastOffset: orNull(s.LastOffset), NextOffset: s.NextOffset,
			FirstTimestamp: orNull(s.FirstTimestamp), LastTimestamp: orNull(s.LastTimestamp), LogBytes: s.LogBytes},
		IndexFill: fill(s.Index), TimeIndexFill: fill(s.TimeIndex),
		Status: s.Status().String(), Snapshot: snapshotID(s.Files.Snapshot),
	}
	if s.Counted {
		out.Batches, out.Records = ptr(s.Batches), ptr(s.Records)
	}
	if s.Index.Present {
		out.IndexEntries, out.IndexBytes = ptr(s.Index.Entries), ptr(s.Index.Bytes)
	}
	if s.TimeIndex.Present {
		out.TimeIndexEntries, out.TimeIndexBytes = ptr(s.TimeIndex.Entries), ptr(s.TimeIndex.Bytes)
	}
	if s.TxnIndex.Present {
		out.TxnIndexEntries = ptr(s.TxnIndex.Entries)
	}
	return out
}

// partitionLine is the contract's line of a partition listing.Line.
func partitionLine(p *inspect.Partition, l *listing.PartitionLine) lsPartitionJSON {
	out := lsPartitionJSON{Dir: p.Dir, Segments: l.Segments,
		lsRange: lsRange{BaseOffset: l.BaseOffset, LastOffset: l.LastOffset, NextOffset: l.NextOffset, Batches: l.Batches, Records: l.Records,
			FirstTimestamp: l.FirstTimestamp, LastTimestamp: l.LastTimestamp, LogBytes: l.LogBytes},
		IndexEntries: l.IndexEntries, TimeIndexEntries: l.TimeIndexEntries, Status: l.Status.String(),
		LogStartOffset: l.LogStartOffset, RecoveryPoint: l.RecoveryPoint, HighWatermark: l.HighWatermark, LeaderEpoch: l.LeaderEpoch,
		ProducerSnapshots: l.ProducerSnapshots, MetadataSnapshots: l.MetadataSnapshots}
	if p.Topic != "" {
		out.Topic, out.Partition = ptr(p.Topic), ptr(p.Partition)
	}
	return out
}

func nullableIntPtr(name string, v func(lsSegmentJSON) *int) column[lsSegmentJSON] {
	return nullableIntColumn(name, v)
}

func textPtrColumn[T any](name string, v func(T) *string) column[T] {
	return textColumn(name, func(t T) string {
		if p := v(t); p != nil {
			return *p
		}
		return ""
	})
}

// The default ls tables show what an operator scans (partition, segments,
// offsets, size, last timestamp, status) and fit the terminal; -o wide and
// CSV show every field, with the counts not read as "-" in wide.

// partitionName is the table's short name of a partition directory: its
// base name (orders-3), the data directory being the same for every row.
func partitionName(dir string) string { return filepath.Base(filepath.Clean(dir)) }

// offsetRange is the offsets a partition or segment holds, base..last, or
// "-" when it holds no batch.
func offsetRange(base int64, last *int64) string {
	if last == nil {
		return "-"
	}
	return strconv.FormatInt(base, 10) + ".." + strconv.FormatInt(*last, 10)
}

// secondsTime is timeText to the second, for the narrow default tables.
func secondsTime(ios *IOStreams, ms *int64) string {
	t := ios.optTimeText(ms)
	if i := strings.IndexByte(t, '.'); i > 0 && len(t) >= i+4 {
		return t[:i] + t[i+4:] // drop ".000"
	}
	return t
}

func countDisplay[T any, N ~int | ~int64](v func(T) *N) func(T, *IOStreams) string {
	return func(t T, _ *IOStreams) string { return optCount(v(t)) }
}

func intCountDisplay[T any, N ~int | ~int64](v func(T) N) func(T, *IOStreams) string {
	return func(t T, _ *IOStreams) string { return groupCount(int64(v(t))) }
}

func sizeDisplay[T any](v func(T) int64) func(T, *IOStreams) string {
	return func(t T, _ *IOStreams) string { return humanSize(v(t)) }
}

func timeDisplay[T any](v func(T) *int64) func(T, *IOStreams) string {
	return func(t T, ios *IOStreams) string { return ios.optTimeText(v(t)) }
}

func statusColumn[T any](v func(T) string) column[T] {
	return column[T]{name: "status", cell: v, fit: fitWrap, style: func(t T) []color.Attribute { return statusStyle(v(t)) }}
}

// lsRange is what a partition's and a segment's ls lines both say, in
// the same fields and order: offsets, counts, times and the size of the
// logs.
type lsRange struct {
	BaseOffset     int64  `json:"base_offset"`
	LastOffset     *int64 `json:"last_offset"`
	NextOffset     int64  `json:"next_offset"`
	Batches        *int64 `json:"batches"`
	Records        *int64 `json:"records"`
	FirstTimestamp *int64 `json:"first_timestamp"`
	LastTimestamp  *int64 `json:"last_timestamp"`
	LogBytes       int64  `json:"log_bytes"`
}

func (r lsRange) ranged() lsRange { return r }

// lsRangeColumns are the columns of lsRange's fields, between the name
// and the index columns of both listings.
func lsRangeColumns[T interface{ ranged() lsRange }]() []column[T] {
	r := func(l T) lsRange { return l.ranged() }
	return []column[T]{
		tableOnly(textColumn("offsets", func(l T) string { return offsetRange(r(l).BaseOffset, r(l).LastOffset) })),
		wideOnly(intColumn("base_offset", func(l T) int64 { return r(l).BaseOffset })),
		wideOnly(nullableIntColumn("last_offset", func(l T) *int64 { return r(l).LastOffset })),
		wideTableOnly(intColumn("next_offset", func(l T) int64 { return r(l).NextOffset })),
		wideOnly(withDisplay(nullableIntColumn("batches", func(l T) *int64 { return r(l).Batches }), countDisplay(func(l T) *int64 { return r(l).Batches }))),
		wideOnly(withDisplay(nullableIntColumn("records", func(l T) *int64 { return r(l).Records }), countDisplay(func(l T) *int64 { return r(l).Records }))),
		wideOnly(withDisplay(nullableIntColumn("first_timestamp", func(l T) *int64 { return r(l).FirstTimestamp }), timeDisplay(func(l T) *int64 { return r(l).FirstTimestamp }))),
		wideOnly(withDisplay(nullableIntColumn("last_timestamp", func(l T) *int64 { return r(l).LastTimestamp }), timeDisplay(func(l T) *int64 { return r(l).LastTimestamp }))),
		tableOnly(withDisplay(intColumn("size", func(l T) int64 { return r(l).LogBytes }), sizeDisplay(func(l T) int64 { return r(l).LogBytes }))),
		tableOnly(column[T]{name: "last_timestamp", display: func(l T, ios *IOStreams) string { return secondsTime(ios, r(l).LastTimestamp) }}),
		wideOnly(withDisplay(intColumn("log_bytes", func(l T) int64 { return r(l).LogBytes }), sizeDisplay(func(l T) int64 { return r(l).LogBytes }))),
	}
}

var lsPartitionColumns = slices.Concat([]column[lsPartitionJSON]{
	withFit(tableOnly(textColumn("partition", func(l lsPartitionJSON) string { return partitionName(l.Dir) })), fitElide),
	wideOnly(textColumn("dir", func(l lsPartitionJSON) string { return l.Dir })),
	wideTableOnly(textPtrColumn("topic", func(l lsPartitionJSON) *string { return l.Topic })),
	wideTableOnly(nullableIntColumn("partition", func(l lsPartitionJSON) *int32 { return l.Partition })),
	withDisplay(intColumn("segments", func(l lsPartitionJSON) int { return l.Segments }), intCountDisplay(func(l lsPartitionJSON) int { return l.Segments })),
}, lsRangeColumns[lsPartitionJSON](), []column[lsPartitionJSON]{
	wideOnly(withDisplay(intColumn("index_entries", func(l lsPartitionJSON) int64 { return l.IndexEntries }), intCountDisplay(func(l lsPartitionJSON) int64 { return l.IndexEntries }))),
	wideOnly(withDisplay(intColumn("timeindex_entries", func(l lsPartitionJSON) int64 { return l.TimeIndexEntries }), intCountDisplay(func(l lsPartitionJSON) int64 { return l.TimeIndexEntries }))),
	statusColumn(func(l lsPartitionJSON) string { return l.Status }),
	wideTableOnly(nullableIntColumn("log_start_offset", func(l lsPartitionJSON) *int64 { return l.LogStartOffset })),
	wideTableOnly(nullableIntColumn("recovery_point", func(l lsPartitionJSON) *int64 { return l.RecoveryPoint })),
	wideTableOnly(nullableIntColumn("high_watermark", func(l lsPartitionJSON) *int64 { return l.HighWatermark })),
	wideTableOnly(nullableIntColumn("leader_epoch", func(l lsPartitionJSON) *int32 { return l.LeaderEpoch })),
	wideTableOnly(intColumn("producer_snapshots", func(l lsPartitionJSON) int { return l.ProducerSnapshots })),
	omitIfEmpty(wideTableOnly(textColumn("metadata_snapshots", func(l lsPartitionJSON) string {
		if l.MetadataSnapshots == 0 {
			return ""
		}
		return strconv.Itoa(l.MetadataSnapshots)
	}))),
})

var lsSegmentColumns = slices.Concat([]column[lsSegmentJSON]{
	withFit(tableOnly(textColumn("partition", func(l lsSegmentJSON) string { return partitionName(l.Dir) })), fitElide),
	tableOnly(textColumn("segment", segmentKey)),
	wideOnly(textColumn("dir", func(l lsSegmentJSON) string { return l.Dir })),
	wideOnly(textColumn("segment", func(l lsSegmentJSON) string { return l.Segment })),
}, lsRangeColumns[lsSegmentJSON](), []column[lsSegmentJSON]{
	wideOnly(withDisplay(nullableIntPtr("index_entries", func(l lsSegmentJSON) *int { return l.IndexEntries }), countDisplay(func(l lsSegmentJSON) *int { return l.IndexEntries }))),
	wideTableOnly(withDisplay(nullableIntColumn("index_bytes", func(l lsSegmentJSON) *int64 { return l.IndexBytes }), optSizeDisplay(func(l lsSegmentJSON) *int64 { return l.IndexBytes }))),
	wideOnly(textPtrColumn("index_fill", func(l lsSegmentJSON) *string { return l.IndexFill })),
	wideOnly(withDisplay(nullableIntPtr("timeindex_entries", func(l lsSegmentJSON) *int { return l.TimeIndexEntries }), countDisplay(func(l lsSegmentJSON) *int { return l.TimeIndexEntries }))),
	wideTableOnly(withDisplay(nullableIntColumn("timeindex_bytes", func(l lsSegmentJSON) *int64 { return l.TimeIndexBytes }), optSizeDisplay(func(l lsSegmentJSON) *int64 { return l.TimeIndexBytes }))),
	wideOnly(textPtrColumn("timeindex_fill", func(l lsSegmentJSON) *string { return l.TimeIndexFill })),
	wideTableOnly(withDisplay(nullableIntPtr("txnindex_entries", func(l lsSegmentJSON) *int { return l.TxnIndexEntries }), countDisplay(func(l lsSegmentJSON) *int { return l.TxnIndexEntries }))),
	statusColumn(func(l lsSegmentJSON) string { return l.Status }),
	omitIfEmpty(wideTableOnly(textColumn("snapshot.end_offset", func(l lsSegmentJSON) string {
		if l.Snapshot == nil {
			return ""
		}
		return strconv.FormatInt(l.Snapshot.EndOffset, 10)
	}))),
	omitIfEmpty(wideTableOnly(textColumn("snapshot.epoch", func(l lsSegmentJSON) string {
		if l.Snapshot == nil {
			return ""
		}
		return strconv.Itoa(int(l.Snapshot.Epoch))
	}))),
})

// segmentKey names a row of ls --segments in the default table, which
// keeps it whole at any width: a segment by its base offset (the number
// of its file's name, as the broker names a LogSegment), a KRaft snapshot
// by the end offset and epoch of its name, a data directory's
// bootstrap.checkpoint as "bootstrap". -o wide shows the file's name.
func segmentKey(l lsSegmentJSON) string {
	switch {
	case l.Snapshot == nil:
		return strconv.FormatInt(l.BaseOffset, 10)
	case l.Snapshot.Bootstrap:
		return "bootstrap"
	default:
		return fmt.Sprintf("snapshot %d-%d", l.Snapshot.EndOffset, l.Snapshot.Epoch)
	}
}

func optSizeDisplay[T any](v func(T) *int64) func(T, *IOStreams) string {
	return func(t T, _ *IOStreams) string {
		if p := v(t); p != nil {
			return humanSize(*p)
		}
		return "-"
	}
}

func runLs(ios *IOStreams, opts lsOptions) error {
	targets, err := resolveTargets(opts.paths)
	if err != nil {
		return err
	}
	for _, t := range targets {
		for _, s := range t.Skipped {
			ios.Warnf("%s: not listed: %s", s.Path, s.Reason)
		}
	}
	// --deep reads every log: one meter over all of them.
	var bar *progressBar
	lopts := listing.Options{Segments: opts.segments, Deep: opts.deep}
	if opts.deep {
		bar = ios.progress("ls --deep")
		defer bar.done()
		lopts.Progress, lopts.Partition = bar.callback(), bar.partition
	}
	var segs *lister[lsSegmentJSON]
	var parts *lister[lsPartitionJSON]
	if opts.segments {
		segs = newLister(ios, lsSegmentColumns)
	} else {
		parts = newLister(ios, lsPartitionColumns)
	}
	res, err := listing.List(targets, lopts, func(e listing.Entry) error {
		if e.Line != nil {
			parts.Add(partitionLine(e.Partition, e.Line))
		}
		for j := range e.Segments {
			segs.Add(segmentLine(e.Partition, &e.Segments[j]))
		}
		return nil
	})
	if err != nil {
		return err
	}
	bar.done()
	footer := lsFooter(ios, opts, targets, res)
	if opts.segments {
		return closeWithFooter(segs, footer)
	}
	return closeWithFooter(parts, footer)
}

// closeWithFooter closes l with the footer lines.
func closeWithFooter[T any](l *lister[T], footer []string) error {
	for _, f := range footer {
		l.Footer("%s", f)
	}
	return l.Close()
}

// lsFooter is what ls says under its table: when the last write happened
// (when the row that says so is not the only one), how each broker's data
// directory says its broker stopped, and in -o wide why counts are "-".
func lsFooter(ios *IOStreams, opts lsOptions, targets []*inspect.Target, res listing.Result) []string {
	var footer []string
	if res.Newest >= 0 && len(targets) > 0 && (len(targets) > 1 || len(targets[0].Partitions) > 1 || opts.segments) {
		footer = append(footer, fmt.Sprintf("newest timestamp: %s (%s), in %s", ios.timeText(res.Newest), ios.ago(res.Newest), res.NewestIn))
	}
	for _, s := range res.Shutdowns {
		if s.Clean {
			footer = append(footer, s.Dir+": the broker shut down cleanly (.kafka_cleanshutdown present)")
		} else {
			footer = append(footer, s.Dir+": no .kafka_cleanshutdown: the broker is running or did not shut down cleanly; at its next start it recovers each partition from its recovery point (kseg verify --recovery-plan)")
		}
	}
	if res.Uncounted && ios.Format() == FormatWide {
		footer = append(footer, "-: batch and record counts not read (ls reads only each segment's tail past its last index entry); kseg ls --deep reads every batch header and counts them")
	}
	return footer
}
